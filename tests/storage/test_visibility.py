"""The visibility rule: its SQL (the one compiler) and its Python twin agree on every namespace,
case-exactly and literally; and it agrees with the per-item permission gate."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from hypothesis import given, settings, strategies as st

from agent_memory.core.access import permissions
from agent_memory.core.access.visibility import Area, readable_areas
from agent_memory.core.model.models import Access, Caller, Scope, SystemType
from agent_memory.storage.sqlite.visibility import area_clause

SERVER = Path(__file__).resolve().parents[2] / "server" / "agent_memory"
# Look-alike material: case variants, LIKE wildcards, separators and characters around '/' in ASCII.
segment = st.text(alphabet="rRedD_%.-0/\\", min_size=1, max_size=6).filter(lambda s: "//" not in s)
namespace = st.builds(lambda a, b: f"{a}/{b}" if b else a, segment.map(lambda s: s.strip("/") or "r"),
                      st.one_of(st.just(""), segment.map(lambda s: s.strip("/"))))
names = st.sampled_from(["red", "RED", "r_d", "r%d", "redteam", "red.x", "re", "alice", "ALICE", "al_ce"])
scopes = st.sampled_from(list(Scope))


def _table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE entries (scope TEXT, namespace TEXT, owner_agent_id TEXT, team TEXT)")
    conn.execute("CREATE INDEX by_ns ON entries (scope, namespace)")
    return conn


@settings(max_examples=300, deadline=None, derandomize=True)
@given(area_scope=st.one_of(st.none(), scopes), root=st.one_of(st.none(), names, namespace), subtree=st.booleans(),
       owner=st.one_of(st.none(), names), team=st.one_of(st.none(), names),
       rows=st.lists(st.tuples(scopes, st.one_of(names, namespace, names.map(lambda n: n + "/ops")), names, names),
                     min_size=1, max_size=12))
def test_the_sql_matches_exactly_the_rows_the_area_covers(area_scope, root, subtree, owner, team, rows) -> None:  # type: ignore[no-untyped-def]
    conn = _table()
    conn.executemany("INSERT INTO entries VALUES (?, ?, ?, ?)", [(s.value, n, o, t) for s, n, o, t in rows])
    area = Area(area_scope, root, subtree=subtree, owner=owner, team=team)
    clause, params = area_clause([area])
    got = sorted(conn.execute(f"SELECT scope, namespace, owner_agent_id, team FROM entries WHERE {clause}", params))
    want = sorted((s.value, n, o, t) for s, n, o, t in rows if area.covers(s, n, o, t))
    assert got == want


def test_lookalikes_by_hand() -> None:
    conn = _table()
    stored = ["red", "red/ops", "RED", "RED/ops", "Red/ops", "r_d/ops", "r%d/ops", "redteam", "redteam/ops",
              "red_ops", "red.x", "red0", "red-", "re/ops"]
    conn.executemany("INSERT INTO entries VALUES ('team', ?, 'x', 'x')", [(n,) for n in stored])
    for root, expected in (("red", {"red", "red/ops"}), ("RED", {"RED", "RED/ops"}), ("r_d", {"r_d/ops"}),
                           ("r%d", {"r%d/ops"}), ("re", {"re/ops"})):
        clause, params = area_clause([Area(Scope.TEAM, root, subtree=True)])
        assert {r[0] for r in conn.execute(f"SELECT namespace FROM entries WHERE {clause}", params)} == expected


@settings(max_examples=300, deadline=None, derandomize=True)
@given(agent=names, team=names, system=st.sampled_from(list(SystemType)), scope=scopes, ns=st.one_of(names, namespace),
       owner=names, entry_team=names)
def test_readable_areas_agree_with_the_permission_gate(agent, team, system, scope, ns, owner, entry_team) -> None:  # type: ignore[no-untyped-def]
    caller = Caller(agent, system, team)
    by_areas = any(a.covers(scope, ns, owner, entry_team) for a in readable_areas(caller))
    is_agent = scope is Scope.AGENT
    by_gate = permissions.is_allowed(caller, Access.READ, scope, ns, owner_agent_id=owner if is_agent else None,
                                     entry_team=entry_team if is_agent else None)
    # The gate does not look at a team-scope entry's recorded team: the namespace decides.
    assert by_areas == by_gate


def test_no_sql_in_the_server_matches_namespaces_with_like_or_glob() -> None:
    offenders = [f"{path.relative_to(SERVER)}:{n}" for path in SERVER.rglob("*.py")
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if re.search(r"\b(LIKE|GLOB)\s+[?']", line)]
    assert offenders == []


read_lists = st.one_of(st.just(()), st.lists(names, min_size=1, max_size=3, unique=True).map(tuple))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(reader=names, owner=st.one_of(st.none(), names),
       rows=st.lists(st.tuples(scopes, names, names, names, read_lists), min_size=1, max_size=12))
def test_the_read_list_sql_matches_its_python_twin(reader, owner, rows) -> None:  # type: ignore[no-untyped-def]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE entries (scope TEXT, namespace TEXT, owner_agent_id TEXT, team TEXT, read_agents TEXT)")
    conn.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?)",
                     [(s.value, n, o, t, json.dumps(list(r)) if r else None) for s, n, o, t, r in rows])
    area = Area(None, owner=owner, reader=reader)
    clause, params = area_clause([area])
    got = sorted(conn.execute(f"SELECT scope, namespace, owner_agent_id, team, read_agents FROM entries "
                              f"WHERE {clause}", params))
    want = sorted((s.value, n, o, t, json.dumps(list(r)) if r else None) for s, n, o, t, r in rows
                  if area.covers(s, n, o, t, r))
    assert got == want
    # Look-alikes never pass a list: case, '_' and prefixes are other agents.
    for listed, stranger in (("alice", "ALICE"), ("al_ce", "alice"), ("alice", "alic"), ("alice2", "alice")):
        assert not Area(None, reader=stranger).covers(Scope.TEAM, "red", "lead", "red", (listed,))
