"""Reading a clause's shape without a parser: is it work talk, does it have a verb, is it an
imperative, a fragment, a statement with a subject. Hand-made English word lists, kept short.

Work talk (`is_technical`) is what separates a developer's "the staging db is db-07" from a chat's
"that's great, Caroline!": a number, a version, a host, a path, an identifier, an acronym, or a
word of software work. The extractive engine keeps team-voice and impersonal statements only when
they are work talk; what people say in the first person it reads as in any conversation.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agent_memory.core.sessions.lexicon import AMBIGUOUS, BASE_FORMS, VERBS

_I = re.IGNORECASE
_CACHE = lru_cache(maxsize=4096)  # pure functions of a clause's text, asked several times per clause

# Numbers of work talk: versions (3.11, v2), hosts and ids (db-07, p99, :6543, #482, 10.0.0.0/8),
# sizes and rates (30s, 200ms, 4x, 12k, 2 GB, 24 partitions); not ages, years or ordinals ("4 years",
# "Cyberpunk 2077", "my 18th birthday").
_NUMBER = (r"\d+\.\d|\bv\d|[A-Za-z][-_]?\d|[:#]\d|\d+/\d|\b\d+(?!st\b|nd\b|rd\b|th\b)[A-Za-z%]|"
           r"\b\d+\s*(?i:ms|sec|secs|seconds|minutes|mins|min|hours|hrs|mb|gb|kb|tb|rps|qps|req|requests|rows|"
           r"partitions|replicas|pods|threads|cores|nodes|instances|workers|approvals|retries|items|bytes|lines|"
           r"users|errors|tests|jobs|days|percent)\b")  # the units in any case, the rest as written
_TECHNICAL = re.compile(_NUMBER + r"|\b(?:[A-Z]\w*|[a-z]+[A-Z]\w*)\s+v?\d{1,3}(?:\.\d+)*\b"
                        r"(?!\s*(?i:years?|months?|kids?|times))|[A-Za-z][\w-]*[./:_@#][\w]|(?<![\w.])\.[A-Za-z]\w*|\w\(\)|"
                        r"\b[A-Za-z][a-z]+[A-Z]\w*|`")
_CAPS = re.compile(r"\b[A-Z]{2,6}[0-9]*s?\b")
# Capitals that are not names of software: "LGBTQ", "NYC", "RPG".
_CHAT_CAPS = frozenset("LGBTQ LGBT LGBTQIA USA UK NYC LA OMG LOL BTW TV DIY ASAP BFF FYI IMO TBH OK RPG HP LOTR NBA "
                       "NFL MVP GOAT DM AM PM BBQ YA OMW IRL TTYL ILY BRB GG".split())
# Words of software work that ordinary talk seldom uses ("key", "story", "build", "job", "test" are
# left out: "balance is key", "it builds a strong bond", "Jon lost his job").
_WORK_WORDS = frozenset(
    "repo repository codebase monorepo microservice service deploy deployed deployment ci cd pr branch "
    "merge merged prod production staging cluster db database api endpoint server config configuration migration "
    "schema query queries cache cached queue pipeline workflow lint linter logs logging metric alert cert "
    "certificate token secret version versioned dependency dependencies deps package library lib module component "
    "directory dir changelog commit approval pod bucket column dataset checkpoint gpu cpu heap thread timeout retry "
    "retries env sdk cli frontend backend framework compiler runtime binary binaries crate hotfix rollout rollback "
    "auth pii encryption tls ssl dns proxy kubernetes docker helm terraform ansible lockfile typescript python java "
    "kotlin golang rust javascript sql nosql postgres mysql redis kafka grpc http https json yaml toml csv pytest "
    "jest junit mock mocking fixture refactor handler middleware controller webhook cron scheduler consumer "
    "partition replica shard monitoring dashboard oncall on-call outage runbook semver docstring annotation "
    "storybook linting tests unittest codegen repl debugger stacktrace typecheck typed untyped async sync localhost "
    "subnet vpc iam k8s function method container sudo ssh vm linter formatter test-suite endpoint".split())

# Verbs of software work the general lexicon lacks ("the exporter emits metrics", "tokens expire").
_WORK_VERBS = frozenset(
    "emit expire fire publish pull push sync export import invoke trigger spawn fork poll scrape stream batch retry "
    "proxy route forward redirect cache index shard replicate rotate renew mount bind listen serve return accept "
    "reject validate sign encrypt hash compress log page alert notify own handle process parse render compile "
    "bundle lint format generate schedule queue consume produce read write store persist load fetch send receive "
    "ship deploy release build test run use need require support target depend expose wrap talk point default "
    "cover call back sit host hold contain map resolve cap limit block gate own".split())
_AUX = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|will|would|can|could|should|must|may|might|shall|"
    r"isn'?t|aren'?t|wasn'?t|doesn'?t|don'?t|didn'?t|won'?t|can'?t|cannot)\b|\b(?:it|that|there|what|he|she|who|"
    r"here)'s\b|'re\b|'ll\b|'ve\b|'d\b|\b(?:i|we|they|you|he|she|it)\s+\w", _I)
_SUBJECT_FIRST = re.compile(r"^\S+\s+(?:\S+\s+){0,2}?(?<!\ba )(?<!\ban )(?<!\bthe )(?:is|are|was|were|has|have|must|"
                            r"should|can|will|need|needs|go|"
                            r"goes|gets|get|live|lives|run|runs)\b(?!\s+(?:a|an|the)\b)", _I)
_PLAIN_WORD = re.compile(r"(?<![\w./-])[a-z]+(?![\w/-]|\.\w)")
_IMPERATIVES = frozenset(
    "mock pin bump rename revert refactor redo preload output enable disable install configure deploy ship skip "
    "drop set switch use make run add write fix keep put try do go leave update upgrade downgrade check review "
    "cut push merge split batch wrap return remove delete change move replace rewrite ping tag squash rebase".split())
_NOT_IMPERATIVE = frozenset("need want like love hope wish".split())
_PRONOUN = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|me|you|you're|you've|your|he|he's|his|she|she's|her|we|what|which|"
                      r"who|here)$")
_DETAIL = re.compile(
    r"\d|[A-Za-z][\w-]*[./:_@#][\w]|\b[a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*|(?<=\s)[A-Z][a-z]+\w*|\b[\w-]+-[\w-]+\b")


class Gated:
    """A pattern searched only in texts holding one of its trigger substrings (lowercase): the same
    answers as the pattern alone, without scanning every clause with a long alternation."""

    def __init__(self, pattern: re.Pattern[str], *triggers: str) -> None:
        self.pattern = pattern
        self.triggers = re.compile("|".join(map(re.escape, triggers)), re.IGNORECASE)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.triggers.search(text) else None


def is_work_session(texts: list[str], tools: bool) -> bool:
    """A conversation about software work as a whole: it has tool turns, or a quarter of its turns
    are work talk (personal chat has about one in fifty)."""
    return tools or bool(texts) and sum(map(is_technical, texts)) >= 0.25 * len(texts)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9-]+", text.lower())


@_CACHE
def is_technical(text: str, names: bool = False) -> bool:
    """Work talk: a number, a version, a host, a path, an identifier (snake_case, camelCase, an
    acronym), or a word of software work (repo, deploy, service, cache, ...); with `names` (in a
    session that is work talk as a whole), any name too ("Zustand", "Vercel", "Stripe")."""
    if names and has_detail(text):
        return True
    if _TECHNICAL.search(text) or any(caps not in _CHAT_CAPS for caps in _CAPS.findall(text)):
        return True
    return any(w in _WORK_WORDS or w.endswith("s") and (w[:-1] in _WORK_WORDS or w[:-2] in _WORK_WORDS)
               for w in _words(text))


@_CACHE
def has_detail(text: str) -> bool:
    """Names something specific: a number, a version, a host, a path, an identifier, a proper name
    (a capitalised word that does not open the clause)."""
    return bool(_DETAIL.search(text))


def details(text: str) -> int:
    """How many specific things a text names: numbers, versions, hosts, paths, identifiers, names."""
    words = text.split()
    return len({w for i, w in enumerate(words) if _DETAIL.search(" " + w if i else w)})  # a capital opening says little


def _base(word: str) -> str | None:
    """The base form of a third-person verb ("emits" -> "emit", "goes" -> "go"), if it is one."""
    for base in (word[:-1], word[:-2], word[:-3] + "y" if word.endswith("ies") else ""):
        if base and (base in BASE_FORMS or base in _WORK_VERBS):
            return base
    return None


def _is_verb(word: str, after_plural: bool) -> bool:
    if word.endswith("ing"):
        return False  # "our logging setup": no finite verb
    if word in VERBS or (word in AMBIGUOUS and word not in BASE_FORMS):
        return True
    if word.endswith("s") and _base(word):
        return True
    return after_plural and (word in BASE_FORMS or word in _WORK_VERBS)


@_CACHE
def has_verb(text: str) -> bool:
    """An auxiliary, a subject pronoun with its verb, or a word that is a verb (in a form that is
    seldom a noun: "runs", "moved", "prefers")."""
    if _AUX.search(text):
        return True
    return any(w not in BASE_FORMS and (w in VERBS or w in AMBIGUOUS) and not w.endswith("ing")
               for w in _PLAIN_WORD.findall(text.lower()))


@_CACHE
def is_imperative(text: str) -> bool:
    """Opens with a verb's base form that is not the subject of a verb after it ("release branches
    are cut" is a statement)."""
    words = text.split()
    if words and words[0].lower().strip(",") in ("please", "pls"):
        words = words[1:]
    first = words[0].lower().strip(",.:;!") if words else ""
    if first in _NOT_IMPERATIVE or not (first in _IMPERATIVES or first in BASE_FORMS):
        return False
    return not _SUBJECT_FIRST.match(" ".join(words))


@_CACHE
def is_fragment(text: str) -> bool:
    """No verb at all: "20 ms debounce", "half height", "4 pods, 6 threads each" (a verb the word lists
    miss still makes a statement: "spark confs go in jobs/")."""
    return not has_verb(text) and not is_imperative(text) and not is_statement(text)


@_CACHE
def is_statement(text: str) -> bool:
    """A subject and then its verb, the subject not a pronoun: "billing owns the invoices table",
    "auth tokens expire after 15 minutes", "tests go in tests/unit", "the frontend is served from S3"."""
    if is_imperative(text):
        return False
    if re.match(r"^(?:it|that|there)(?:'s|\s+is|\s+are)\s", text, _I):
        return True  # "it's built on oclif"
    words = re.findall(r"[\w.:/@#'-]+", text.lower())
    if not words or _PRONOUN.match(words[0]):
        return False
    for index, word in enumerate(words[1:9], start=1):
        if _AUX.match(word) or word in ("is", "are", "has", "have", "'s"):
            return True
        previous = words[index - 1]
        plural = previous in ("they", "we") or previous.endswith("s") and not _is_verb(previous, False)
        if _is_verb(word, after_plural=plural):
            return True
    return False
