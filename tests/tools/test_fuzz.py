"""Property-based fuzzing of every tool through a real MCP client session.

Arguments are drawn from each tool's published input schema (`tests/schema_strategies.py`), biased
towards plausible values so most examples reach the services and storage (real ids created in
the same example, their current and stale etags, real cursors, sessions with turns), and mixed with
hand-written nasty values (lone surrogates, NUL, huge strings and integers, nan/inf, deep nesting,
wrong types, unknown fields, extreme dates, hostile namespaces, bad identities, malformed model
answers to sampling).

The property, for every call: the answer is a structured result that validates against the tool's
published output schema and its typed contract, could be written to a real transport (UTF-8 JSON
without NaN), every error has a SPEC code and none is INTERNAL, a failed request has no items (and
one error, unless every item of a bulk request failed on its own), nothing in an error reads like a
Python traceback, records carry canonical UTC timestamps, every item returned is one the caller may
see (SPEC 4) inside what the request selected (scope, namespace, filters); and after every example
the server still answers a normal call and has logged no warning or error (background pruning and
reflection run meanwhile).

Example counts: `AGENT_MEMORY_FUZZ_EXAMPLES` per tool (default 150, derandomized so CI repeats
itself); `AGENT_MEMORY_FUZZ_RANDOM=1` draws fresh examples each run instead;
`AGENT_MEMORY_FUZZ_SHRINK=0` skips shrinking a failure.
"""

from __future__ import annotations

import builtins
import copy
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
import structlog
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st
from hypothesis.control import currently_in_test_context
from mcp import Client, types
from pydantic import BaseModel

from agent_memory.contracts.crud import MemoryCrudResult
from agent_memory.contracts.reflect import MemoryReflectResult
from agent_memory.contracts.retrieve import MemoryRetrieveResult
from agent_memory.tools.server import BUILTIN_TOOLS, create_server
from tests.conftest import IDENTITY_KEY, chosen_backends, identity, make_settings
from tests.schema_strategies import (
    HUGE_INT,
    HUGE_TEXT,
    LONE_SURROGATES,
    Ref,
    SchemaStrategies,
    branch_titled,
    nasty_values,
    weighted,
)

EXAMPLES = int(os.environ.get("AGENT_MEMORY_FUZZ_EXAMPLES", "150"))
settings.register_profile(
    "agent-memory-fuzz",
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("AGENT_MEMORY_FUZZ_RANDOM") != "1",
    database=None,
    print_blob=True,
    # AGENT_MEMORY_FUZZ_SHRINK=0 reports the first failure as found (faster when triaging many).
    phases=[p for p in Phase if p is not Phase.shrink or os.environ.get("AGENT_MEMORY_FUZZ_SHRINK") != "0"],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FUZZ = settings.get_profile("agent-memory-fuzz")
# The same fuzz on PostgreSQL (whose text cannot hold what SQLite's can), fewer examples per tool.
PG_EXAMPLES = int(os.environ.get("AGENT_MEMORY_FUZZ_PG_EXAMPLES", str(max(1, EXAMPLES // 3))))


@pytest.fixture(params=chosen_backends())
def new_store(request: pytest.FixtureRequest) -> Callable[[], dict[str, object]]:
    """The settings of a fresh store of the parametrised kind, one per call (PostgreSQL: a new
    database of its own, dropped at the end)."""
    if request.param == "sqlite":
        return dict
    server = request.getfixturevalue("postgres_server")
    made: list[str] = []
    request.addfinalizer(lambda: [server.drop_database(url) for url in made])

    def postgres() -> dict[str, object]:
        made.append(server.create_database())
        return {"backend": "postgres", "postgres_url": made[-1]}

    return postgres


# On PostgreSQL the connection pool's threads use the `random` module (retry jitter) while an
# example is drawn: Hypothesis would take that for a strategy using it.
POOL_USES_RANDOM = pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies:hypothesis.errors.HypothesisDeprecationWarning")


def fuzz(store: dict[str, object]) -> settings:
    return settings(FUZZ, max_examples=PG_EXAMPLES) if store.get("backend") == "postgres" else FUZZ

ROOT = Path(__file__).resolve().parents[2]
INPUT_SCHEMAS = {spec.name: spec.definition().input_schema for spec in BUILTIN_TOOLS}
RECORD_VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "schemas" / "memory_record.json").read_text()))
CONTRACTS: dict[str, type[BaseModel]] = {
    "memory_crud": MemoryCrudResult, "memory_retrieve": MemoryRetrieveResult, "memory_reflect": MemoryReflectResult}
SPEC_CODES = {"INVALID_PARAMS", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "NOT_IMPLEMENTED"}
CANONICAL_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
EXCEPTION_NAMES = re.compile(r"\b(?:Traceback|" + "|".join(sorted(
    {name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)}
    | {"ValidationError", "PydanticSerializationError", "IntegrityError", "OperationalError", "ProgrammingError",
       "JSONDecodeError", "MCPError", "ToolError", "DomainError", "InvalidParams", "NotFound", "DistillFailed",
       "SemanticUnavailable", "OutOfRange", "sqlite3", "aiosqlite", "chromadb"})) + r")\b")

# -- callers ---------------------------------------------------------------------------------

LAUNCH = "launch"  # no identity metadata: the launch identity, alice sys1 team red
CALLERS: dict[str, dict | None] = {
    LAUNCH: None,
    "alice": identity("alice"),
    "bob": identity("bob", "sys3"),
    "root": identity("root", "sys4"),
    "carol": identity("carol", "sys4", "blue"),
    "dave": identity("dave", "sys2", skills=["memory_crud"]),
    "eve": identity("eve", "sys5", "blue"),
}
NASTY_IDENTITIES: list[object] = [
    "alice", 42, [], {}, {"agent_id": "alice"}, identity("alice", "sys6"), identity("al ice"), identity(""),
    identity("a" * 129), identity("alice", team="../red"), identity("alice", skills=["memory_everything"]),
    identity("alice", skills="memory_crud,,memory_retrieve"), identity("alice", skills=[[]]),
    identity("alice", skills=[{"x": 1}]), {**identity("alice"), "admin": True}, identity("ALICE", "SYS1"),
    {"agent_id": HUGE_INT, "system_type": "sys1", "team": "red"}, {"agent_id": "\ud800", "system_type": "sys1",
                                                                    "team": "red"},
    {"agent_id": "alice", "system_type": ["sys1"], "team": "red"}, identity("alice\x00"),
    identity("alice", skills=[]), {**identity("alice"), "\ud800": 1}, {**identity("alice"), "k" * 10_000: 1},
]


@st.composite
def metas(draw: st.DrawFn, usual: str) -> tuple[str, dict | None]:
    """(caller name, request metadata): mostly the example's caller, sometimes another, rarely nasty."""
    kind = draw(st.integers(0, 99))
    if kind < 88:
        name = usual
    elif kind < 96:
        name = draw(st.sampled_from(sorted(CALLERS)))
    else:
        return "nasty", {IDENTITY_KEY: draw(st.sampled_from(NASTY_IDENTITIES))}
    ident = CALLERS[name]
    return name, None if ident is None else {IDENTITY_KEY: ident}


# -- plausible and nasty values by property name ------------------------------------------------

OFFSETS = [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-14)), timezone(timedelta(hours=5, minutes=30)),
           timezone(timedelta(hours=-3, minutes=-30))]
