"""What kind of lasting statement a clause is: a decision, a rule, a preference or a fact, said in the
first person ("I prefer tabs"), in the team's voice ("we never release on Fridays", "we run Kafka
3.6 on MSK") or impersonally ("the staging db is db-07 on port 6543", "every PR needs two
approvals"), or as an imperative ("never cache auth tokens", "use pytest for anything new").

Each test reads one clause with its lead-in words stripped. What is said in the first person, and
plain imperatives, are read as in any conversation; what is said in the team's voice or
impersonally, and the looser ways of deciding ("let's ...", "we'll ...", "... then"), only in
work talk (`worktalk.is_technical`; with `names`, in a session that is work talk as a whole, a
name counts too): "the staging db is db-07" is a fact, "that's great, Caroline!" or "let's keep
going!" is not.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agent_memory.core.sessions.worktalk import (
    Gated,
    details,
    has_detail,
    is_fragment,
    is_imperative,
    is_statement,
    is_technical,
)

_I = re.IGNORECASE
_CACHE = lru_cache(maxsize=4096)  # pure functions of a clause's text, asked several times per clause

# "that's a hard rule", "keep it that way": said after a statement, they make it a rule.
ANNOTATION = re.compile(
    r"^(?:that'?s (?:a |our |the )?(?:hard |standing |strict |team |house |firm )?rule\b|let'?s make (?:that|it|this) "
    r"a (?:rule|standard)\b|(?:that'?s |it'?s )?non-negotiable\b|full stop\b|keep it that way\b|no exceptions\b|"
    r"(?:that'?s |it'?s )(?:a |our )?(?:regulator|regulatory|legal|compliance|security|audit|company|hard) "
    r"(?:requirement|rule|policy)\b|\w+ enforces (?:it|that|this)\b|"
    r"(?:it'?s|that'?s) (?:policy|the rule|the policy)\b)",
    _I)
ANNOTATION_WITHIN = re.compile(r",\s+" + ANNOTATION.pattern.lstrip("^"), _I)
# "I prefer that over FutureWarning", "I prefer that for any third-party SDK": about the clause before.
ANAPHORA = re.compile(r"^(?:i|we)\s+(?:really\s+)?(?:prefer|like|want)\s+(?:that|this|it)\b", _I)
# "decision: ...", "hard rule: ...", "style: ...": a label that says the kind.
_LABELLED = re.compile(
    r"^(?:(?P<decision>(?:the\s+|final\s+|my\s+)?(?:decision|decided|verdict|answer|agreed|conclusion|plan|call))|"
    r"(?P<rule>(?:hard\s+|house\s+|team\s+|standing\s+|ground\s+|one\s+)?(?:rule|policy|convention|requirement)s?)|"
    r"(?P<preference>(?:my\s+)?(?:preference|style|nit)))\b[^:]{0,20}:\s*(?=\S)", _I)

# Decisions said plainly, in any conversation.
_DECISION = Gated(re.compile(
    r"\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+|finally\s+)?(?:decided|chose|picked(?!\s+up)|agreed|settled on|opted|"
    r"went with|are going with|will go with|will use|are going to use|are switching|switched to|will switch|"
    r"are moving|are dropping|are migrating|are adopting)\b|"
    r"\b(?:we're|we've|i've|we'll|i'll)\s+(?:now\s+|just\s+|also\s+)?(?:decided|going with|going to use|switching|"
    r"moving|dropping|migrating|adopting|go with|use|move to|switch to|migrate to)\b(?!\s+(?:on|forward|ahead|along|"
    r"in|out|back|away|over|house|together|to (?:a|the|my|our|see|hear))\b)|"
    r"\blet'?s\s+(?:go with|use|stick with|switch to|move to|adopt|standardi[sz]e on)\b|"
    r"\b(?:the\s+)?team\s+(?:has\s+|have\s+)?(?:decided|agreed|chose|settled on|picked)\b|"
    r"\bdecision(?:\s+from\s+\w+)?(?:\s+is|\s+was)?\s*[:,]|\bthe decision is\b|\bwe agreed\b|"
    r"(?<!keep )(?<!keeps )(?<!kept )\b(?:going|go) with\b|\bstick(?:ing)? with\b|\bsettle on\b|"
    r"^\W*(?!(?:here|there|that|this|so|what|how|as)\b)\w[\w.+-]* it is[.!]*$|"
    r"\bbehind a (?:feature )?flag\b|\bship it\b|\bgoes away\b|\bis dropped\b|\bin favou?r of\b|\breplaces\b|"
    r"^(?:switch|migrate|move|upgrade|downgrade)\s+(?:\S+\s+){0,3}to\b|^set\s+\S+\s+to\b|^pin\b|^turn (?:on|off)\b|"
    r"^(?:increase|decrease|raise|lower|bump|reduce|change|set)\s+(?:the\s+)?[\w\s.-]{1,30}?\s+to\s+\S*\d", _I),
    "decid", "chose", "picked", "agreed", "settle", "opted", "went with", "going", "will ", "switch",
    "moving", "dropping", "migrat", "adopt", "'ll", "let", "team", "decision", "go with", "stick", " it is",
    "flag", "ship it", "goes away", "dropped", "favo", "replaces", "move", "upgrade", "downgrade", "set ",
    "pin", "turn ", "increase", "decrease", "raise", "lower", "bump", "reduce", "change")
# In work talk, or taking up the assistant's words: "let's batch per poll", "we'll stay on derive",
# "we stay on 5.3", "the plan is to move reporting", "switching to uv", "we'll hold off on GraphQL".
_WEAK_DECISION = Gated(re.compile(
    r"\blet'?s\s+(?!not\b|make (?:that|it|this) a rule|see\b|talk\b|chat\b|discuss\b|think\b|look\b|check\b|"
    r"find out\b|figure\b|try to\b|hope\b|say\b|wait\b|us\b|them\b|me\b|you\b|keep (?:\w+ing|going|it up|up|in "
    r"touch)\b)\w|"
    r"\b(?:we'll|we will|i'll)\s+(?:now\s+|just\s+|also\s+)?(?!see\b|talk\b|think\b|figure\b|check\b|look\b|find\b|get "
    r"back\b|need\b|have to\b|be\b|probably\b|try\b|let\b|keep (?:\w+ing|going|it up|up|in touch|you)\b)\w|"
    r"\b(?:we're|we are|i'm)\s+going to\s+(?!see\b|talk\b|think\b|need\b|have\b|be\b|try\b)\w|"
    r"\bwe\s+(?:now\s+|just\s+)?(?:stay|stick|switch|move)\b(?!\s+(?:\w+ing|going|up|in touch)\b)|"
    r"\bstay(?:ing)? on\b(?!\s+(?:track|top|course|the\s+\w+\s+side))|\binstead[.!]*$|\bthe plan is\b|"
    r"^then,?\s+(?:we|let'?s|i'll|i will)\s|"  # "ok then we use Phoenix.Presence": the answer to what came before
    r"^we\s+(?:\w+\s+)?(?:moved|migrated|switched|standardi[sz]ed|consolidated|upgraded|downgraded)\b[^,;]{0,40}?"
    r"\b(?:to|on|onto)\b|"
    r"^(?:switching|moving|migrating|going|sticking|staying)\s+(?:to|with|on)\b|\bhold(?:ing)? off\b|\bpostpone\b|"
    r"\b(?:we're|we are)\s+(?:now\s+|also\s+)?(?:adding|removing|deprecating|renaming|splitting|merging|replacing|"
    r"upgrading|downgrading|freezing|keeping|pinning|standardi[sz]ing|consolidating|retiring|sunsetting|introducing|"
    r"rolling out|enabling|disabling|turning)\b|\b(?:is|are) going away\b|"
    r"\bdefer\b|\bpark\b|\b(?:is|are)\s+(?:enough|fine|good enough|ok|okay|the way to go)\b|"
    r"\b(?:starting|from|as of|effective)\s+(?:q[1-4]|next (?:week|month|quarter|sprint|release)|(?:jan|feb|mar|apr|"
    r"jun|jul|aug|sep|oct|nov|dec)\w*|monday|tuesday|wednesday|thursday|friday)|"
    r"\b(?:starting (?:with |from |at )?|as of |effective )v?\d", _I),  # "from 0.84 to 0.77" is a change seen, not made
    "let", "'ll", "will", "going", "we", "stay", "then", "instead", "plan", "switching", "moving", "migrating",
    "sticking", "hold", "postpone", "defer", "park", "enough", "fine", "ok", "okay", "way to go",
    "starting", "from", "as of", "effective")
_THEN = re.compile(r"\bthen[.!]*$", _I)  # "keep JWKS in-process then", "ok, SHA-256 then"

# Rules said plainly, in any conversation: obligations and limits.
_MODAL = Gated(re.compile(
    r"\b(?:must(?:n'?t| not)?|have to|has to|is required|are required|required to|is mandatory|are mandatory|"
    r"(?:is|are|isn'?t|aren'?t) not allowed|not allowed|never allowed|(?:isn'?t|aren'?t) (?:allowed|permitted)|"
    r"no more than|at most|at least|"
    r"can'?t exceed|cannot exceed|should (?:always|never|not)|deadline|due (?:by|on)|budget)\b", _I),
    "must", "have to", "has to", "required", "mandatory", "allowed", "permitted", "no more than", "at most",
    "at least", "exceed", "should", "deadline", "due", "budget")
# ... and in work talk: "merges to main need two approvals", "cache TTLs can't exceed 60 s", "raw hex
# colors are never allowed", "WaitForCompletion is banned", "PRs can only be merged by code owners".
_WORK_MODAL = Gated(re.compile(
    r"\b(?:needs? to|requires?|(?<!\bwho )(?<!\bthat )(?<!\bwhich )(?<!\bi )(?<!\byou )(?<!\bwe )needs?\s+"
    r"(?!to\b|it\b|them\b|one\b|help\b|some\b|more\b)\S|(?:is|are)\s+always\b|"
    r"(?<!\bi )(?:can'?t|cannot|can not|may not)\s+(?!wait|believe|agree|beat|stop|imagine|thank|help|"
    r"tell|remember|say|express|describe|get over|handle|find|reproduce|see)|can only|(?:is|are) never|banned|"
    r"forbidden|prohibited|gets?\s+(?:explicit|a|an)\b|shouldn'?t|should|ought to|(?:is|are) (?:supposed|expected) to|"
    r"off-limits|not permitted|capped at|limited to|"
    r"max(?:imum)?(?: of)? \d)", _I),
    "need", "require", "can", "may not", "never", "banned", "forbidden", "prohibited", "get", "should",
    "ought", "supposed", "expected", "off-limits", "permitted", "capped", "limited", "max", "always")
# "It must have been great", "that must be hard", "I have to say": not obligations.
_NOT_MODAL = re.compile(
    r"\bi\s+(?:really\s+|still\s+|just\s+)?(?:can'?t|cannot|need|have to|had better|must)\b|\bmust-\w+|\ba must\b|"
    r"\bmust(?:'ve|\s+feel|\s+be\s+(?:a|an|so|really|very|such|hard|tough|nice|great|fun|amazing|awesome|exciting|"
    r"lovely|scary|difficult|wonderful|special|proud|cool|beautiful|quite|incredible|challenging|rough|exhausting|"
    r"stressful|crazy|intense|wild|fun|exciting|thrilling|breathtaking|unreal)|\s+have\s+(?:been|had|felt|seen|"
    r"taken|made|gone|known|loved)|\s+be[.!]*$)\b|"
    r"\bha(?:ve|s) to (?:say|admit|go|run|tell|thank|ask|check|try|see|give|come|visit|get|catch|hang|meet|show|"
    r"hear|read|watch|stress|look|think|wait|find)\b", _I)
_IMPERATIVE_RULE = re.compile(r"^(?:never|don'?t|dont|do not|always|avoid|make sure|ensure|remember to|be sure to)\b",
                              _I)
# ... and in work talk: "nobody pushes directly to main", "no hardcoded strings", "only squash merges".
_WORK_IMPERATIVE_RULE = re.compile(
    r"^(?:nobody|no one|only)\b|^no\s+(?!problem|worries|idea|way\b|thanks|rush|need\b|wait\b|one\b|doubt|luck|clue|"
    r"longer|breaking|errors?\b|issues?\b|problems?\b|changes?\b|failures?\b|warnings?\b|regressions?\b|"
    r"conflicts?\b|more\b)\S", _I)
# "we never release on Fridays", "nobody pushes directly to main": a verb of shipping software says
# it is work talk by itself; other verbs need work talk ("we never use sudo in containers").
_SHIPPING = (r"(?:\w+\s+)?(?:release|deploy|merge|push|commit|ship|cache|pin|hardcode|expose|mock|bypass|squash|"
             r"rebase|force-push|publish|hotfix|backport|vendor|fork|migrate|edit|approve)(?:e?s|d|ed)?\b")
_TEAM_RULE = re.compile(rf"^(?:we|our team|the team)\s+(?:always|never|only|don'?t|do not)\s+{_SHIPPING}|"
                        r"^(?:nobody|no one)\s+(?:else\s+)?(?!(?:cares?|knows?|likes?|wants?|told|said|asked|believes?|"
                        r"understands?|expected|noticed|came|showed|gets?|goes|went|is|was|has|had|does|did|can|could|"
                        r"would|will|really|even|ever)\b)\w+(?:s|ed)\b", _I)
_CHAT_VERBS = r"go|look|see|get|talk|eat|watch|play|feel|know|think|say|forget|miss|stop|give|leave|want|like|love|mind"
_WORK_TEAM_RULE = re.compile(
    r"^(?:\w+\s+)?(?:engineers|developers|devs|designers|contributors|reviewers|maintainers|admins|operators|"
    r"everyone|everybody)\s+(?:always|never|only|don'?t|do not|must|shouldn'?t|can'?t|cannot)\s+\w|"  # people's norms
    r"^(?!(?:i|we|you|it|that|this|there|he|she|they)\b)(?:[\w./-]+\s+){1,4}(?:always|never)\s+(?!been\b)[a-z]+|"
    rf"^(?:we|our team|the team)\s+(?:(?:always|never|only)\s+(?!(?:{_CHAT_VERBS})\b)\w+|"
    rf"(?:don'?t|do not)\s+(?!(?:{_CHAT_VERBS}|use|have|need|run|support)\b)\w+|require|"
    r"enforce|pin|squash|rebase)\b|"
    r"^(?:every|each|all|any|both)\s+[^,]{1,50}?\s+(?:must|needs?|has to|have to|gets?|goes|go|requires?)\b|"
    r"^everything\s+(?:goes|in|through)\b|^(?:[\w./-]+\s+){0,3}[\w-]+s\s+(?:go|goes|belong|belongs)\s+"
    r"(?:in|into|to|through|under)\b|"  # where things are put: "job-level spark confs go in jobs/<name>/"
    r"^(?:[\w./-]+\s+){0,3}[\w-]+s\s+(?:live|lives|stay|stays|sit|sits)\s+(?:in|under)\s+[^,]+,\s+(?:not|never)\b|"
    r"\b(?:are|is)\s+(?:all\s+|always\s+)?(?:snake_case|camelcase|pascalcase|kebab-case|lower ?case|upper ?case|"
    r"screaming_snake_case|prefixed|suffixed|named after)\b", _I)
# "use that", "yes do that", "go with the first one": taking the option the assistant offered.
TAKE_OPTION = re.compile(r"^(?:yes,?\s+|ok,?\s+|sure,?\s+)?(?:use|do|go with|take|pick|keep|choose|try)\s+(?:that|this|"
                         r"it|the (?:first|second|third|latter|former|last|other) one|option \w+|both)\b[.!]*$", _I)
STANDING_WORDS = re.compile(r"\b(?:everything|from now on|going forward|in (?:the )?future|every time|whenever|"
                            r"as a rule|always(?!-)|"
                       r"never(?!-)|by default|in this (?:repo|repository|codebase|project|service|team)|anywhere|"
                       r"everywhere|for (?:all|any|every|each)\b|in (?:all|any|every|each|new)\b|for new\b|"
                       r"for anything)", _I)
_STANDING_LEAD = re.compile(r"^(?:from now on|going forward|in (?:the )?future|as a rule|in this (?:repo|"
                            r"repository|codebase|project|service))[,:]?\s+", _I)
# "if a migration fails, roll back first", "whenever you touch the schema, bump SCHEMA_VERSION".
CONDITION = re.compile(r"^(?:if|when|whenever|before|after|once|every time|any time)\b[^,]{3,80},\s+(?P<then>.+)$", _I)
# Imperatives about how the assistant answers are standing by nature: "Reply in French".
_STYLE_IMPERATIVE = re.compile(r"^(?:reply|respond|answer|format|call me|address me|speak|talk to me|write "
                               r"(?:in|with|commit))\b", _I)

_PREFERENCE = re.compile(
    r"\b(?:i|we)\s+(?:really\s+|strongly\s+|usually\s+|generally\s+|definitely\s+|also\s+|much\s+|now\s+|"
    r"actually\s+|still\s+|no\s+longer\s+|kinda\s+|always\s+)*"
    r"(?:prefer|like|love|enjoy|hate|dislike|want|would rather|can'?t stand|don'?t like|dont like|do not like)\b"
    r"(?!\s+(?:it|that|this|you|to (?:tell|say|ask|know|show|share|see|hear|thank|add|fix|write|build|create|"
    r"implement|change|update|refactor|migrate|set up|try|get|make|move|remove|rename|do|check|understand|look|"
    r"figure|find|debug|test|run|review|start|finish|ship|deploy))\b)|"
    r"\bi'd (?:rather|like|prefer|love)\b|\bmy favou?rite\b|\bwe'd (?:rather|like|prefer)\b|\bper your preference\b|"
    r"\b(?:i'?m|i am)\s+(?:a\s+|a big\s+|a huge\s+|not a\s+|no\s+|not much of a\s+)?fan of\b|\bmy preference\b|"
    r"\b(?:is|are)\s+(?:much\s+|generally\s+)?preferred\b|\bpreferably\b", _I)
# In work talk: "I tend to write the test first", "I always rebase before pushing".
_HABIT = re.compile(r"^i\s+(?:always|usually|generally|normally|tend to|typically)\s+\w", _I)
_IMPERATIVE_PREFERENCE = re.compile(
    r"^(?:(?:please|pls|always|never)\s+)*(?:prefer|use|stick to|go for|favou?r|stay with|"
    r"keep\s+(?:that|this|the|it)\s+(?:\w+\s+)?style|keep\s+\S+(?:\s+\S+)?\s+(?:out of|in|inside|under|below|small|"
    r"short|simple|pure|private|flat|thin|separate))\b", _I)
_PLEASE = re.compile(r"\bplease[.!]*$", _I)
_OVER = re.compile(r"\S\s+(?:over|instead of|rather than)\s+\S|,\s+not\s+\S", _I)

_PROFILE = re.compile(
    r"\bmy name is\b|\bi(?: am|'m) (?:a|an|the|based in|from|responsible for|working on|in charge of)\b"
    r"(?!\s+(?:big |huge )?fan\b)|\bi work (?:at|for|as|on|in)\b|\bi live in\b|\bi'm based\b|"
    r"^i (?:maintain|own|lead|manage|run) (?:the|our)\b|"
    r"\b(?:my|our) (?:team|role|job|company|manager|timezone|time zone|email|office|stack|project|repo|"
    r"repository|product|deadline|budget|customer|client)s?\b\s+(?:is|are|uses|runs|lives|sits)\b", _I)
# "we run Kafka 3.6 on MSK", "we're on Expo SDK 51", "we don't use Docker for this service".
_TEAM_FACT = re.compile(r"^(?:we|we're|we've|we all|our|the team'?s)\b", _I)
# "we release with goreleaser", "we use Poetry": the team's tools, named.
_TEAM_TOOL = re.compile(r"^we\s+(?:\w+\s+)?(?:run|use|support|deploy|build|host|release|ship|wrap|target|pin)\b", _I)
_TEAM_SHIPS = re.compile(r"^we\s+(?:\w+\s+)?(?:deploy|release|ship)\b", _I)
# How a system is made and where it runs: a fact even when it names nothing capitalised ("built on oclif").
_BUILT = re.compile(r"\b(?:built (?:on|with)|runs? (?:on|in)|deployed (?:to|on)|hosted (?:on|in|at)|"
                    r"managed (?:with|by)|"
                    r"written in|loaded (?:through|via)|stored in)\s+\S", _I)
# What happened once, not what holds: "the build went red", "we were on 3.11", "is crashlooping".
_NOT_FACT = re.compile(r"\b(?:(?:we're|we are|i'm|i am|they're) (?!on\b|in\b)\w+ing|was|were|had|went|did|got|"
                       r"used to|felt|seemed|looked|sounded|"
                       r"(?-i:(?:is|are) (?:already |still |currently |now |just )?[a-z]+ing))\b", _I)
_NAME_VERSION = re.compile(r"\b[A-Za-z][\w.+#-]*\s+v?\d+(?:\.\d+)*\b")


def labelled(text: str) -> tuple[str | None, str]:
    """The kind a lead label gives ("decision: X" -> decision, "hard rule: X" -> constraint,
    "style: X" -> preference) and the text after it."""
    match = _LABELLED.match(text)
    if match is None:
        return None, text
    kind = next(name for name in ("decision", "rule", "preference") if match.group(name))
    return {"rule": "constraint"}.get(kind, kind), text[match.end():]


@_CACHE
def is_decision(text: str, echoes: bool = False, names: bool = False) -> bool:
    """"we decided on Redis", "let's go with pnpm", "ship it behind a flag then", and, in work talk
    or taking up words of the assistant's proposal (`echoes`), "let's batch per poll", "we'll stay
    on derive", "SHA-256 then"."""
    if _DECISION.search(text):
        return True
    if not (echoes or names or is_technical(text)):
        return False
    return bool(_WEAK_DECISION.search(text)) or bool(_THEN.search(text)) and (is_fragment(text) or is_imperative(text))


