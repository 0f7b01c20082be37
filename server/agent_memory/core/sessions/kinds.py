"""What kind of lasting statement a clause is: a decision, a rule, a preference or a fact, said in the
first person ("I prefer tabs"), in the team's voice ("we never release on Fridays", "we run Kafka
3.6 on MSK") or impersonally ("the staging db is db-07 on port 6543", "every PR needs two
approvals"), or an imperative ("never cache auth tokens", "use pytest for anything new").

Each test reads one clause with its lead-in words stripped. What is said in the first person, and
imperatives, are read as in any conversation. What is read in the team's voice or impersonally,
and the looser ways of deciding ("let's ...", "we'll ...", "... then"), must be work talk
(`is_technical`: a number, a version, a host, a path, an identifier, or a word such as repo,
deploy, service, test): "the staging db is db-07" is a fact, "that's great, Caroline!" or "let's
keep going!" is not.
"""

from __future__ import annotations

import re

from agent_memory.core.sessions.lexicon import AMBIGUOUS, BASE_FORMS, VERBS

_I = re.IGNORECASE

# "that's a hard rule", "keep it that way": said after a statement, they make it a rule.
ANNOTATION = re.compile(
    r"^(?:that'?s (?:a |our |the )?(?:hard |standing |strict |team |house |firm )?rule\b|let'?s make (?:that|it|this) "
    r"a (?:rule|standard)\b|(?:that'?s |it'?s )?non-negotiable\b|full stop\b|keep it that way\b|no exceptions\b|"
    r"(?:that'?s |it'?s )(?:a |our )?(?:regulator|regulatory|legal|compliance|security|audit|company|hard) "
    r"(?:requirement|rule|policy)\b|\w+ enforces (?:it|that|this)\b|(?:it'?s|that'?s) (?:policy|the rule|the policy)\b)",
    _I)
ANNOTATION_WITHIN = re.compile(r",\s+" + ANNOTATION.pattern.lstrip("^"), _I)
# "I prefer that over FutureWarning", "I prefer that for any third-party SDK": about the clause before.
ANAPHORA = re.compile(r"^(?:i|we)\s+(?:really\s+)?(?:prefer|like|want)\s+(?:that|this|it)\b", _I)

# Decisions said plainly, in any conversation.
_DECISION = re.compile(
    r"\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+|finally\s+)?(?:decided|chose|picked(?!\s+up)|agreed|settled on|opted|went with|"
    r"are going with|will go with|will use|are going to use|are switching|switched to|will switch|are moving|"
    r"are dropping|are migrating|are adopting)\b|"
    r"\b(?:we're|we've|i've|we'll|i'll)\s+(?:now\s+|just\s+|also\s+)?(?:decided|going with|going to use|switching|"
    r"moving|dropping|migrating|adopting|go with|use|move to|switch to|migrate to)\b(?!\s+(?:on|forward|ahead|along|in|out|back|away|over|"
    r"house|together|to (?:a|the|my|our|see|hear))\b)|"
    r"\blet'?s\s+(?:go with|use|stick with|switch to|move to|adopt|standardi[sz]e on)\b|"
    r"\bdecision(?:\s+from\s+\w+)?(?:\s+is|\s+was)?\s*[:,]|\bthe decision is\b|\bwe agreed\b|"
    r"\b(?:the\s+)?team\s+(?:has\s+|have\s+)?(?:decided|agreed|chose|settled on|picked)\b|"
    r"(?<!keep )(?<!keeps )(?<!kept )\b(?:going|go) with\b|"
    r"\bstick(?:ing)? with\b|\bsettle on\b|^\W*(?!(?:here|there|that|this|so|what|how|as)\b)\w[\w.+-]* it is[.!]*$|"
    r"\bbehind a (?:feature )?flag\b|\bship it\b|\bgoes away\b|\bis dropped\b|\bin favou?r of\b|\breplaces\b|"
    r"^(?:switch|migrate|move|upgrade|downgrade)\s+(?:\S+\s+){0,3}to\b|^set\s+\S+\s+to\b|^pin\b|^turn (?:on|off)\b",
    _I)