EXTREME_DATES = [
    "9999-12-31T23:59:59-14:00", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59+14:00",
    "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00-14:00", "0001-01-01T00:00:00Z", "0999-01-02T00:00:00Z",
    "0099-12-31T23:00:00-02:00", "2024-02-30T00:00:00Z", "2024-02-29T00:00:00Z", "2030-13-01T00:00:00Z",
    "2030-01-01T24:00:00Z", "2030-01-01T00:00:00+25:00", "2030-01-01T00:00:00+24:00", "2030-01-01T00:00:00+23:59",
    "2030-01-01T00:00:00-23:59", "2030-01-01T00:00:00+05:30:15", "2030-01-01T00:00:00.123456789Z", "2030-01-01",
    "2030-01-01T00:00", "20300101T000000Z", "2030-W01-1", "2030-001", "2030-01-01T00:00:00z", "2030-01-01 00:00:00",
    "2030-01-01T00:00:00+00:00[Europe/Paris]",
    "-2030-01-01T00:00:00Z", "+12030-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "now", "tomorrow", "", " ", "\x00",
    "2030-01-01T00:00:00Z\x00", "２０３０-01-01T00:00:00Z", "2030-01-01T00:00:00\ud800",
]


def _render(moment: datetime, style: str) -> str:
    if style == "naive":
        return moment.replace(tzinfo=None).isoformat()
    if style == "Z":
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    if style == "space":
        return moment.isoformat(sep=" ")
    if style == "date":
        return moment.date().isoformat()
    return moment.isoformat()


def dates(low: datetime, high: datetime) -> st.SearchStrategy[str]:
    return st.builds(_render, st.datetimes(min_value=low, max_value=high, timezones=st.sampled_from(OFFSETS)),
                     st.sampled_from(["iso", "Z", "naive", "space", "date"]))


NOW = datetime.now(UTC).replace(tzinfo=None)
FUTURE_DATES = dates(NOW + timedelta(days=2), NOW + timedelta(days=3650))
ANY_DATES = dates(datetime(1, 1, 2), datetime(9999, 12, 30))
NASTY_DATES = st.one_of(st.sampled_from(EXTREME_DATES), ANY_DATES)

GOOD_NAMESPACES = ["alice", "alice/notes", "bob", "red", "red/ops", "blue", "global", "global/kb"]
NASTY_NAMESPACES = [
    "%", "_", "red%", "r_d", "red/%", "red/_", "..", ".", "red/..", "red/../blue", "../etc", "./red", "RED", "Red",
    "ALICE", "Alice", "Global", "", "/", "red/", "/red", "red//ops", "a" * 129, "red/" + "a" * 129,
    "/".join(["a"] * 130), "red\x00", "red ", " red", "réd", "red\\ops", "red%2fops", "*", "red/*", "global%",
    "%%", "alice/%", "alice/..", "\ud800", HUGE_TEXT,
]
NASTY_IDS = ["", "x" * 129, "mem_" + "0" * 26, "mem_01ARZ3NDEKTSV4RRFFQ69G5FAV", "mem_%", "%", "_", "*", "\x00",
             "mem_\x00", " ", "\ud800", HUGE_TEXT, "../mem", "MEM_X", "1 OR 1=1"]
VOCABULARY = [
    "The deploy key is kept in the team vault under ops/keys.", "Lunch on Fridays is usually pizza.",
    "The staging database restarts every night at 02:00 UTC.", "I prefer tabs over spaces.",
    "Never deploy on Fridays.", "Always run the tests before merging.", "My name is Alice and I work on billing.",
    "We decided to use Postgres for the ledger.", "Please reply in French from now on.", "ok thanks",
    "The rota for on-call is in the wiki.", "Remember to rotate the API token every 90 days.",
]
FTS_NASTY = ['"', '"unbalanced', "AND OR NOT", "NEAR(deploy key", "deploy*", "*", "-key", "^key", "scope:agent",
             "((key", "key)", "'; DROP TABLE entries; --", "中文 查询", "\x00", "deploy\x00key", "a" * 4000,
             "a" * 4001, "é" * 4000, " ", "\t\n"]
TAGS = ["ops", "fz", "t1", "deploy", "é", "a b", "role:user", "compaction", "reflection", "kind:supplied", "%", "_"]
TEXTS = st.one_of(st.sampled_from(VOCABULARY), st.text(st.characters(codec="utf-8"), min_size=1, max_size=60))
NASTY_TEXTS = st.sampled_from(["", " ", "\n", "\x00", "x" * 32_001, HUGE_TEXT, *LONE_SURROGATES, *FTS_NASTY])
SESSIONS = ["s1", "s2", "fz:3", "sess.4"]
NASTY_SESSIONS = ["", "x" * 129, "s/1", "%", " s1", "s1\x00", "s 1", "\ud800", "..", HUGE_TEXT]


