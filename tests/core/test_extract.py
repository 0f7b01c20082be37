"""The extractive engine and the compaction summary: pure functions, no storage."""

from __future__ import annotations

import pytest

from agent_memory.core.extract import Turn, extract, third_person
from agent_memory.core.summary import summarise


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


def test_the_summary_keeps_to_its_budget_and_names_what_matters() -> None:
    turns = [Turn("user", f"Message {n} about the release train and its checklist.", at=f"2026-01-0{1 + n % 9}")
             for n in range(200)] + [Turn("user", "Never merge on Fridays.")]
    text = summarise("s9", turns, 600)
    assert len(text) <= 600
    assert text.startswith("Summary of 201 earlier turns of session s9 (201 user) from 2026-01-01 to 2026-01-09.")
    assert "- Never merge on Fridays." in text and "Topics: " in text