# Looser: "let's batch per poll", "we'll stay on derive", "we stay on 5.3", "... instead", "... then".
_WEAK_DECISION = re.compile(
    r"\blet'?s\s+(?!not\b|make (?:that|it|this) a rule|see\b|talk\b|chat\b|discuss\b|think\b|look\b|check\b|"
    r"find out\b|figure\b|try to\b|hope\b|say\b|wait\b|us\b|them\b|me\b|you\b|keep (?:\w+ing|going|it up|up|in touch)\b)\w|"
    r"\b(?:we'll|we will|i'll)\s+(?:now\s+|just\s+)?(?:stay|stick|keep|move|put|rewrite|switch|drop|ship|batch|"
    r"split|pin|deprecate|replace|standardi[sz]e)\b(?!\s+(?:\w+ing|going|it up|up|in touch|posted)\b)|"
    r"\bwe\s+(?:now\s+|just\s+)?(?:stay|stick|switch|move)\b(?!\s+(?:\w+ing|going|up|in touch)\b)|"
    r"\bstay(?:ing)? on\b(?!\s+(?:track|top|course|the\s+\w+\s+side))|\binstead[.!]*$", _I)

_THEN = re.compile(r"\bthen[.!]*$", _I)  # "keep JWKS in-process then", "ok, SHA-256 then"

# Rules: obligations and limits said plainly, in any conversation.
_MODAL = re.compile(
    r"\b(?:must(?:n'?t| not)?|have to|has to|is required|are required|required to|is mandatory|are mandatory|"
    r"(?:is|are|isn'?t|aren'?t) not allowed|not allowed|never allowed|no more than|at most|at least|"
    r"can'?t exceed|cannot exceed|should (?:always|never|not)|deadline|due (?:by|on)|budget)\b", _I)
# ... and in work talk: "merges to main need two approvals", "every http.Server gets explicit timeouts",
# "cache TTLs can't exceed 60 s", "raw hex colors are never allowed", "WaitForCompletion is banned".
_WORK_MODAL = re.compile(
    r"\b(?:needs? to|requires?|(?<!\bwho )(?<!\bthat )(?<!\bwhich )needs?\s+(?:a|an|two|three|\d|explicit|at least|"
    r"every|all)\b|(?<!\bi )(?<!\byou )(?:can'?t|cannot|can not|may not)\s+(?!wait|believe|agree|beat|stop|imagine|"
    r"thank|help|tell|remember|say|express|describe|get over|handle|find|reproduce|see)|(?:is|are) never|banned|"
    r"forbidden|prohibited|gets?\s+(?:explicit|a|an)\b|shouldn'?t|should never)", _I)
# "It must have been great", "that must be hard", "I have to say": not obligations.
_NOT_MODAL = re.compile(
    r"\b(?:i|you)\s+(?:really\s+|still\s+|just\s+)?(?:can'?t|cannot|need|have to|had better|must)\b|\bmust-have\b|\bmust(?:'ve|\s+feel|"
    r"\s+be\s+(?:a|an|so|really|very|such|hard|tough|nice|great|fun|amazing|awesome|exciting|lovely|scary|difficult|"
    r"wonderful|special|proud|cool|beautiful)|\s+have\s+(?:been|had|felt|seen|taken|made|gone|known|loved)|\s+be[.!]*$|-\w+)\b|\ba must\b|\bha(?:ve|s) to (?:check|try|see|give|come|visit|get|catch|hang|meet|show|hear|read|watch)\b|\bha(?:ve|s) to (?:say|admit|go|run|tell|thank|ask)\b", _I)
_IMPERATIVE_RULE = re.compile(
    r"^(?:never|don'?t|dont|do not|always|avoid|make sure|ensure|remember to|be sure to)\b", _I)