def tag_lists() -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(TAGS), max_size=4)


NASTY_TAGS = st.sampled_from([
    [f"t{i}" for i in range(33)], ["x"] * 33, [f"t{i}" for i in range(32)], [""], ["x" * 129], ["x" * 128], "ops",
    [None], [1], [["ops"]], ["\x00"], ["\ud800"], [HUGE_TEXT],
])
NASTY_INTS = st.sampled_from([0, -1, 101, 10_001, 1_000_001, HUGE_INT, -HUGE_INT, True, False, 25.0, 2.5, "25",
                              float("nan"), float("inf"), -0.0, None, 2**63])
NASTY_CURSORS = st.sampled_from([
    "garbage", "a.b", ".", "..", "a.b.c", "=", "eyJ9.AAAA", "e30.AAAAAAAAAAAAAAAAAAAAAA", "\x00", "\ud800.x",
    "é.é", HUGE_TEXT, "", "eyJjIjoiMjAyNCIsImkiOiJtZW1fMSIsImIiOiJ4In0.AAAAAAAAAAAAAAAAAAAAAA",
])


def refs(kind: str) -> st.SearchStrategy[Ref]:
    return st.builds(Ref, st.just(kind), st.integers(0, 7))


COMMON_HINTS: dict[str, st.SearchStrategy[Any]] = {
    "scope": st.sampled_from(["agent", "agent", "team", "global"]),
    "namespace": st.sampled_from(GOOD_NAMESPACES),
    "target_namespace": st.sampled_from(GOOD_NAMESPACES),
    "content": TEXTS,
    "tags": tag_lists(),
    "expires_at": st.one_of(FUTURE_DATES, st.none()),
    "created_after": ANY_DATES,
    "created_before": ANY_DATES,
    "at": dates(datetime(2020, 1, 1), NOW),
    "session_id": st.sampled_from(SESSIONS),
    "owner_agent_id": st.sampled_from(["alice", "bob", "root", "carol"]),
    "id": refs("id"),
    "ids": st.lists(refs("id"), min_size=1, max_size=4),
    "if_match": st.one_of(refs("etag"), refs("stale_etag")),
    "cursor": st.one_of(st.just(Ref("cursor")), st.just(Ref("foreign_cursor"))),
    "limit": st.one_of(st.integers(1, 5), st.sampled_from([1, 50, 100])),
    "ttl_seconds": st.one_of(st.integers(1, 10**6), st.sampled_from([1, 100 * 365 * 24 * 3600])),
    "query": st.one_of(st.sampled_from(VOCABULARY), st.sampled_from(["deploy", "vault key", "Fridays", "Alice"]),
                       TEXTS),
    "namespaces": st.lists(st.sampled_from(GOOD_NAMESPACES), min_size=1, max_size=3),
    "facts": st.lists(st.sampled_from(VOCABULARY), max_size=3),
    "rules": st.lists(st.sampled_from(VOCABULARY), max_size=3),
    "name": st.sampled_from(["Alice", "bob.smith", "tool-x", "ci@host", "Zoë"]),
}
COMMON_NASTY: dict[str, st.SearchStrategy[Any]] = {
    "namespace": st.sampled_from(NASTY_NAMESPACES),
    "target_namespace": st.sampled_from(NASTY_NAMESPACES),
    "namespaces": st.one_of(st.lists(st.sampled_from(NASTY_NAMESPACES), min_size=1, max_size=3),
                            st.just(["red"] * 101)),
    "content": NASTY_TEXTS,
    "query": NASTY_TEXTS,
    "tags": NASTY_TAGS,
    "expires_at": NASTY_DATES,
    "created_after": NASTY_DATES,
    "created_before": NASTY_DATES,
    "at": NASTY_DATES,
    "session_id": st.sampled_from(NASTY_SESSIONS),
    "owner_agent_id": st.sampled_from(NASTY_IDS),
    "id": st.sampled_from(NASTY_IDS),
    "ids": st.one_of(st.just([Ref("id")] * 101), st.lists(st.sampled_from(NASTY_IDS), max_size=3)),
    "if_match": st.sampled_from(NASTY_IDS),
    "cursor": NASTY_CURSORS,
    "limit": NASTY_INTS,
    "max_items": NASTY_INTS,
    "keep_recent": NASTY_INTS,
    "max_chars": NASTY_INTS,
    "max_tokens": NASTY_INTS,
    "per_entry_max_chars": NASTY_INTS,
    "ttl_seconds": st.sampled_from([0, -1, 100 * 365 * 24 * 3600 + 1, HUGE_INT, 2**63, 1.5, float("inf")]),
    "confidence": st.sampled_from([-0.0, 1.0, 0.0, 1.0000001, -1e-300, float("nan"), float("inf"), HUGE_INT, 1, True,
                                   "0.5"]),
    "facts": st.sampled_from([[""], ["  "], ["x" * 32_001], ["ok"] * 101, [None], "fact", [HUGE_TEXT]]),
    "rules": st.sampled_from([[""], ["\x00"], ["x" * 32_001], ["ok"] * 101, [1], [["nested"]]]),
    "name": st.sampled_from(["", "a" * 65, "\x00", "<script>", "a/b", "\ud800", "tab\tname", "name:x"]),
}

GEN = SchemaStrategies(COMMON_HINTS, COMMON_NASTY)

# -- memory_crud arguments -------------------------------------------------------------------

CRUD_SCHEMA = INPUT_SCHEMAS["memory_crud"]
ITEM_TITLES = {"create": "CreateItem", "read": "ReadItem", "update": "UpdateItem", "delete": "DeleteItem",
               "promote": "PromoteItem"}