@_CACHE
def rule_category(text: str, opens: bool = True, names: bool = False) -> str | None:
    """"instruction" (an imperative: "Never cache auth tokens"), "constraint" (an obligation, ban or
    limit: "every PR needs two approvals", "we never release on Fridays"), or None. "No X" is a ban
    only when it `opens` a sentence ("No hardcoded strings."); after a comma it is a tail ("we go
    with a replica, no service split this quarter")."""
    if ANNOTATION_WITHIN.search(text):
        return "constraint"
    if not opens and re.match(r"^no\s", text, _I):
        return None
    condition = CONDITION.match(text)
    if condition and (rule_category(condition["then"], True, names) or is_imperative(condition["then"])):
        return rule_category(condition["then"], True, names) or "instruction"  # "if a migration fails, roll back first"
    rest = _STANDING_LEAD.sub("", re.sub(r"^(?:please|pls)\s+", "", text, flags=_I))
    led = _STANDING_LEAD.match(text) is not None and not re.match(
        r"^(?:i|we|you|they|he|she|it|the|our|my|every|all|any|each)\b", rest, _I)
    work = names or is_technical(text)
    standing = is_imperative(rest) and (STANDING_WORDS.search(text) is not None)  # "add a test for every bug fix"
    if _IMPERATIVE_RULE.match(rest) or standing or _STYLE_IMPERATIVE.match(rest) or led or \
            work and _WORK_IMPERATIVE_RULE.match(rest):
        if re.match(r"^(?:(?:always|never)\s+)?(?:use|prefer)\b", rest, _I):
            return None  # "always use type hints": a preference
        return "instruction"
    if _NOT_MODAL.search(text):
        return None
    if _MODAL.search(text) or _TEAM_RULE.search(rest) or work and (_WORK_TEAM_RULE.search(rest) or
                                                                   _WORK_MODAL.search(text)):
        return "constraint"
    if rest != text and _STANDING_LEAD.match(text) and is_statement(rest):
        return "constraint"  # "from now on every new shard goes through scripts/filter_shard.py"
    return None