# ... and in work talk: "nobody pushes directly to main", "no hardcoded strings".
_WORK_IMPERATIVE_RULE = re.compile(
    r"^(?:nobody|no one|only)\b|^no\s+(?!problem|worries|idea|way\b|thanks|rush|need\b|wait\b|one\b|doubt|luck|clue|longer|"
    r"breaking|errors?\b|issues?\b|problems?\b|changes?\b|failures?\b|warnings?\b|regressions?\b|conflicts?\b|"
    r"more\b)\S", _I)
# "we never release on Fridays", "nobody pushes directly to main": a verb of software work says it is work talk.
_WORK_VERBS = (r"release|deploy|merge|push|commit|ship|cache|pin|hardcode|expose|mock|bypass|squash|rebase|force-push|"
               r"publish|hotfix|roll back|backport|vendor|fork|migrate|edit|approve|log|store|test|build|run|review|"
               r"touch|call|write|skip|disable|patch|restart|delete|drop|accept|allow|send|copy|tag|page|rely|depend|"
               r"version|check")
_SHIPPING = (r"(?:\w+\s+)?(?:release|deploy|merge|push|commit|ship|cache|pin|hardcode|expose|mock|bypass|squash|rebase|"
             r"force-push|publish|hotfix|backport|vendor|fork|migrate|edit|approve)(?:e?s|d|ed)?\b")
_TEAM_RULE = re.compile(rf"^(?:we|our team|the team)\s+(?:always|never|only|don'?t|do not)\s+{_SHIPPING}|"
                        rf"^(?:nobody|no one)\s+{_SHIPPING}", _I)
_WORK_TEAM_RULE = re.compile(
    rf"^(?:we|our team|the team)\s+(?:(?:always|never|only|don'?t|do not)\s+(?:\w+\s+)?(?:{_WORK_VERBS})|"
    r"require|enforce|pin|squash|rebase)\b|"
    r"^(?:every|each|all|any)\s+[^,]{1,50}?\s+(?:must|needs?|has to|have to|gets?|goes|go|requires?)\b|"
    r"^everything\s+(?:goes|in|through)\b", _I)
_STANDING_IMPERATIVE = re.compile(r"\b(?:from now on|going forward|in (?:the )?future|every time|whenever|"
                                  r"as a rule)\b", _I)
_STANDING_LEAD = re.compile(r"^(?:from now on|going forward|in (?:the )?future|as a rule)[,:]?\s+", _I)
# Imperatives about how the assistant answers are standing by nature: "Reply in French".
_STYLE_IMPERATIVE = re.compile(r"^(?:reply|respond|answer|format|call me|address me|speak|talk to me|write "
                               r"(?:in|with|commit))\b", _I)

_PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|strongly\s+|usually\s+|generally\s+|definitely\s+|also\s+|much\s+|now\s+|"
    r"actually\s+|still\s+|no\s+longer\s+|kinda\s+|always\s+)*"
    r"(?:prefer|like|love|enjoy|hate|dislike|want|would rather|can'?t stand|don'?t like|dont like|do not like)\b"
    r"(?!\s+(?:it|that|this|you|to (?:tell|say|ask|know|show|share|see|hear|thank))\b)|"
    r"\bi'd (?:rather|like|prefer|love)\b|\bmy favou?rite\b|\bwe'd (?:rather|like|prefer)\b|\bper your preference\b",
    _I)
_IMPERATIVE_PREFERENCE = re.compile(
    r"^(?:(?:please|always|never)\s+)*(?:prefer|use|stick to|go for|favou?r|stay with|"
    r"keep\s+(?:that|this|the|it)\s+(?:\w+\s+)?style|keep\s+\S+\s+(?:out of|in|inside))\b", _I)
_PLEASE = re.compile(r"\bplease[.!]*$", _I)
_OVER = re.compile(r"\S\s+(?:over|instead of|rather than)\s+\S|,\s+not\s+\S", _I)