RELEVANT = {  # the optional arguments that make sense for each action (others are drawn rarely)
    "create": {"scope", "namespace", "layer", "items"},
    "read": {"scope", "namespace", "items", "filters"},
    "update": {"scope", "namespace", "items", "if_match"},
    "delete": {"scope", "namespace", "items", "if_match"},
    "list": {"scope", "namespace", "layer", "filters", "cursor", "limit"},
    "promote": {"scope", "namespace", "layer", "items"},
}
COHERENT_NAMESPACES = {"agent": [None, "{me}", "{me}/notes"], "team": ["{team}", "{team}/ops", "blue"],
                       "global": ["global", "global/kb"]}


def _crud_items(action: str) -> st.SearchStrategy[Any]:
    items_schema = CRUD_SCHEMA["properties"]["items"]
    if action not in ITEM_TITLES:
        return GEN.value(items_schema, "items")
    item = GEN.object(branch_titled(items_schema, ITEM_TITLES[action]))
    return weighted((70, st.lists(item, min_size=1, max_size=1)), (20, st.lists(item, min_size=2, max_size=3)),
                    (5, st.lists(item, min_size=10, max_size=11)), (5, GEN.value(items_schema, "items")))


def _crud_object(action: str) -> st.SearchStrategy[dict[str, Any]]:
    include = {key: 50 if key in RELEVANT[action] else 2 for key in CRUD_SCHEMA["properties"]}
    if action in ITEM_TITLES:
        include.update(items=95)
    if "if_match" in RELEVANT[action]:
        include.update(if_match=10)
    return GEN.object(CRUD_SCHEMA, overrides={"action": st.just(action), "items": _crud_items(action)},
                      include=include)


CRUD_BY_ACTION = {action: _crud_object(action) for action in RELEVANT}
NASTY_ACTION = GEN.object(CRUD_SCHEMA, overrides={"action": GEN.hostile(CRUD_SCHEMA["properties"]["action"], "action")})


@st.composite
def crud_arguments(draw: st.DrawFn, caller: dict | None) -> dict[str, Any]:
    """Arguments for one memory_crud call by `caller` (None: a malformed identity). Most of the
    time the scope is one the caller may use and namespaces belong to their scope, so the call
    gets past the gate to the entries; the rest of the time anything goes."""
    me, team, system = (caller or {}).get("agent_id", "alice"), (caller or {}).get("team", "red"), \
        (caller or {}).get("system_type", "sys1")
    action = draw(weighted((95, st.sampled_from(sorted(RELEVANT))), (5, st.just(None))))
    args = copy.deepcopy(draw(CRUD_BY_ACTION[action] if action else NASTY_ACTION))  # edited below
    if not action or draw(st.integers(0, 9)) >= 7:
        return args
    scope = args.get("scope", "agent")
    writes = action in ("create", "update", "delete")
    if scope == "global" and system != "sys4" or scope == "team" and writes and system in ("sys1", "sys2"):
        args["scope"] = scope = "agent"
    if isinstance(scope, str) and scope in COHERENT_NAMESPACES:
        choice = draw(st.sampled_from(COHERENT_NAMESPACES[scope]))
        args.pop("namespace", None)
        if choice is not None:
            args["namespace"] = choice.format(me=me, team=team)
    for item in args.get("items") or []:  # promote: a target the caller may write
        if isinstance(item, dict) and isinstance(item.get("target_scope"), str) \
                and item["target_scope"] in COHERENT_NAMESPACES:
            target = item["target_scope"]
            if target == "global" and system != "sys4" or target == "team" and system in ("sys1", "sys2"):
                item["target_scope"] = target = "agent"
            choice = draw(st.sampled_from(COHERENT_NAMESPACES[target]))
            item.pop("target_namespace", None)
            if choice is not None:
                item["target_namespace"] = choice.format(me=me, team=team)
    return args


# -- memory_retrieve and memory_reflect arguments --------------------------------------------

RETRIEVE_SCHEMA = INPUT_SCHEMAS["memory_retrieve"]
REFLECT_SCHEMA = INPUT_SCHEMAS["memory_reflect"]
RETRIEVE_ARGUMENTS = GEN.object(RETRIEVE_SCHEMA, include={key: 30 for key in RETRIEVE_SCHEMA["properties"]})
REFLECT_RELEVANT = {"log": {"turns"}, "compact": {"keep_recent"}, "reflect": {"facts", "rules", "max_items",
                                                                             "use_sampling"}}


def _reflect_object(action: str) -> st.SearchStrategy[dict[str, Any]]:
    turns_schema = REFLECT_SCHEMA["properties"]["turns"]
    turn = GEN.object(branch_titled(turns_schema, "TurnArg"))
    turns = weighted((85, st.lists(turn, min_size=1, max_size=4)), (5, st.lists(turn, min_size=100, max_size=101)),
                     (10, GEN.value(turns_schema, "turns")))
    include = {key: 75 if key in REFLECT_RELEVANT[action] else 4 for key in REFLECT_SCHEMA["properties"]}
    if action == "reflect":
        include.update(facts=25, rules=25)
    return GEN.object(REFLECT_SCHEMA, overrides={"action": st.just(action), "turns": turns}, include=include)


REFLECT_BY_ACTION = {action: _reflect_object(action) for action in REFLECT_RELEVANT}
NASTY_REFLECT = GEN.object(REFLECT_SCHEMA,
                           overrides={"action": GEN.hostile(REFLECT_SCHEMA["properties"]["action"], "action")})


@st.composite
def reflect_arguments(draw: st.DrawFn, session: str) -> dict[str, Any]:
    action = draw(weighted((95, st.sampled_from(sorted(REFLECT_RELEVANT))), (5, st.just(None))))
    args = dict(draw(REFLECT_BY_ACTION[action] if action else NASTY_REFLECT))
    if "session_id" in args and draw(st.integers(0, 9)) < 7:
        args["session_id"] = session  # mostly the session the example logged turns into
    return args


