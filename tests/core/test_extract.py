"""The extractive engine and the compaction summary: pure functions, no storage."""

from __future__ import annotations

import pytest

from agent_memory.core.sessions.extract import Turn, extract, third_person
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