_PROFILE = re.compile(
    r"\bmy name is\b|\bi(?: am|'m) (?:a|an|the|based in|from|responsible for|working on|in charge of)\b|"
    r"\bi work (?:at|for|as|on|in)\b|\bi live in\b|\bi'm based\b|"
    r"\b(?:my|our) (?:team|role|job|company|manager|timezone|time zone|email|office|stack|project|repo|"
    r"repository|product|deadline|budget|customer|client)s?\b\s+(?:is|are|uses|runs|lives|sits)\b", _I)
_TEAM_FACT = re.compile(
    r"^(?:we|we're|we've|we all)\s+(?:(?:still|also|already|now|only|mostly|usually|currently|all|just)\s+)*"
    r"(?:run|use|support|promise|release|deploy|build|host|have|wrap|ship|target|keep|store|test|follow|own|"
    r"maintain|default|rely|publish|serve|get|see|handle|process|receive|standardi[sz]ed|are on|'re on|on|are|'re|"
    r"don'?t (?:use|have|need|run|"
    r"support)|do not (?:use|have|need|run|support))\b|^(?:our|the team'?s)\s+\S", _I)
# "we use Poetry", "we wrap Radix primitives": the team's tools, named.
_TEAM_TOOL = re.compile(r"^we\s+(?:\w+\s+)?(?:run|use|support|deploy|build|host|release|ship|wrap|target|pin)\b", _I)
_TEAM_SHIPS = re.compile(r"^we\s+(?:\w+\s+)?(?:deploy|release|ship)\b", _I)  # "we release with goreleaser"
# "X is Y", "X runs on Y", "X lives in Y", "it's built on oclif".
_IMPERSONAL = re.compile(
    r"^(?:it|that|there)'s\s|^(?!(?:i|you|he|she|they|we|there|here|what|which|who)\b)(?:[^\s,]+\s+){0,8}?"
    r"(?:is|are|'s|runs?|lives?|sits?|targets?|uses?|consumes?|builds?|hosts?|has|have|goes|points?|listens?|"
    r"deploys?|ships?|talks? to|reads? from|writes? to|depends? on|supports?|contains?|holds?|keeps?|stores?|"
    r"returns?|wraps?|defaults? to|does it|moved to|standardi[sz]ed on|underneath|are loaded|is loaded|"
    r"is built|are built|is hosted|are hosted|is managed|are managed|is deployed|are deployed)\b", _I)
# How a system is made and where it runs: a fact even when it names nothing capitalised ("built on oclif").
_BUILT = re.compile(r"\b(?:built (?:on|with)|runs? (?:on|in)|deployed (?:to|on)|hosted (?:on|in|at)|managed (?:with|by)|"
                    r"written in|loaded (?:through|via)|stored in)\s+\S", _I)
_NOT_FACT = re.compile(r"\b(?:was|were|had|went|did|got|used to|(?-i:(?:is|are) [a-z]+ing))\b", _I)
_DETAIL = re.compile(
    r"\d|[A-Za-z][\w-]*[./:_@#][\w]|\b[a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*|(?<=\s)[A-Z][a-z]+\w*|\b[\w-]+-[\w-]+\b")