def _sampling_json(facts: list[Any], rules: list[Any]) -> str:
    try:
        return json.dumps({"facts": facts, "rules": rules})
    except ValueError:  # a huge integer: json cannot write it either
        return '{"facts": [' + "9" * 5000 + "]}"


FACT_ITEMS = st.one_of(st.sampled_from(VOCABULARY), st.fixed_dictionaries(
    {"content": st.one_of(st.sampled_from(VOCABULARY), nasty_values()),
     "confidence": st.one_of(st.floats(0, 1), nasty_values())}), nasty_values())
SAMPLING_ANSWERS = weighted(
    (45, st.builds(_sampling_json, st.lists(FACT_ITEMS, max_size=3), st.lists(FACT_ITEMS, max_size=3))),
    (45, st.sampled_from(["", "no json here", "{", "{}", "[]", "null", '{"facts": "lots"}', '{"facts": [1, 2]}',
                          '{"facts": [{"content": "x", "confidence": NaN}]}', '{"rules": [{"content": "\\u0000"}]}',
                          '{"facts": [' + ",".join(['"a fact"'] * 500) + "]}", "{" * 5000 + "}" * 5000,
                          '{"facts": [{"content": "' + "x" * 1001 + '"}]}', HUGE_TEXT,
                          '{"facts": ' + "[" * 100_000 + "]" * 100_000 + "}",  # deeper than json can recurse
                          '{"facts": [' + ", ".join(['{"content": "fact", "confidence": 0.5}'] * 1000) + "]}",
                          '{"facts": [{"content": "ok", "confidence": 1e999}]}', '{"facts": [{"content": "ok", '
                          '"confidence": ' + "9" * 5000 + "}]}", '{"facts": [{"content": "ok"}], "facts": 1}'])),
    (10, st.sampled_from(["error", "image"])),
)


# -- one running server, driven from synchronous hypothesis code --------------------------------


@dataclass
class Driver:
    portal: BlockingPortal
    client: Client
    tools: dict[str, types.Tool]
    sampling_answer: list[str] = field(default_factory=lambda: ["{}"])

    def call(self, tool: str, arguments: dict[str, Any] | None, meta: dict | None = None
             ) -> types.CallToolResult | None:
        """The answer, or None when the client cannot send the request (it writes requests as
        UTF-8 JSON on some paths, so text with lone surrogates never leaves it)."""
        async def go() -> types.CallToolResult:
            with anyio.fail_after(60):
                return await self.client.call_tool(tool, arguments, meta=meta)

        try:
            return self.portal.call(go)
        except UnicodeEncodeError:
            return None


@contextmanager
def watching_logs() -> Iterator[list[dict[str, Any]]]:
    """Collects the server's warning and error log events (rendering still runs as configured, so a
    log line that cannot be written still fails)."""
    seen: list[dict[str, Any]] = []

    def keep(_: object, method: str, event: Any) -> Any:
        if method in ("warning", "error", "critical", "exception") and isinstance(event, dict):
            seen.append(dict(event))
        return event

    before = structlog.get_config()["processors"]
    structlog.configure(processors=[keep, *before])
    try:
        yield seen
    finally:
        structlog.configure(processors=before)


def check_logs(seen: list[dict[str, Any]]) -> None:
    """No warning or error was logged by the server while the example ran (background jobs included)."""
    problems = [event for event in seen if event.get("event") not in BENIGN_LOG_EVENTS]
    seen.clear()
    assert not problems, problems


BENIGN_LOG_EVENTS: set[str] = set()


@contextmanager
def serving(tmp_path: Path, mode: str = "auto", sampling: bool = False, **overrides: object) -> Iterator[Driver]:
    answer = ["{}"]

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        text = answer[0]
        if text == "error":
            return types.ErrorData(code=-1, message="the user declined")
        if text == "image":
            image = types.ImageContent(type="image", data="AAAA", mime_type="image/png")
            return types.CreateMessageResult(role="assistant", model="m", content=image)
        return types.CreateMessageResult(role="assistant", model="m", content=types.TextContent(type="text", text=text))

    options: dict[str, Any] = {"sampling_callback": sample} if sampling else {}
    server = create_server(make_settings(tmp_path / "data", **overrides))
    with start_blocking_portal("asyncio") as portal, \
            portal.wrap_async_context_manager(Client(server, mode=mode, **options)) as client:
        tools = {t.name: t for t in portal.call(client.list_tools).tools}
        for name, schema in INPUT_SCHEMAS.items():  # the fuzzer draws from what tools/list publishes
            assert tools[name].input_schema == schema
        yield Driver(portal, client, tools, answer)


# -- the property -------------------------------------------------------------------------------


def _printable(value: object) -> object:
    """`value` with integers too long for repr() (over 4300 digits) replaced by a description."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
        return f"<int of {value.bit_length()} bits>"
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(v) for v in value]
    return value


def _short(value: object, limit: int = 400) -> str:
    text = repr(_printable(value))
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def _as_sent(value: Any) -> Any:
    """`value` as the SDK client puts it on the wire: it writes NaN and Infinity as null, so from
    this client they never reach the server as numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _as_sent(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_sent(v) for v in value]
    return value


def _note(text: str) -> None:
    if currently_in_test_context():
        note(text)


