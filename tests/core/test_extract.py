"""The extractive engine and the compaction summary: pure functions, no storage."""

from __future__ import annotations

import pytest

from agent_memory.core.sessions.extract import Turn, extract, extract_with_sources, third_person
from agent_memory.core.sessions.summary import Rarity, chunk, size, summarise


@pytest.mark.parametrize(("said", "speaker", "written"), [
    ("I prefer tabs over spaces.", "The user", "The user prefers tabs over spaces."),
    ("I really like my new desk.", "Dana", "Dana really likes Dana's new desk."),
    ("I'm based in Lisbon and I work for Acme.", "The user",
     "The user is based in Lisbon and the user works for Acme."),
    ("I chose Postgres for the ledger.", "Sam", "Sam chose Postgres for the ledger."),
    ("I watch films with my family.", "The user", "The user watches films with the user's family."),
    ("I don't like meetings before ten.", "The user", "The user doesn't like meetings before ten."),
])
def test_first_person_becomes_third_person(said: str, speaker: str, written: str) -> None:
    assert third_person(said, speaker) == written


@pytest.mark.parametrize("chatter", [
    "Thanks so much!", "lol", "Hey, how are you?", "What time is it in Berlin?", "Don't give up!",
    "Keep it up, you're doing great!", "It must have been amazing.", "That must be so hard for you.",
    "Always here to help.", "Never saw this coming.", "I have to say, that was fun.", "Sounds good to me.",
])
def test_chit_chat_gives_nothing(chatter: str) -> None:
    assert extract([Turn("user", chatter)], 10) == []


@pytest.mark.parametrize(("said", "kind", "category"), [
    ("Never force-push to main.", "rule", "instruction"),
    ("From now on, answer in British English.", "rule", "instruction"),
    ("The API must respond within 200 ms at p95.", "rule", "constraint"),
    ("Our budget for the pilot is 40k euros.", "rule", "constraint"),
    ("We decided to ship the beta in March.", "fact", "decision"),
    ("Let's go with the blue theme for the dashboard.", "fact", "decision"),
    ("I love hiking in the Alps every summer.", "fact", "preference"),
    ("My manager is Priya Shah in the Berlin office.", "fact", "profile"),
])
def test_statements_are_classified(said: str, kind: str, category: str) -> None:
    [insight] = extract([Turn("user", said)], 10)
    assert (insight.kind, insight.category) == (kind, category)
    assert 0.5 <= insight.confidence <= 0.9


def test_tool_output_and_assistant_small_talk_are_ignored_but_shared_decisions_kept() -> None:
    turns = [Turn("tool", "Never deploy: the build failed with 3 errors."),
             Turn("assistant", "I always enjoy these chats with you."),
             Turn("assistant", "So we decided to use Redis for the rate limiter.")]
    assert [(i.content, i.confidence) for i in extract(turns, 10)] == [
        ("We decided to use Redis for the rate limiter.", 0.6)]


def test_repeats_are_kept_once_and_the_strongest_come_first() -> None:
    turns = [Turn("user", "I like green tea in the afternoon."), Turn("user", "Never schedule calls on Fridays."),
             Turn("user", "I like green tea in the afternoon!")]
    assert [i.content for i in extract(turns, 10)] == ["Never schedule calls on Fridays.",
                                                       "The user likes green tea in the afternoon."]
    assert len(extract(turns, 1)) == 1


def _at(day: int, hour: int = 10) -> str:
    return f"2026-01-{day:02d}T{hour:02d}:00:00.000000Z"


def test_chunks_split_at_time_gaps_where_positions_skip_and_past_the_turn_count() -> None:
    turns = [(n, Turn("user", f"turn {n}", at=_at(day)), n) for n, day in
             [(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 2), (7, 2), (9, 2), (10, 3)]]
    assert [[n for n, _, _ in part] for part in chunk(turns, 2, 3600)] == [[1], [2, 3], [4, 5], [6, 7], [9], [10]]
    assert [[n for n, _, _ in part] for part in chunk(turns, 4, 0)] == [[1, 2, 3], [4, 5, 6, 7], [9, 10]]
    assert chunk(turns[:1], 1, 0) == [turns[:1]]