_TECHNICAL = re.compile(r"\d|[A-Za-z][\w-]*[./:_@#][\w]|(?<![\w.])\.[A-Za-z]\w*|\w\(\)|\b[A-Za-z][a-z]+[A-Z]\w*|`")
_CAPS = re.compile(r"\b[A-Z]{2,}[A-Z0-9]*\b")
# Words of software work that ordinary talk seldom uses ("key", "story", "build", "job", "test" are
# left out: "balance is key", "it builds a strong bond", "Jon lost his job").
_WORK_WORDS = frozenset(
    "repo repos repository codebase monorepo microservice service services deploy deploys deployed deployment "
    "deployments ci cd pr prs branch branches merge merges merged prod production staging cluster clusters db "
    "database databases api apis endpoint endpoints server servers config configs configuration migration "
    "migrations schema schemas query queries cache caches cached queue queues pipeline pipelines workflow workflows "
    "lint linter linters logs logging metric metrics alert alerts cert certs certificate certificates token tokens "
    "secret secrets version versions versioned dependency dependencies deps package packages library libraries lib "
    "libs module modules component components directory dir changelog commit commits approval approvals pod pods "
    "bucket buckets column columns dataset datasets checkpoint checkpoints gpu gpus cpu heap thread threads timeout "
    "timeouts retry retries env sdk cli frontend backend framework compiler runtime binary binaries crate crates "
    "hotfix rollout rollback auth pii encryption tls ssl dns proxy kubernetes docker helm terraform ansible "
    "lockfile typescript python java kotlin golang rust javascript sql nosql postgres mysql redis kafka grpc http "
    "https json yaml toml csv pytest jest junit mock mocks mocking fixture fixtures refactor handler handlers "
    "middleware controller controllers webhook webhooks cron scheduler consumers partition partitions replica "
    "replicas shard shards monitoring dashboard dashboards oncall on-call outage runbook runbooks semver docstring "
    "docstrings annotation annotations storybook linting tests unittest codegen repl debugger stacktrace "
    "typecheck typed untyped async sync localhost subnet vpc iam s3 ec2 k8s".split())
# Capitals that are not names of software: "LGBTQ", "NYC".
_CHAT_CAPS = frozenset("LGBTQ LGBT LGBTQIA USA UK NYC LA OMG LOL BTW TV DIY ASAP BFF FYI IMO TBH OK".split())
_NAME_VERSION = re.compile(r"\b[A-Za-z][\w.+#-]*\s+v?\d+(?:\.\d+)*\b")
_AUX = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|does|do|did|will|would|can|could|should|must|may|might|shall|"
    r"isn'?t|aren'?t|wasn'?t|doesn'?t|don'?t|didn'?t|won'?t|can'?t|cannot)\b|\b(?:it|that|there|what|he|she|who|"
    r"here)'s\b|'re\b|'ll\b|'ve\b|'d\b|\b(?:i|we|they|you|he|she|it)\s+\w", _I)
_SUBJECT_FIRST = re.compile(r"^\S+\s+(?:\S+\s+){0,2}?(?:is|are|was|were|has|have|must|should|can|will|need|needs|go|"
                            r"goes|gets|get|live|lives|run|runs)\b(?!\s+(?:a|an|the)\b)", _I)
_PLAIN_WORD = re.compile(r"(?<![\w./-])[a-z]+(?![\w/-]|\.\w)")
_EXTRA_IMPERATIVES = frozenset(
    "mock pin bump rename revert refactor redo preload output enable disable install configure deploy ship skip "
    "drop set switch use make run add write fix keep put try do go leave update upgrade downgrade check review "
    "cut push merge split batch wrap return remove delete change move replace rewrite".split())


def is_technical(text: str) -> bool:
    """Work talk: a number, a version, a host, a path, an identifier (snake_case, camelCase, an
    acronym), or a word of software work (repo, deploy, service, test, cache, ...)."""
    if _TECHNICAL.search(text) or any(caps not in _CHAT_CAPS for caps in _CAPS.findall(text)):
        return True
    return any(w in _WORK_WORDS or w.endswith("s") and w[:-1] in _WORK_WORDS for w in re.findall(r"[a-z0-9-]+",
                                                                                                  text.lower()))


def has_detail(text: str) -> bool:
    """Names something specific: a number, a version, a host, a path, an identifier, a proper name
    (a capitalised word that does not open the clause)."""
    return bool(_DETAIL.search(text))


def has_verb(text: str) -> bool:
    """An auxiliary, a subject pronoun with its verb, or a word that is a verb (in a form that is
    seldom a noun: "runs", "moved", "prefers")."""
    if _AUX.search(text):
        return True
    words = _PLAIN_WORD.findall(text.lower())  # not the "sent" of "sent_at"
    return any(w in VERBS or (w in AMBIGUOUS and w not in BASE_FORMS) for w in words)