def check_answer(driver: Driver, tool: str, arguments: dict[str, Any] | None,
                 result: types.CallToolResult, meta: dict | None = None) -> dict[str, Any]:
    """Every answer: structured, schema-exact, transport-safe, SPEC codes only, never INTERNAL;
    and what it returns is what the caller may see and what the request asked for."""
    data = result.structured_content
    assert data is not None, result
    _note(f"-> {tool} is_error={result.is_error} {_short(data, 1200)}")
    if tool in driver.tools:
        jsonschema.validate(data, driver.tools[tool].output_schema)
        CONTRACTS[tool].model_validate(data, strict=True)
    else:
        assert set(data) == {"items", "errors"}
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = result.content[0].text
    assert json.loads(text) == data
    # What stdio and HTTP would send: UTF-8 JSON, no NaN/Infinity (pydantic writes them as null).
    wire = result.model_dump_json(by_alias=True, exclude_unset=True)
    wire.encode("utf-8")
    json.dumps(data, allow_nan=False)
    errors, items = data["errors"], data["items"]
    for error in errors:
        assert set(error) == {"code", "message", "details"}
        assert error["code"] in SPEC_CODES, f"{error['code']} for {_short(arguments)}"
        assert not EXCEPTION_NAMES.search(error["message"] + json.dumps(error["details"])), error
    assert "Traceback" not in text
    if result.is_error:
        assert items == [] and errors, data
        if len(errors) > 1:  # every item of a bulk request failed on its own
            assert all("index" in e["details"] for e in errors), errors
    else:
        assert not errors or items, data
    for key in ("fallback_reason", "degraded"):
        if data.get(key):
            assert not EXCEPTION_NAMES.search(data[key]), data[key]
    if tool in ("memory_crud", "memory_reflect"):
        for record in items:
            RECORD_VALIDATOR.validate(record)
            for stamp in ("created_at", "updated_at", "expires_at"):
                assert record[stamp] is None or CANONICAL_TS.match(record[stamp]), (stamp, record[stamp])
            assert record["version"] >= 1 and record["etag"]
            assert record["conflict"] is (record["conflict_of"] is not None)
            assert math.isfinite(record["confidence"]) and 0.0 <= record["confidence"] <= 1.0
    if tool == "memory_crud" and isinstance(arguments, dict):
        _check_crud_shape(arguments, data, bool(result.is_error))
    if tool == "memory_retrieve" and not result.is_error:
        assert data["used_chars"] == len(data["context"]) <= data["budget_chars"]
        assert all(math.isfinite(i["score"]) for i in items)
    caller = caller_of(meta)
    if caller is not None and items and isinstance(arguments, dict):
        check_visible(tool, arguments, items, caller)
    return data


def caller_of(meta: dict | None) -> dict | None:
    """The identity a request ran as (None for a malformed one: the server refuses it)."""
    if meta is None:
        return {"agent_id": "alice", "system_type": "sys1", "team": "red"}
    ident = meta.get(IDENTITY_KEY)
    return ident if ident in CALLERS.values() else None


def check_visible(tool: str, arguments: dict[str, Any], items: list[dict[str, Any]], caller: dict) -> None:
    """The permission gate (SPEC 4) and the request's own selection, checked on every item returned."""
    writes = tool == "memory_reflect" or arguments.get("action") in ("create", "update", "delete", "promote")
    for item in items:
        scope, namespace = item["scope"], item["namespace"]
        where = f"{scope}/{namespace} for {caller} ({tool} {arguments.get('action')}): {_short(item, 300)}"
        if scope == "agent":
            assert item["owner_agent_id"] == caller["agent_id"], where
            assert namespace == caller["agent_id"] or namespace.startswith(caller["agent_id"] + "/"), where
            assert item.get("team", caller["team"]) == caller["team"], where
        elif scope == "team":
            assert namespace.split("/")[0] == caller["team"], where
            assert not writes or caller["system_type"] in ("sys3", "sys4", "sys5"), where
        else:
            assert caller["system_type"] == "sys4", where
    if tool == "memory_reflect":
        assert all(i["scope"] == "agent" and i["namespace"] == caller["agent_id"] for i in items), items
    elif tool == "memory_retrieve":
        _check_retrieve_selection(arguments, items)
    elif arguments.get("action") == "list":
        _check_list_selection(arguments, items, caller)
    elif arguments.get("action") in ("create", "read", "update", "delete"):  # confined to the request's place
        scope = arguments.get("scope", "agent")
        namespace = arguments.get("namespace") or (caller["agent_id"] if scope == "agent" else None)
        assert all(i["scope"] == scope and i["namespace"] == namespace for i in items), (scope, namespace, items)


def _check_retrieve_selection(arguments: dict[str, Any], items: list[dict[str, Any]]) -> None:
    for key, field_name in (("scopes", "scope"), ("namespaces", "namespace"), ("layers", "layer")):
        if arguments.get(key):
            assert all(i[field_name] in arguments[key] for i in items), (key, arguments[key], items)
    if arguments.get("tags"):
        assert all(set(arguments["tags"]) <= set(i["tags"]) for i in items), (arguments["tags"], items)


def _check_list_selection(arguments: dict[str, Any], items: list[dict[str, Any]], caller: dict) -> None:
    scope = arguments.get("scope", "agent")
    namespace = arguments.get("namespace") or (caller["agent_id"] if scope == "agent" else None)
    filters = arguments.get("filters") or {}
    assert all(i["scope"] == scope and i["namespace"] == namespace for i in items), (scope, namespace, items)
    for key in ("source", "priority", "owner_agent_id", "session_id", "conflict"):
        if filters.get(key) is not None:
            assert all(i[key] == filters[key] for i in items), (key, filters[key], items)
    layer = filters.get("layer") or arguments.get("layer")
    if layer:
        assert all(i["layer"] == layer for i in items), (layer, items)
    if filters.get("tags"):
        assert all(set(filters["tags"]) <= set(i["tags"]) for i in items), (filters["tags"], items)
    for key, later in (("created_after", True), ("created_before", False)):
        bound = _moment(filters.get(key))
        if bound is not None:
            for item in items:
                created = _moment(item["created_at"])
                assert (created > bound) if later else (created < bound), (key, filters[key], item["created_at"])
    if not filters.get("include_expired"):
        soon = datetime.now(UTC) - timedelta(seconds=30)  # entries may expire while the call runs
        assert all(i["expires_at"] is None or _moment(i["expires_at"]) > soon for i in items), items


