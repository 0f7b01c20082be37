"""consolidation.judge keeps subjects apart (issue 23): a fact about one server, office, ticket or
person never reinforces or retires a fact about another, with the model's cosine (the packaged
embedder, offline) or by words without it; real changes and restatements about one subject still
are recognised."""

from __future__ import annotations

import pytest

from agent_memory.core.sessions.consolidation import Candidate, judge, lexical_similarity
from agent_memory.core.sessions.subjects import different_subjects, read
from agent_memory.storage.embedding.embedder import OnnxEmbedder, default_model_files


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder(default_model_files())


def by_meaning(embedder: OnnxEmbedder, old: str, new: str) -> str:
    a, b = embedder.embed_array([old, new])
    return judge(new, [Candidate("old", old, float(a @ b))], by_meaning=True).relation


def by_words(old: str, new: str) -> str:
    return judge(new, [Candidate("old", old, lexical_similarity(old, new))], by_meaning=False).relation


OTHER_SUBJECTS = [
    ("Server alpha has 64 GB of RAM.", "Server bravo has 128 GB of RAM."),
    ("Server alpha is in rack 14.", "Server bravo is in rack 14."),
    ("db-03 runs PostgreSQL 15.", "db-07 runs PostgreSQL 16."),
    ("Backups for db-03 run at 02:00 UTC.", "Backups for db-07 run at 04:00 UTC."),
    ("Ticket 4411 is assigned to Marta.", "Ticket 4412 is assigned to Marta."),
    ("PROJ-1203 is blocked on the security review.", "PROJ-1207 is blocked on the security review."),
    ("The file src/config/settings.py holds the database URL.", "The file src/config/logging.py holds the log format."),
    ("https://api.acme.io/v1/orders is rate limited to 100 requests a minute.",
     "https://api.acme.io/v1/users is rate limited to 500 requests a minute."),
    ("@marta reviews all database migrations.", "@joel reviews all database migrations."),
    ("The Berlin office opens at 8:00.", "The Munich office now opens at 9:00 for the summer."),
    ("the toronto team deploys on Wednesdays.", "the vancouver team now deploys on Thursdays."),
    ("Kenji is allergic to shellfish.", "Aiko is allergic to shellfish."),
    ("The user likes spicy food.", "The user's partner likes spicy food."),
    ("The user lives in Lyon.", "The user's parents moved to Montreal."),
    ("The user's daughter is named Emma.", "The user's niece is named Emma."),
    ("The staging database restarts at 02:00 UTC.", "The production database now restarts at 03:00 UTC."),
    ("The user is allergic to peanuts.", "It turns out the user is not allergic to penicillin after all."),
]


@pytest.mark.parametrize(("old", "new"), OTHER_SUBJECTS, ids=[new for _, new in OTHER_SUBJECTS])
def test_a_statement_about_another_subject_is_new_whatever_the_similarity(old: str, new: str,
                                                                          embedder: OnnxEmbedder) -> None:
    assert by_meaning(embedder, old, new) == "new"
    assert by_words(old, new) == "new"
    # even a cosine no real pair reaches cannot merge them
    assert judge(new, [Candidate("old", old, 0.99)], by_meaning=True).relation == "new"
    assert judge(new, [Candidate("old", old, 0.99)], by_meaning=False).relation == "new"


CHANGES = [
    ("The user's manager is Marguerite.", "The user's manager is now Tomasz after the reorganisation."),
    ("The user lives in Lyon.", "The user moved to Montreal."),
    ("The Berlin office opens at 8:00.", "The Berlin office now opens at 9:00 for the summer."),
    ("Server alpha has 64 GB of RAM.", "Server alpha was upgraded to 128 GB of RAM last week."),
    ("db-03 runs PostgreSQL 15.", "db-03 was upgraded to PostgreSQL 16 over the weekend."),
    ("Ticket 4411 is assigned to Marta.", "Ticket 4411 was reassigned to Joel because Marta is on leave."),
    ("The API server listens on port 8080.", "The API server listens on port 8081."),
    ("The user is allergic to penicillin.", "It turns out the user is not allergic to penicillin after all."),
]


@pytest.mark.parametrize(("old", "new"), CHANGES, ids=[new for _, new in CHANGES])
def test_a_change_about_the_same_subject_supersedes(old: str, new: str, embedder: OnnxEmbedder) -> None:
    assert by_meaning(embedder, old, new) == "changes"


RESTATEMENTS = [
    ("The user's daughter Lena plays the violin.", "Lena, the user's daughter, plays violin."),
    ("The user's brother, Idris, is a chef in Leeds.", "Idris, a chef in Leeds, is the user's brother."),
    ("Server alpha has 64 GB of RAM.", "Server alpha's RAM is 64 GB."),
    ("db-03 runs PostgreSQL 15.", "PostgreSQL 15 is what runs on db-03."),
    ("The user's manager is Marguerite.", "Marguerite manages the user."),
]


@pytest.mark.parametrize(("old", "new"), RESTATEMENTS, ids=[new for _, new in RESTATEMENTS])
def test_a_restatement_about_the_same_subject_reinforces(old: str, new: str, embedder: OnnxEmbedder) -> None:
    assert by_meaning(embedder, old, new) == "same"


def test_identifiers_and_names_are_the_same_subject_in_any_casing() -> None:
    assert not different_subjects(read("Server Alpha has 64 GB of RAM."), read("server alpha has 64 GB of RAM."))
    assert not different_subjects(read("DB-03 runs PostgreSQL 15."), read("db-03 runs PostgreSQL 15."))
    assert different_subjects(read("Server Alpha has 64 GB of RAM."), read("server bravo has 64 GB of RAM."))


def test_a_subject_said_more_fully_is_still_the_same_subject() -> None:
    assert not different_subjects(read("The release deadline is March 15."), read("The release is due on March 15."))
    assert not different_subjects(read("Server alpha has 64 GB of RAM."), read("The server has 128 GB of RAM now."))


def test_a_value_that_changed_is_not_part_of_the_subject() -> None:
    old, new = read("The service uses Python 3.11."), read("The service was upgraded to Python 3.12.")
    assert old.subject == new.subject == {"servic"}
    assert different_subjects(read("Python 3.11 is the default on the build agents."),
                              read("Python 3.12 is the default on the developer laptops."))


def test_without_the_model_a_restatement_that_adds_nothing_still_reinforces() -> None:
    assert by_words("The staging database restarts at 02:00 UTC.",
                    "At 02:00 UTC the staging database restarts.") == "same"
    assert by_words("The user is allergic to penicillin.", "The user is allergic to shellfish.") == "new"
    assert by_words("The API server listens on port 8080.", "The API server listens on port 8081.") == "changes"


def test_a_second_change_of_the_same_fact_supersedes_the_first_change(embedder: OnnxEmbedder) -> None:
    assert by_meaning(embedder, "The user moved to Montreal.", "The user moved to Toronto last week.") == "changes"
    assert by_meaning(embedder, "The user now lives in Lisbon.", "These days the user lives in Lisbon.") == "same"
    assert by_meaning(embedder, "Server bravo now has 128 GB of RAM.", "Server alpha now has 96 GB of RAM.") == "new"