def is_fragment(text: str) -> bool:
    """No verb at all: "20 ms debounce", "half height", "4 pods, 6 threads each"."""
    return not has_verb(text) and not is_imperative(text)


def is_imperative(text: str) -> bool:
    """Opens with a verb's base form that is not the subject of a verb after it ("release branches
    are cut" is a statement)."""
    words = text.split()
    if words and words[0].lower() == "please":
        words = words[1:]
    first = words[0].lower().strip(",.:;!") if words else ""
    if not (first in _EXTRA_IMPERATIVES or (first in BASE_FORMS and first not in ("need", "want", "like", "love"))):
        return False
    return not _SUBJECT_FIRST.match(" ".join(words))


def is_decision(text: str, echoes: bool = False) -> bool:
    """"we decided on Redis", "let's go with pnpm", "ship it behind a flag then", and, in work talk
    or taking up words of the assistant's proposal (`echoes`), "let's batch per poll", "we'll stay
    on derive", "SHA-256 then"."""
    if _DECISION.search(text):
        return True
    if not (echoes or is_technical(text)):
        return False
    return bool(_WEAK_DECISION.search(text)) or bool(_THEN.search(text)) and (is_fragment(text) or is_imperative(text))


def rule_category(text: str, opens: bool = True) -> str | None:
    """"instruction" (an imperative: "Never cache auth tokens"), "constraint" (an obligation, ban or
    limit: "every PR needs two approvals", "we never release on Fridays"), or None. "No X" is a ban
    only when it `opens` a sentence ("No hardcoded strings."); after a comma it is a tail ("we go
    with a replica, no service split this quarter")."""
    if ANNOTATION_WITHIN.search(text):
        return "constraint"
    if not opens and re.match(r"^no\s", text, _I):
        return None
    rest = _STANDING_LEAD.sub("", re.sub(r"^(?:please|pls)\s+", "", text, flags=_I))  # "From now on, answer in ..."
    led = _STANDING_LEAD.match(text) is not None and not re.match(r"^(?:i|we|you|they|he|she|it|the|our|my|every|all|any|each)\b", rest, _I)
    work = is_technical(text)
    if _IMPERATIVE_RULE.match(rest) or _STANDING_IMPERATIVE.search(text) and is_imperative(rest) or \
            _STYLE_IMPERATIVE.match(rest) or led or work and _WORK_IMPERATIVE_RULE.match(rest):
        if re.match(r"^(?:always|never)\s+(?:use|prefer)\b", text, _I):
            return None  # "always use type hints": a preference
        return "instruction"
    if _NOT_MODAL.search(text):
        return None
    if _MODAL.search(text) or _TEAM_RULE.search(text) or work and (_WORK_TEAM_RULE.search(text) or
                                                                   _WORK_MODAL.search(text)):
        return "constraint"
    return None


def is_preference(text: str) -> bool:
    if _PREFERENCE.search(text) or _IMPERATIVE_PREFERENCE.search(text):
        return True
    if not is_technical(text) or not (is_fragment(text) or is_imperative(text)):
        return False
    return bool(_PLEASE.search(text) and is_fragment(text) or _OVER.search(text))  # "lowercase SQL keywords please"


def fact_category(text: str) -> str | None:
    """"profile" (about the speaker: "I work at Acme"), "fact" (about the team's system, in its voice or
    impersonally, naming something specific), or None."""
    if _PROFILE.search(text):
        return "profile"
    if _NOT_FACT.search(text) or is_imperative(text):
        return None
    if _TEAM_FACT.search(text) and (is_technical(text) or _TEAM_TOOL.search(text) and has_detail(text) or
                                    _TEAM_SHIPS.search(text)):
        return "fact"
    if _IMPERSONAL.match(text) and (is_technical(text) or _BUILT.search(text)):
        return "fact"
    if is_fragment(text) and _NAME_VERSION.search(text) and len(text.split()) <= 6:
        return "fact"  # "Xcode 15.4 on the build machines", "MySQL 8 underneath"
    return None