def _moment(text: object) -> datetime | None:
    """An ISO-8601 text as an aware UTC datetime (naive is UTC), or None when it is not one."""
    try:
        moment = datetime.fromisoformat(str(text).replace("z", "Z"))
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _check_crud_shape(arguments: dict[str, Any], data: dict[str, Any], failed: bool) -> None:
    assert data["has_more"] is (data["next_cursor"] is not None)
    limit = arguments.get("limit", 25)
    if arguments.get("action") == "list" and not failed and type(limit) is int:
        assert len(data["items"]) <= limit
    raw, action = arguments.get("items"), arguments.get("action")
    if isinstance(action, str) and action in ITEM_TITLES and isinstance(raw, list) and 0 < len(raw) <= 10 \
            and "filters" not in arguments and not (failed and len(data["errors"]) == 1
                                                    and "index" not in data["errors"][0]["details"]):
        # a bulk request that ran: every item either succeeded or failed on its own, once
        indexes = [e["details"]["index"] for e in data["errors"]]
        assert len(set(indexes)) == len(indexes) and all(0 <= i < len(raw) for i in indexes), data["errors"]
        assert len(data["items"]) + len(indexes) == len(raw), data


def check_healthy(driver: Driver) -> None:
    """The server still answers a normal call after whatever the example sent."""
    result = driver.call("memory_crud", {"action": "list", "limit": 2})
    assert result is not None
    data = check_answer(driver, "memory_crud", {"action": "list", "limit": 2}, result)
    assert not result.is_error, data


@dataclass
class Example:
    """What one example has seen: ids (seeded first, then created), their etags, and how to get cursors."""

    driver: Driver
    ids: list[str] = field(default_factory=list)
    where: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (scope, namespace)
    first_etag: dict[str, str] = field(default_factory=dict)
    etag: dict[str, str] = field(default_factory=dict)

    def learn(self, data: dict[str, Any]) -> None:
        for record in data.get("items", []):
            if isinstance(record, dict) and "etag" in record:
                if record["id"] not in self.etag:
                    self.ids.append(record["id"])
                    self.first_etag[record["id"]] = record["etag"]
                self.etag[record["id"]] = record["etag"]
                self.where[record["id"]] = (record["scope"], record["namespace"])

    def _pick(self, index: int, arguments: object, meta: dict | None) -> str:
        """Mostly an id living where the request points (scope and namespace), else any known id."""
        if not self.ids:
            return "mem_none"
        if index < 6 and isinstance(arguments, dict):
            ident = (meta or {}).get(IDENTITY_KEY)
            me = ident.get("agent_id") if isinstance(ident, dict) else "alice"
            scope = arguments.get("scope", "agent")
            namespace = arguments.get("namespace") or (me if scope == "agent" else None)
            here = [i for i in self.ids if self.where.get(i) == (scope, namespace)]
            if here:
                return here[index % len(here)]
        return self.ids[index % len(self.ids)]

    def call(self, tool: str, arguments: dict[str, Any] | None, meta: dict | None = None) -> dict[str, Any]:
        resolved = self.resolve(arguments, tool, meta)
        _note(f"{tool} meta={_short(meta, 200)} args={_short(resolved, 1500)}")
        result = self.driver.call(tool, resolved, meta)
        if result is None:
            _note("(the client could not send it)")
            return {"items": [], "errors": []}
        sent = _as_sent(resolved)
        data = check_answer(self.driver, tool, sent, result, meta)
        self.learn(data)
        _tally(tool, sent, data)
        return data

    def resolve(self, value: Any, tool: str, meta: dict | None, top: Any = None) -> Any:
        top = value if top is None else top
        if isinstance(value, Ref):
            known = self._pick(value.index, top, meta)
            if value.kind == "id":
                return known
            if value.kind == "etag":
                return self.etag.get(known, "etag_none")
            if value.kind == "stale_etag":
                return self.first_etag.get(known, "etag_none")
            return self._cursor(value.kind, top if isinstance(top, dict) else {}, meta)
        if isinstance(value, dict):
            return {k: self.resolve(v, tool, meta, top) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, tool, meta, top) for v in value]
        return value

    def _cursor(self, kind: str, arguments: dict[str, Any], meta: dict | None) -> str:
        """A real cursor: for this query (`cursor`) or for the launch caller's plain list (`foreign_cursor`)."""
        if kind == "cursor":
            query = {k: self.resolve(v, "memory_crud", meta, {}) for k, v in arguments.items() if k != "cursor"}
            query.update(action="list", limit=1)
            query.pop("items", None)
        else:
            query, meta = {"action": "list", "limit": 1}, None
        result = self.driver.call("memory_crud", query, meta)
        if result is None:
            return "unsendable"
        data = check_answer(self.driver, "memory_crud", _as_sent(query), result, meta)
        return data.get("next_cursor") or "no-next-page"


def seed(example: Example, caller: str) -> None:
    """Entries every crud example can address: two of the caller's own, one of team red, one global."""
    ident = CALLERS[caller]
    meta = None if ident is None else {IDENTITY_KEY: ident}
    example.call("memory_crud", {"action": "create", "items": [
        {"content": VOCABULARY[len(example.ids) % len(VOCABULARY)], "tags": ["fz", "ops"]},
        {"content": "Remember to rotate the API token every 90 days.", "ttl_seconds": 3600, "priority": "high"}]},
        meta)
    root = {IDENTITY_KEY: CALLERS["root"]}
    example.call("memory_crud", {"action": "create", "scope": "team", "namespace": "red", "layer": "working",
                                 "items": [{"content": "The red team deploys from the main branch."}]}, root)
    example.call("memory_crud", {"action": "create", "scope": "global", "namespace": "global", "layer": "long_term",
                                 "items": [{"content": "Company holidays are listed in the wiki."}]}, root)


OUTCOMES: Counter[str] = Counter()


