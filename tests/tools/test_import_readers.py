"""The import readers (pure: input in, drafts and bad items out) and placement, on the fixtures in
tests/fixtures/imports/ built from each format's published description."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from agent_memory.core.model.models import Layer, Scope
from agent_memory.core.model.rules import Limits
from agent_memory.importers import read_folder, read_lines
from agent_memory.importers.drafts import Bad, Draft
from agent_memory.importers.placement import Target, area, place

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "imports"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def split(items: list) -> tuple[list[Draft], dict[str, str]]:
    return [i for i in items if isinstance(i, Draft)], {i.where: i.why for i in items if isinstance(i, Bad)}


def lines_of(name: str, fmt: str) -> list:
    with (FIXTURES / name).open(encoding="utf-8") as source:
        return list(read_lines(fmt, source))


def test_notes_fill_defaults_and_report_bad_lines_by_number() -> None:
    drafts, bad = split(lines_of("notes.jsonl", "notes"))
    assert [d.where for d in drafts] == ["line 1", "line 2", "line 3", "line 8", "line 9", "line 10"]
    assert bad == {"line 5": "content must be a non-empty string",
                   "line 6": "unknown field 'tag' (known: content, id, tags, priority, confidence, layer, scope, "
                             "namespace, team, created_at, updated_at, expires_at)",
                   "line 7": "not JSON (Expecting value at column 1)"}
    release = drafts[2]
    assert release.key == "id:note-17" and release.tags == ("process", "releases") and release.layer == "meta"
    assert drafts[0].key.startswith("content:") and drafts[0].tags == ()
    target = Target("notes", Scope.AGENT, "alice", "red", "alice")
    entry = place(release, target, Limits(), NOW)
    assert (entry.created_at, entry.updated_at) == ("2025-02-01T11:00:00.000000Z", "2025-04-02T08:15:00.000000Z")
    assert entry.layer is Layer.META and entry.source.value == "import" and entry.team == "red"
    plain = place(drafts[0], target, Limits(), NOW)
    assert plain.created_at == plain.updated_at == "2026-01-02T03:04:05.000000Z"
    assert (plain.priority.value, plain.confidence, plain.layer, plain.owner_agent_id) == (
        "medium", 1.0, Layer.LONG_TERM, "alice")
    with pytest.raises(ValueError, match="priority must be one of low, medium, high; got 'urgent'"):
        place(drafts[3], target, Limits(), NOW)
    with pytest.raises(ValueError, match="created_at must be an ISO-8601 date-time.*; got 'last tuesday'"):
        place(drafts[4], target, Limits(), NOW)


def test_knowledge_graph_observations_and_relations_become_readable_entries() -> None:
    drafts, bad = split(lines_of("kg/memory.jsonl", "kg-jsonl"))
    contents = [d.content for d in drafts]
    assert contents[:3] == ["John_Smith (person): Speaks fluent Spanish", "John_Smith (person): Graduated in 2019",
                            "John_Smith (person): Prefers morning meetings"]
    assert "Maria_Garcia (person)" in contents
    assert "John_Smith (person) works_at Anthropic (organization)" in contents
    relation = next(d for d in drafts if "leads" in d.content)
    assert relation.tags == ("relation:leads", "entity:Maria_Garcia", "entity:Project_Orion")
    assert drafts[0].tags == ("entity:John_Smith", "type:person")
    assert set(bad) == {"line 6", "line 10", "line 11", "line 12"}
    assert bad["line 6"] == 'entity needs a non-empty string "entityType"'
    assert bad["line 11"] == "type must be \"entity\" or \"relation\", got 'observation'"
    assert bad["line 12"].startswith("not JSON (")
    repeated = [d for d in drafts if d.content == "John_Smith (person): Speaks fluent Spanish"]
    assert len(repeated) == 2 and repeated[0].key == repeated[1].key  # the same identity: stored once


def test_mem0_get_all_document_and_json_lines_map_owners_to_namespaces() -> None:
    drafts, bad = split(lines_of("mem0/get_all.json", "mem0"))
    assert bad == {"record 4": "memory must be a non-empty string",
                   "record 5": "categories must be a list of strings"}
    trip, _, seat, passport = drafts
    assert trip.subspace == "user/alex" and trip.key == "id:f4cbdb08-7062-4f3e-8eb2-9f5c80dfe64c"
    assert trip.tags == ("user:alex", "travel", "source:chat", "trip_year:2025")
    assert seat.subspace == "user/alex/agent/travel-assistant/run/booking-2025-06"
    assert passport.subspace == "user/sam_example.com" and "user:sam@example.com" in passport.tags
    entry = place(passport, Target("mem0", Scope.TEAM, "red/imported", "red", "alice"), Limits(), NOW)
    assert entry.namespace == "red/imported/user/sam_example.com" and entry.team == "red"
    assert entry.created_at == "2025-06-16T13:30:00.000000Z" and entry.expires_at == "2030-11-30T00:00:00.000000Z"
    assert place(seat, Target("mem0", Scope.AGENT, "alice", "red", "alice"), Limits(), NOW).updated_at == \
        "2025-06-13T09:12:00.000000Z"  # updated_at null: the creation date
    drafts, bad = split(lines_of("mem0/memories.jsonl", "mem0"))
    assert [d.where for d in drafts] == ["line 1", "line 2", "line 4", "line 5"]
    assert set(bad) == {"line 3", "line 6"}


def test_markdown_keeps_titles_tags_and_dates_and_skips_hidden_and_other_files() -> None:
    drafts, bad = split(list(read_folder("markdown", FIXTURES / "markdown", 32_000)))
    by_path = {d.where: d for d in drafts}
    assert set(by_path) == {"architecture-review.md", "ideas.md", "runbooks/restart-queue.md"}
    runbook = by_path["runbooks/restart-queue.md"]
    assert runbook.content.startswith("# Restarting the job queue\n\n1. Pause the producers")
    assert runbook.content.count("# Restarting the job queue") == 1  # the title is not repeated
    assert runbook.tags == ("runbook", "queue")
    assert (runbook.created_at, runbook.updated_at) == ("2025-01-10", "2025-05-02T10:00:00+00:00")
    assert by_path["ideas.md"].content.startswith("# ideas\n\nKeep a glossary")
    assert by_path["architecture-review.md"].updated_at  # the file's time when the front matter has none
    assert bad == {
        "bad-date.md": "front matter created: 'sometime in spring' is not an ISO-8601 date or date-time",
        "broken-front-matter.md": "front matter is not valid YAML on line 4 (expected ',' or ']', but got "
                                  "'<stream end>')",
        "only-front-matter.md": "no text after the front matter"}


def test_markdown_longer_than_the_limit_is_split_at_headings() -> None:
    drafts, _ = split(list(read_folder("markdown", FIXTURES / "markdown" / "architecture-review.md", 150)))
    assert [d.where for d in drafts] == ["architecture-review.md section 1", "architecture-review.md section 2"]
    assert drafts[1].content == ("# Architecture review, 4 March\n\n## Open questions\n\n"
                                 "- Who owns the replica's backups?")
    assert len({d.key for d in drafts}) == 2


def test_basic_memory_notes_keep_observations_relations_and_front_matter() -> None:
    drafts, bad = split(list(read_folder("basic-memory", FIXTURES / "basic-memory", 32_000)))
    by_path = {d.where: d for d in drafts}
    coffee = by_path["coffee/brewing-methods.md"]
    assert coffee.key == "permalink:coffee/brewing-methods"
    assert coffee.tags == ("coffee", "brewing", "type:note", "permalink:coffee/brewing-methods", "method",
                           "technique", "preference", "filter", "temperature")
    assert "- relates_to [[Bean Origins]]" in coffee.content and coffee.content.startswith("# Brewing Methods\n")
    assert (coffee.created_at, coffee.updated_at) == ("2025-02-11T08:30:00+00:00", "2025-03-01T09:00:00+00:00")
    ada = by_path["people/ada-lovelace.md"]
    assert "type:Person" in ada.tags and "history" in ada.tags and " " not in ada.tags  # `- [ ]` is a task
    assert by_path["projects/auth-design.md"].tags[:2] == ("auth", "security")  # a comma-separated string
    standup = by_path["projects/standup-notes.md"]
    assert standup.key == "path:projects/standup-notes.md" and standup.content.startswith("# standup-notes\n")
    assert bad == {"projects/broken-dates.md":
                   "front matter modified: 'the day after tomorrow' is not an ISO-8601 date or date-time"}


def test_placement_follows_the_namespace_rules_and_ids_are_stable() -> None:
    assert area("agent", None, "red", "alice") == (Scope.AGENT, "alice", "red")
    assert area("team", None, "red", "alice") == (Scope.TEAM, "red", "red")
    assert area("global", None, "red", "alice") == (Scope.GLOBAL, "global", None)
    with pytest.raises(ValueError, match=r"must be the team or start with it: red or red/\.\.\.; got blue/kb "
                                         r"\(set the team with --team blue\)"):
        area("team", "blue/kb", "red", "alice")
    with pytest.raises(ValueError, match="agent-scope namespace must be the owning agent's id"):
        area("agent", "bob/notes", "red", "alice")
    with pytest.raises(ValueError, match="scope must be one of"):
        area("galaxy", None, "red", "alice")
    draft = Draft(where="line 1", key="id:1", content="Water the plants on Fridays.")
    red = Target("notes", Scope.TEAM, "red/kb", "red", "alice")
    first, again = place(draft, red, Limits(), NOW), place(draft, red, Limits(), NOW)
    assert first.id == again.id and first.id.startswith("imp_") and len(first.id) == 30
    assert place(draft, Target("notes", Scope.TEAM, "red/other", "red", "alice"), Limits(), NOW).id != first.id
    assert place(draft, Target("kg-jsonl", Scope.TEAM, "red/kb", "red", "alice"), Limits(), NOW).id != first.id
    moved = Draft(where="line 2", key="id:2", content="x", scope="team", namespace="blue/kb")
    with pytest.raises(ValueError, match="team-scope namespace must be the team"):
        place(moved, red, Limits(), NOW)
    with pytest.raises(ValueError, match="content has 40 characters; the limit is 10"):
        place(Draft(where="l", key="k", content="x" * 40), red, Limits(max_content_chars=10), NOW)