@_CACHE
def is_preference(text: str, names: bool = False) -> bool:
    """"I prefer errgroup", "use pytest for anything new", "prefer UniTask over coroutines", "I'm not
    a fan of ORMs", and, in work talk, "lowercase SQL keywords please", "fakes over mocks"."""
    if _PREFERENCE.search(text) or _IMPERATIVE_PREFERENCE.search(text):
        return True
    if not (names or is_technical(text)):
        return False
    if _HABIT.match(text):
        return True
    return (is_fragment(text) or is_imperative(text)) and bool(_PLEASE.search(text) and is_fragment(text) or
                                                               _OVER.search(text))


@_CACHE
def fact_category(text: str, names: bool = False) -> str | None:
    """"profile" (about the speaker: "I work at Acme"), "fact" (about the team's system, in its voice
    or impersonally: "we run Kafka 3.6 on MSK", "billing owns the invoices table"), or None."""
    if _PROFILE.search(text):
        return "profile"
    if _NOT_FACT.search(text) or is_imperative(text):
        return None
    if _TEAM_FACT.match(text):
        team = is_technical(text, names) or _TEAM_TOOL.search(text) and has_detail(text) or _TEAM_SHIPS.search(text)
        return "fact" if team else None
    if is_statement(text) and (is_technical(text, names) or _BUILT.search(text)):
        return "fact"
    if is_fragment(text) and (_NAME_VERSION.search(text) and len(text.split()) <= 6 or details(text) >= 2):
        return "fact"  # "Xcode 15.4 on the build machines", "Snowflake, database ANALYTICS, role TRANSFORMER"
    return None