def _tally(tool: str, arguments: object, data: dict[str, Any]) -> None:
    """Count how a call ended (tool, action, error codes; the reflect engine) for AGENT_MEMORY_FUZZ_STATS."""
    action = arguments.get("action") if isinstance(arguments, dict) else None
    action = action if isinstance(action, str) and len(action) < 12 else "?"
    detail = os.environ.get("AGENT_MEMORY_FUZZ_STATS") == "2"  # codes with field and message
    codes = sorted({e["code"] + (f" {e['details'].get('field')} {e['message'][:60]!r}" if detail else "")
                    for e in data["errors"]}) or ["ok"]
    engine = ""
    if data.get("engine"):
        engine = f" ({data['engine']}{', fell back' if data.get('fallback_reason') else ''})"
    OUTCOMES[f"{tool} {action}: {'+'.join(codes)}{engine}"] += 1


@pytest.fixture(autouse=True)
def _report_outcomes() -> Iterator[None]:
    """AGENT_MEMORY_FUZZ_STATS=1 (with -s) prints how the calls of each test ended, by tool,
    action and error codes: a check that the fuzzer gets past validation."""
    OUTCOMES.clear()
    yield
    if os.environ.get("AGENT_MEMORY_FUZZ_STATS") in ("1", "2"):
        text = "".join(f"\n{count:6d}  {key}" for key, count in sorted(OUTCOMES.items()))
        print(text.encode("utf-8", "backslashreplace").decode("utf-8"))


CALLER_NAMES = st.sampled_from([LAUNCH, LAUNCH, "alice", "bob", "root", "carol", "dave", "eve"])


@POOL_USES_RANDOM
def test_fuzz_memory_crud(tmp_path: Path, new_store: Callable[[], dict[str, object]]) -> None:
    # small namespaces and a frequent pruner: entries disappear under the fuzzer's feet
    store = new_store()
    with watching_logs() as logs, serving(tmp_path, max_entries_per_namespace=40, prune_interval_seconds=0.5,
                                          max_content_chars=5000, **store) as driver:

        @fuzz(store)
        @given(data=st.data(), caller=CALLER_NAMES)
        def run(data: st.DataObject, caller: str) -> None:
            example = Example(driver)
            seed(example, caller)
            for _ in range(data.draw(st.integers(1, 3), label="calls")):
                _, meta = data.draw(metas(caller), label="caller")
                arguments = data.draw(crud_arguments(caller_of(meta)), label="arguments")
                example.call("memory_crud", arguments, meta)
            check_healthy(driver)
            check_logs(logs)

        run()


@POOL_USES_RANDOM
def test_fuzz_memory_retrieve(tmp_path: Path, new_store: Callable[[], dict[str, object]]) -> None:
    store = new_store()
    with watching_logs() as logs, serving(tmp_path, vector_backend="chroma", **store) as driver:
        example = Example(driver)
        for caller in (LAUNCH, "bob", "carol"):
            seed(example, caller)
        example.call("memory_reflect", {"action": "log", "session_id": "s1", "turns": [
            {"role": "user", "content": text} for text in VOCABULARY]})
        example.call("memory_reflect", {"action": "compact", "session_id": "s1", "keep_recent": 3})

        @fuzz(store)
        @given(data=st.data(), caller=CALLER_NAMES)
        def run(data: st.DataObject, caller: str) -> None:
            for _ in range(data.draw(st.integers(1, 2), label="calls")):
                _, meta = data.draw(metas(caller), label="caller")
                Example(driver).call("memory_retrieve", data.draw(RETRIEVE_ARGUMENTS, label="arguments"), meta)
            check_healthy(driver)
            check_logs(logs)

        run()


@POOL_USES_RANDOM
def test_fuzz_memory_reflect(tmp_path: Path, new_store: Callable[[], dict[str, object]]) -> None:
    # Two servers: a legacy session that can be sampled, so the client's (fuzzed) model answers are
    # input too; and a 2026-07-28 session, whose client sends more of what the legacy client
    # cannot serialise (lone surrogates).
    # Pruning runs meanwhile, and on the modern server background reflection too (on the legacy one
    # it would take the new turns before the fuzzed reflect could sample them); short turns and summaries.
    limits = {"compaction_threshold_chars": 3000, "session_log_max_chars": 300, "compaction_summary_max_chars": 200,
              "max_entries_per_namespace": 60, "prune_interval_seconds": 0.5}
    store = new_store()
    with watching_logs() as logs, serving(tmp_path / "legacy", mode="legacy", sampling=True, **limits, **store) \
            as legacy, serving(tmp_path / "auto", reflection_interval_seconds=0.5, **limits, **new_store()) as modern:

        @fuzz(store)
        @given(data=st.data(), caller=CALLER_NAMES, session=st.sampled_from(SESSIONS), sampled=st.booleans())
        def run(data: st.DataObject, caller: str, session: str, sampled: bool) -> None:
            driver = legacy if sampled else modern
            ident = CALLERS[caller]
            example = Example(driver)
            example.call("memory_reflect", {"action": "log", "session_id": session, "turns": [
                {"role": "user", "content": data.draw(st.sampled_from(VOCABULARY), label="turn")}]},
                None if ident is None else {IDENTITY_KEY: ident})
            for _ in range(data.draw(st.integers(1, 3), label="calls")):
                driver.sampling_answer[0] = data.draw(SAMPLING_ANSWERS, label="model answer")
                _, meta = data.draw(metas(caller), label="caller")
                example.call("memory_reflect", data.draw(reflect_arguments(session), label="arguments"), meta)
            check_healthy(driver)
            check_logs(logs)

        run()


NASTY_TOOL_NAMES = ["memory_nothing", "", "MEMORY_CRUD", "memory_crud ", "memory_crud\x00", HUGE_TEXT,
                    "../memory_crud", "memory_crud/../memory_crud", "%", "é" * 100]


@pytest.mark.parametrize("name", NASTY_TOOL_NAMES, ids=range(len(NASTY_TOOL_NAMES)))
def test_unknown_tool_names_get_a_structured_answer(tmp_path: Path, name: str) -> None:
    with serving(tmp_path) as driver:
        result = driver.call(name, {"action": "list"})
        assert result is not None
        data = check_answer(driver, name, {"action": "list"}, result)
        assert result.is_error and data["errors"][0]["code"] == "INVALID_PARAMS"
        check_healthy(driver)
