"""The visibility rule compiled for PostgreSQL (storage/postgres/visibility.py) selects exactly the
rows its Python twin `Area.covers` accepts, on the real `entries` table, for look-alike namespaces
(case variants, LIKE wildcards, characters around '/')."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from agent_memory.core.access.visibility import Area
from agent_memory.core.model.models import Scope
from tests.postgres import PostgresForTests
from tests.storage.test_visibility import names, namespace, read_lists, scopes

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

from agent_memory.storage.postgres.database import PostgresDatabase  # noqa: E402 - after the driver check
from agent_memory.storage.postgres.migrations import migrate  # noqa: E402
from agent_memory.storage.postgres.visibility import area_clause  # noqa: E402

INSERT = ("INSERT INTO entries (id, scope, namespace, owner_agent_id, team, content, priority, source, confidence, "
          "layer, created_at, updated_at, version, etag) "
          "VALUES (%s, %s, %s, %s, %s, '', 'low', 'manual', 1, 'working', '', '', 1, '')")


@pytest.fixture(scope="module")
def conn(postgres_server: PostgresForTests) -> Iterator[psycopg.Connection]:
    url = postgres_server.create_database()

    async def prepare() -> None:
        db = PostgresDatabase(url, pool_size=1)
        await db.open()
        try:
            await migrate(db)
        finally:
            await db.close()

    anyio.run(prepare)
    try:
        with psycopg.connect(url, autocommit=True) as connection:
            yield connection
    finally:
        postgres_server.drop_database(url)


def _select(conn: psycopg.Connection, areas: list[Area]) -> list[tuple[str, str, str, str]]:
    clause, params = area_clause(areas)
    return sorted(conn.execute(f"SELECT scope, namespace, owner_agent_id, team FROM entries WHERE {clause}",
                               params).fetchall())


@settings(max_examples=300, deadline=None, derandomize=True)
@given(area_scope=st.one_of(st.none(), scopes), root=st.one_of(st.none(), names, namespace), subtree=st.booleans(),
       owner=st.one_of(st.none(), names), team=st.one_of(st.none(), names),
       rows=st.lists(st.tuples(scopes, st.one_of(names, namespace, names.map(lambda n: n + "/ops")), names, names),
                     min_size=1, max_size=12))
def test_the_sql_matches_exactly_the_rows_the_area_covers(conn, area_scope, root, subtree, owner, team, rows) -> None:  # type: ignore[no-untyped-def]
    conn.execute("DELETE FROM entries")
    with conn.cursor() as cursor:
        cursor.executemany(INSERT, [(f"e{n}", s.value, ns, o, t) for n, (s, ns, o, t) in enumerate(rows)])
    area = Area(area_scope, root, subtree=subtree, owner=owner, team=team)
    want = sorted((s.value, n, o, t) for s, n, o, t in rows if area.covers(s, n, o, t))
    assert _select(conn, [area]) == want


def test_no_areas_select_nothing_and_several_select_their_union(conn: psycopg.Connection) -> None:
    conn.execute("DELETE FROM entries")
    conn.execute(INSERT, ("a", "team", "red", "x", "red"))
    conn.execute(INSERT, ("b", "team", "red2", "x", "red2"))
    conn.execute(INSERT, ("c", "agent", "alice", "alice", "blue"))
    assert _select(conn, []) == []
    both = _select(conn, [Area(Scope.TEAM, "red", subtree=True), Area(Scope.AGENT, "alice", owner="alice",
                                                                      team="blue")])
    assert both == [("agent", "alice", "alice", "blue"), ("team", "red", "x", "red")]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(reader=names, owner=st.one_of(st.none(), names),
       rows=st.lists(st.tuples(scopes, names, names, names, read_lists), min_size=1, max_size=12))
def test_the_read_list_sql_matches_its_python_twin(conn, reader, owner, rows) -> None:  # type: ignore[no-untyped-def]
    conn.execute("DELETE FROM entries")
    with conn.cursor() as cursor:
        cursor.executemany(INSERT.replace("etag)", "etag, read_agents)").replace("'')", "'', %s)"),
                           [(f"e{n}", s.value, ns, o, t, list(r) or None) for n, (s, ns, o, t, r) in enumerate(rows)])
    area = Area(None, owner=owner, reader=reader)
    want = sorted((s.value, n, o, t) for s, n, o, t, r in rows if area.covers(s, n, o, t, r))
    assert _select(conn, [area]) == want