def test_a_chunk_summary_names_its_turns_and_keeps_their_details_within_its_size() -> None:
    turns = [Turn("user", "Hi there!", name="Ana", at=_at(1)),
             Turn("user", "I moved to Tromsø in March 2019 to teach chemistry at the university, it was a big step "
                          "for me and my family.", name="Ana", at=_at(1)),
             Turn("assistant", "Never deploy the billing service on Fridays, the on-call team is too small for that.",
                  at=_at(1))]
    assert size(turns, 800) == 100  # the turns average 68 characters: a summary always has 100
    text = summarise([41, 42, 43], turns, 800)
    assert len(text) <= 100
    lines = text.splitlines()
    assert lines[0] == "Turns 41-43 (2026-01-01):" and len(lines) == 3  # the greeting is left out
    assert lines[1].startswith("Ana: ") and lines[2].startswith("assistant: ")
    for detail in ("Tromsø", "March", "2019", "Never", "Fridays"):
        assert detail in text, (detail, text)
    # Over several days, each day's first line is marked with its date.
    trip = [Turn("user", "We drove from Oslo to Bergen on the E16 and stopped at the Borgund stave church, which "
                         "dates from around 1180 and is remarkably well preserved.", name="Ana", at=_at(1)),
            Turn("user", "We also rode the Flåm railway, which climbs 863 metres in twenty kilometres, one of the "
                         "steepest lines anywhere.", name="Ben", at=_at(2))]
    lines = summarise([7, 8], trip, 800).splitlines()
    assert lines[0] == "Turns 7-8 (2026-01-01 to 2026-01-02):"
    assert lines[1].startswith("(2026-01-01) Ana: ") and lines[2].startswith("(2026-01-02) Ben: ")
    assert "1180" in lines[1] and "863" in lines[2]
    # A summary never outgrows its cap; short turns are kept whole (less filler words).
    assert len(summarise([1, 2], turns[1:2] * 80, 150)) <= 150
    short = [Turn("user", "I play the cello on Sundays.", at=_at(1)),
             Turn("user", "My dog is called Pixel.", at=_at(1))]
    assert size(short, 800) == 100
    assert summarise([1, 2], short, 800).splitlines()[1:] == ["user: Play cello on Sundays.",
                                                              "user: My dog called Pixel."]


def test_a_long_gist_keeps_its_rarest_words_first() -> None:
    turns = [Turn("user", f"Yesterday the weather in town was nice and warm, lovely for walks number {n}.", at=_at(1))
             for n in range(20)]
    detail = Turn("user", "Yesterday the weather in town was nice and warm, lovely, and I met Professor Okonkwo "
                          "from Lagos who studies volcanic glass at a laboratory near the harbour every summer.",
                  at=_at(1))
    text = summarise([1], [detail], 100, Rarity([*turns, detail]))
    assert len(text) <= 100
    for word in ("Okonkwo", "Lagos", "volcanic"):
        assert word in text, text


# Developer conversations (issue #37 item 2): what a developer would sign, and the hard negatives.

def _said(*turns: tuple[str, str]) -> list[tuple[str, str, str]]:
    """(kind, category, content) of every insight from (role, text) turns, in the order found."""
    found = extract_with_sources([Turn(role, text) for role, text in turns], 100)
    return [(s.insight.kind, s.insight.category, s.insight.content) for s in sorted(found, key=lambda s: s.start)]


def test_an_impersonal_fact_with_numbers_gives_one_fact_per_clause_and_keeps_its_details() -> None:
    facts = _said(("user", "Our staging database is db-07 on port 6543; the deploy window is Thursdays 14:00 UTC."))
    assert facts == [("fact", "fact", "Our staging database is db-07 on port 6543."),
                     ("fact", "fact", "The deploy window is Thursdays 14:00 UTC.")]


@pytest.mark.parametrize(("said", "content"), [
    ("CI runs on self-hosted runners in eu-west-1", "CI runs on self-hosted runners in eu-west-1."),
    ("fyi this repo is still on Go 1.21", "This repo is still on Go 1.21."),
    ("we run Kafka 3.6 on MSK, the order-events topic has 24 partitions.",
     "We run Kafka 3.6 on MSK, the order-events topic has 24 partitions."),
    ("We don't use Docker for this service.", "We don't use Docker for this service."),
])
def test_team_voice_and_impersonal_facts_are_kept_as_said(said: str, content: str) -> None:
    assert _said(("user", said)) == [("fact", "fact", content)]


@pytest.mark.parametrize("said", [
    "we never release on Fridays", "every PR needs two approvals", "all migrations must be reversible",
    "nobody pushes directly to main", "raw hex colors are never allowed in components",
    "if a migration fails, roll back before anything else", "no secrets in environment files, ever",
])
def test_rules_in_the_teams_voice_are_rules(said: str) -> None:
    [(kind, category, _)] = _said(("user", said))
    assert kind == "rule" and category in ("constraint", "instruction")


@pytest.mark.parametrize("said", [
    "let's go with pnpm", "we'll keep Postgres for the ledger", "ship it behind a flag then",
    "going with pnpm for the monorepo", "We decided on Redis for the session store.",
])
def test_decisions_need_no_word_decided(said: str) -> None:
    assert [(kind, category) for kind, category, _ in _said(("user", said))] == [("fact", "decision")]


