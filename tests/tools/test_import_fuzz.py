"""Property-based fuzzing of the import readers and placement (pure: no store), fed hostile lines:
the shapes of each format (notes, export records, kg-jsonl, mem0, front matter) with fields
replaced by nasty values (NUL, lone surrogates, huge and out-of-range numbers, nan/inf, deep
nesting, wrong types, unknown keys), and raw text (bytes that are not UTF-8, kept as surrogates,
deep brackets, broken JSON).

The property: reading never raises, it yields drafts and bad items; placing a draft or parsing an
export line either gives an entry or raises ValueError (a reported bad item, never another
exception); and an entry that comes out is one a write could have stored (`check_entry`), whose
record can be written as UTF-8 JSON.

Examples: `AGENT_MEMORY_FUZZ_IMPORT_EXAMPLES` per test (default 150), derandomized, so a run repeats
itself and stays within a few seconds.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from agent_memory.contracts.export_lines import export_line, parse_line
from agent_memory.core.memories.entry_checks import check_entry
from agent_memory.core.model.models import Entry, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.importers import read_lines
from agent_memory.importers.drafts import Bad, Draft
from agent_memory.importers.frontmatter import split_front_matter
from agent_memory.importers.notes import FIELDS as NOTE_FIELDS
from agent_memory.importers.placement import Target, place
from tests.schema_strategies import LONE_SURROGATES, UNKNOWN_KEYS, nasty_values

FUZZ = settings(max_examples=int(os.environ.get("AGENT_MEMORY_FUZZ_IMPORT_EXAMPLES", "150")), derandomize=True,
                deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
LIMITS = Limits(max_content_chars=2000)
TARGETS = [Target("notes", Scope.AGENT, "alice", "red", "alice"), Target("notes", Scope.TEAM, "red/kb", "red", "ann"),
           Target("notes", Scope.GLOBAL, "global", "red", "alice")]
RECORD = {"id": "mem_1", "scope": "agent", "namespace": "alice", "team": "red", "owner_agent_id": "alice",
          "content": "a fact", "tags": ["t"], "priority": "medium", "source": "manual", "confidence": 1.0,
          "layer": "long_term", "created_at": "2026-01-02T03:04:05Z", "updated_at": "2026-01-02T03:04:05Z",
          "expires_at": None, "version": 1, "etag": "e1", "conflict": False, "conflict_of": None, "session_id": None,
          "promoted_from": None, "compacted": False, "superseded_by": None}

plain_text = st.text(st.characters(codec="utf-8"), max_size=40)
hostile_text = st.one_of(plain_text, st.sampled_from(["\x00", "a\x00b", *LONE_SURROGATES, "alice\n", "red%",
                                                      "<b>x</b>", "../..", "", " "]),
                         st.builds(lambda a, b, c: a + b + c, plain_text, st.sampled_from(["\x00", "\ud800"]),
                                   plain_text))
value = st.one_of(nasty_values(), hostile_text, st.integers(), st.floats(), st.lists(hostile_text, max_size=4))
raw_line = st.one_of(
    hostile_text,
    st.integers(1, 3000).map(lambda n: "[" * n + "]" * n),
    st.sampled_from(['{"content": "caf\udce9"}', '{"content": "x"', "null", "[1, 2]", '{"content": "\\ud800"}']),
)


def _line(data: object, raw: str | None) -> str:
    if raw is not None:
        return raw
    try:
        return json.dumps(data)
    except ValueError:  # an int beyond str()'s digit limit
        return "{}"


def _objects(base: dict[str, Any], keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """`base` with one or two of `keys` set to hostile text (so most objects are otherwise valid and
    reach placement), or a few of them and of unknown keys set to any nasty value."""
    few = st.dictionaries(st.sampled_from(keys), hostile_text, min_size=1, max_size=2)
    many = st.dictionaries(st.sampled_from(keys + UNKNOWN_KEYS), value, max_size=5)
    return st.one_of(few, many).map(lambda extra: base | extra)


def _lines(objects: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[list[str]]:
    one = st.tuples(objects, st.one_of(st.none(), raw_line)).map(lambda pair: _line(*pair))
    return st.lists(one, min_size=1, max_size=6)


def _storable_entry(entry: Entry) -> None:
    assert check_entry(entry) is entry
    export_line(entry).encode("utf-8")  # the record can be written out and read back


def _read_and_place(fmt: str, lines: list[str]) -> None:
    items = list(read_lines(fmt, [line + "\n" for line in lines]))
    assert all(isinstance(item, Draft | Bad) for item in items)
    for item in items:
        if isinstance(item, Bad):
            continue
        for target in TARGETS:
            try:
                entry = place(item, Target(fmt, target.scope, target.namespace, target.team, target.agent_id),
                              LIMITS, NOW)
            except ValueError:
                continue
            _storable_entry(entry)


@FUZZ
@given(_lines(_objects({"content": "a note"}, list(NOTE_FIELDS))))
def test_hostile_notes_lines_are_drafts_or_bad_items_and_place_only_storable_entries(lines: list[str]) -> None:
    _read_and_place("notes", lines)


@FUZZ
@given(_lines(st.one_of(
    _objects({"type": "entity", "name": "Ada", "entityType": "person", "observations": ["x"]},
             ["type", "name", "entityType", "observations"]),
    _objects({"type": "relation", "from": "Ada", "to": "Bob", "relationType": "knows"},
             ["type", "from", "to", "relationType"]))))
def test_hostile_kg_jsonl_lines_are_drafts_or_bad_items_and_place_only_storable_entries(lines: list[str]) -> None:
    _read_and_place("kg-jsonl", lines)


@FUZZ
@given(_lines(_objects({"id": "m1", "memory": "likes tea", "user_id": "sam"},
                       ["id", "memory", "user_id", "agent_id", "run_id", "session_id", "app_id", "metadata",
                        "categories", "created_at", "updated_at", "expiration_date"])), st.booleans())
def test_hostile_mem0_records_are_drafts_or_bad_items_and_place_only_storable_entries(lines: list[str],
                                                                                      document: bool) -> None:
    _read_and_place("mem0", ["[" + ", ".join(lines) + "]"] if document else lines)


@FUZZ
@given(_lines(_objects(RECORD, list(RECORD))))
def test_hostile_export_lines_parse_to_storable_entries_or_a_reason(lines: list[str]) -> None:
    for line in lines:
        try:
            entry = parse_line(line, LIMITS)
        except ValueError:
            continue
        _storable_entry(entry)


@FUZZ
@given(st.one_of(
    st.lists(st.sampled_from(["a:", " b:", "  - x", "[", "]", "{", "}", "&a x", "*a", "!!binary x", "? k", "\x00",
                              "\ud800", "'", '"', "- [1, [2, [3]]]", "date: 2026-13-45", "k: v"]), max_size=30
             ).map("\n".join),
    st.integers(1, 800).map(lambda n: "k: " + "[" * n + "]" * n),
    st.integers(1, 300).map(lambda n: "".join(f"{' ' * i}k{i}:\n" for i in range(n))),
))
def test_hostile_front_matter_is_read_or_refused_with_a_reason(block: str) -> None:
    try:
        meta, body = split_front_matter(f"---\n{block}\n---\nbody\n")
    except ValueError:
        return
    assert isinstance(meta, dict) and body == "body\n"