def test_a_statement_taken_back_in_the_same_turn_is_dropped_and_its_correction_kept() -> None:
    kept = _said(("user", "bump celery to 5.4 while you're in there, actually no, scrap that, "
                          "we stay on 5.3 until django-celery-beat supports 5.4."))
    assert kept == [("fact", "decision", "We stay on 5.3 until django-celery-beat supports 5.4.")]
    assert _said(("user", "set the pool size to 20, no wait, 30")) == [
        ("fact", "decision", "30 (instead of: set the pool size to 20).")]
    assert _said(("user", "use OnPush too, eh, we already default to OnPush, never mind")) == [
        ("fact", "fact", "We already default to OnPush.")]


@pytest.mark.parametrize("said", [
    "Run the ios tests too.", "rename this", "don't touch that file for now", "add a retry to the uploader",
    "can you bump the chart version and redeploy", "help me look at the logs fast",
])
def test_one_off_requests_about_the_task_at_hand_are_not_kept(said: str) -> None:
    assert _said(("user", said)) == []


def test_a_standing_request_is_a_rule_or_a_preference() -> None:
    assert _said(("user", "always run the ios tests before a release")) == [
        ("rule", "instruction", "Always run the ios tests before a release.")]
    assert _said(("user", "use pytest, not unittest, for anything new")) == [
        ("rule", "preference", "Use pytest, not unittest, for anything new.")]
    assert _said(("user", "I prefer errgroup over hand-rolled WaitGroups btw")) == [
        ("fact", "preference", "The user prefers errgroup over hand-rolled WaitGroups.")]


@pytest.mark.parametrize(("said", "why"), [
    ("Should we use Redis for the cache?", "question"),
    ("is clap's derive API slower to compile than the builder API", "question"),
    ("If we moved to Kafka we'd need more brokers", "hypothetical"),
    ("maybe we could switch acmectl to builder", "hypothetical"),
    ("The bug is probably that round runs on a float before the Decimal conversion.", "hypothetical"),
    ("Priya claims the cache is the bottleneck", "quote"),
    ("the docs say the API is idempotent", "quote"),
    ("We haven't decided on a key rotation schedule.", "negated"),
    ("3.13 support isn't decided yet btw", "negated"),
    ("the build is failing on main since this morning", "status"),
])
def test_questions_hypotheticals_quotes_negations_and_status_are_not_kept(said: str, why: str) -> None:
    assert _said(("user", said)) == [], why


def test_of_the_assistant_only_restatements_are_kept_and_its_filler_and_narration_never() -> None:
    assert _said(("assistant", "Noted."), ("assistant", "Sure, I can help with that."),
                 ("assistant", "I've converted refunds.py to Decimal and added a test. All 38 tests pass."),
                 ("assistant", "My guess is the context is never cancelled, so each message leaks a goroutine.")) == []
    [insight] = extract([Turn("assistant", "Understood, every goroutine must take a context.Context.")], 10)
    assert (insight.kind, insight.content, insight.confidence) == (
        "rule", "Every goroutine must take a context.Context.", 0.6)


def test_a_short_answer_takes_its_kind_from_the_assistants_question() -> None:
    assert _said(("assistant", "How many auth-service replicas run in prod?"), ("user", "6 replicas in prod")) == [
        ("fact", "fact", "6 replicas in prod.")]
    assert _said(("assistant", "What debounce window do you want?"), ("user", "20 ms debounce thanks")) == [
        ("fact", "decision", "20 ms debounce.")]
    assert _said(("assistant", "Should I fix both now?"), ("user", "yes fix both")) == []
    assert _said(("assistant", "We could either install the extra or mock the import with autodoc_mock_imports."),
                 ("user", "mock grpc with autodoc_mock_imports, installing it on RTD is slow")) == [
        ("fact", "decision", "Mock grpc with autodoc_mock_imports.")]


def test_code_logs_stack_traces_and_tool_output_give_nothing() -> None:
    assert _said(("user", "it fails like this:\n```\nTraceback (most recent call last):\n  File \"app.py\", line 3\n"
                          "ValueError: never deploy\n```"),
                 ("tool", "ERROR - never deploy on Fridays: the build failed with 3 errors"),
                 ("user", "$ kubectl get pods -n billing\nbilling-api-7d9 1/1 Running")) == []


def test_personal_chat_reads_as_before_without_the_work_talk_rules() -> None:
    assert _said(("user", "That's great, Caroline!"), ("user", "Let's keep going and chase our dreams!"),
                 ("user", "It's gonna be my 4th one!"), ("user", "Can't wait to see it!")) == []
    assert _said(("user", "I love hiking in the Alps every summer.")) == [
        ("fact", "preference", "The user loves hiking in the Alps every summer.")]


def test_each_insight_names_the_span_it_was_said_in() -> None:
    text = "thanks! we release with goreleaser, tags are semver with a v prefix. can you cut v2.4.0?"
    [sourced] = extract_with_sources([Turn("user", text)], 10)
    assert sourced.turn == 0 and text[sourced.start:sourced.end] == "we release with goreleaser, tags are semver " \
                                                                    "with a v prefix."
