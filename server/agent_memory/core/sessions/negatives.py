"""What is said in a session but is no lasting fact or rule: questions, hypotheticals, other
people's claims, negated or undecided choices, status reports and one-off requests about the task
at hand ("can you add a test", "run the ios tests too", "don't touch that file for now").

Each test reads one clause with its lead-in words already stripped ("yeah", "btw", "also"). English
only, hand-made lists: a clause that matches none of them may still be kept or dropped by
`kinds`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agent_memory.core.sessions.worktalk import Gated

_I = re.IGNORECASE
_CACHE = lru_cache(maxsize=4096)  # pure functions of a clause's text, asked several times per clause

_QUESTION_WORD = re.compile(r"^(?:what|why|how|when|where|who|whom|which|whose|any idea|any chance|anything else|"
                            r"is it ok|ok if|want me|wanna|shall we)\b", _I)
_QUESTION_AUX = re.compile(
    r"^(?:(?:can|could|would|should|shall|will|is|are|was|were|has|have|am|must|may|isn'?t|aren'?t|doesn'?t|"
    r"don'?t|didn'?t|won'?t|shouldn'?t|wouldn'?t)\s+(?:i|you|u|we|they|it|he|she|there|this|that|these|those|the|"
    r"a|an|any|anyone|anybody|someone|our|my|your|\w+'s)|(?:do|does|did)\s+(?:i|you|u|we|they|it|he|she|there|"
    r"anyone|anybody|someone))\b", _I)

# Guesses and conditions. "I'd like", "we'd rather" are wishes, not hypotheticals.
_WISH = re.compile(r"\b(?:i|we)(?:'d|\s+would)\s+(?:really\s+)?(?:like|love|prefer|rather|want)\b|\bwould rather\b",
                   _I)
_HYPOTHETICAL = Gated(re.compile(
    r"^(?:if|maybe|perhaps|probably|possibly|hopefully|ideally|suppose|supposing|assuming|in theory|unless|"
    r"what if|otherwise)\b|\b(?:would|could|might|may be|might be|maybe|perhaps|probably|possibly|likely|"
    r"presumably|in case|i think|i don'?t think|i guess|my guess|i suspect|i believe|i wonder|i'?m not sure|"
    r"not sure|seems|"
    r"seemed|looks like|it looks|sounds like|usually happens|in theory|hypothetically|wondering)\b|"
    r"\b(?:we|you|it|that|they|he|she|this|there)'d\b|(?-i:\bmay\b(?!\s+not\b))", _I),
    "if", "maybe", "perhaps", "probab", "possib", "hopefully", "ideally", "suppos", "assum", "theory",
    "unless", "otherwise", "would", "could", "might", "may", "likely", "presumably", "in case", "think",
    "guess", "suspect", "believe", "wonder", "not sure", "seem", "look", "sounds like", "usually happens",
    "hypothetic", "'d")

_SUBORDINATE = re.compile(r"\s(?:that|which|who|where|because|so that|since|unless|when|whenever|anything|everything|"
                          r"whatever)\s", _I)  # "use ensure() for anything a designer setup could trigger"

# Someone else's words: "Marco said ...", "the docs claim ...", "according to the README".
_QUOTE = Gated(re.compile(
    r"(?<!\bi )(?<!\bwe )(?<!\bas )(?<![\w./-])(?:said|says|claims?|claimed|reckons?|reckoned|thinks|swears|argues|"
    r"argued|insists?|insisted|told (?:me|us)|mentioned|mentions?|suggested|suggests|according to|apparently|"
    r"allegedly)(?![\w/-])|"  # a word, not part of a name: "claims-svc", "/claims/{id}"
    r"^@[\w.-]+:|\b(?:docs?|documentation|readme|spec|people|folks|others)\s+say\b", _I),
    "said", "says", "claim", "reckon", "thinks", "swear", "argue", "insist", "told", "mention", "suggest",
    "according", "apparently", "allegedly", "@", "say")

# Taken back or left open: "not that we decided X", "we haven't decided", "3.13 isn't decided yet".
_NEGATED = Gated(re.compile(
    r"\bnot that\b|\b(?:haven'?t|have not|hasn'?t|has not|didn'?t|did not|never|not|nobody|no one)\s+(?:yet\s+|"
    r"really\s+|ever\s+)?(?:decided|agreed|settled|chosen|picked|committed|signed off|approved)\b|"
    r"\b(?:isn'?t|is not|aren'?t|are not|wasn'?t|not|nothing'?s|nothing is|nothing has|nothing was)\s+(?:been\s+)?"
    r"(?:yet\s+|really\s+)?(?:decided|agreed|settled|final|finali[sz]ed|set in stone|confirmed)\b|"
    r"\blet'?s not\s+(?:decide|commit|rush|settle|change)\b|\b(?:i'?m|we'?re|i am|we are)?\s*not saying\b|"
    r"\bit'?s not that\b|\b(?:isn'?t|aren'?t|is not|are not|not)\s+(?:a\s+|our\s+)?(?:permanent|standing|hard|"
    r"fixed|general|team)\s+(?:rule|thing|decision|policy)\b|\bundecided\b|\bstill (?:deciding|open|undecided|"
    r"debating|up in the air)\b|\bno decision\b|\btbd\b|\bup in the air\b|^not (?:yet|really|sure|now)\b", _I),
    "not", "n't", "never", "nobody", "no one", "nothing", "let", "saying", "undecided", "still", "decision",
    "tbd", "up in the air")

# What happened, not what holds: failures, incidents, timings of one run.
_STATUS = Gated(re.compile(
    r"\b(?:(?<!\bno )(?<!\bwith )(?<!\bon )failed|(?:is|are|keeps|kept) failing|fails (?:on|with|to|when|for|again)|"
    r"fails(?=[,.!]|\s*$)|"
    r"broke|is broken|are broken|crash(?:ed|es|ing|looping)|is down|are down|went (?:down|nan|up)|is back|back up|"
    r"keeps \w+ing|doubled|tripled|spiked|spiking|climbing|dropped from|fell|rose|jumped|went from|(?:increased|"
    r"decreased|grew|shrank) (?:from|by)|hitch\w*|hangs|hung|ooms?|oom'?d|timed out|times out|"
    r"regressed|(?<!that )(?<!which )(?:is|are|been|was|were|looks?|seems?|getting)\s+(?:\w+\s+)?flaky|is stuck|"
    r"blew up|erroring|throws|threw|is throwing|\d{3}s from|are being \w+|"
    r"is being \w+|last night|yesterday|this morning|right now|since (?:yesterday|this|\d)|"
    r"after (?:the|yesterday'?s|\w+day'?s) (?:deploy|release|upgrade|merge|change))\b|"
    r"\btook (?:about |around |~)?\d|\b(?:logs?|output|errors?|traces?|profiler?)\s+(?:says?|shows?|said)\b|"
    r"\b(?:is|are) (?:too |really |very |way too |so )?(?:slow|painful)\b|\btoo (?:late|early|slow|fast|high|low|big|"
    r"small|long|short|noisy|aggressive|strict|loose|expensive)\b|"
    r"^(?:it|that|this)(?:'s| is) (?:fixed|working|done|green|back)\b|"
    # symptoms: what a system does now or now and then, not what it is
    r"\b(?:sometimes|intermittently|randomly|occasionally|every now and then)\b|"
    r"\b(?:drops|spikes|leaks|stalls|freezes|stutters|lags|flakes)\b|\btakes (?:about |around |~)?\d|"
    r"(?<!\bi )(?<!\bwe )(?<!\byou )\b(?:don'?t|doesn'?t|won'?t|can'?t|isn'?t|aren'?t) (?:parse|work|compile|load|"
    r"build|boot|connect|render|resolve|start|respond)(?:ing)?\b|\b(?:worse|better|slower|faster|higher|lower) than "
    r"(?:the |what |we )?(?:expected|estimated?|before|promised|planned)\b|"
    r"\bthis (?:week|month|sprint|afternoon)\b", _I),
    "fail", "broke", "crash", "down", "went", "back", "keeps", "doubled", "tripled", "spike", "climbing",
    "hitch", "hang", "hung", "oom", "timed out", "times out", "regress", "dropped", "fell", "rose",
    "jumped", "from", "grew", "shrank", "by", "flaky", "stuck", "blew", "erroring", "throw", "threw",
    "s from", "being", "last night", "yesterday", "this morning", "right now", "since", "after", "took",
    "say", "show", "slow", "painful", "too ", "fixed", "working", "done", "green", "times", "random", "occasion",
    "every now", "drops", "spikes", "leaks", "stall", "freez", "stutter", "lags", "flakes", "takes", "n't", "than",
    "this ")

# Requests about the task at hand. Standing words ("always", "from now on", "in this repo") make a
# request a rule or a preference instead.
_REQUEST = re.compile(
    r"^(?:can|could|would|will)\s+(?:you|u)\b|^(?:pls|please)\s+(?:help|check|look|fix|review|have a look)\b|"
    r"\bhelp me\b|^i need (?:a|an|you|to|the)\b|^i want you to\b|^let me know\b|^the real ask\b|^just\b|"
    r"^(?:go ahead|do it|try (?:it|again)|walk me)\b|^i'?ll (?:think|check|look|ask|get back)\b", _I)
_ONE_OFF = re.compile(
    r"\b(?:for now|for the moment|this time|too[.!]*$|as well[.!]*$|right now|today|for today|"
    r"in this (?:pr|file|function|"
    r"change|commit|branch|test)|for this (?:pr|file|function|change|ticket|task|one|test|run)|this file|that file|"
    r"both|for real|the rest)\b", _I)
STANDING = re.compile(
    r"\b(?:always(?!-)|never(?!-)|from now on|going forward|in (?:the )?future|every time|whenever|by default|"
    r"as a rule|in this (?:repo|repository|codebase|project|service|team|org)|anywhere|everywhere|"
    r"for (?:all|any|every)\b|in new\b|for new\b|for anything|any time|across (?:the|all))", _I)
# Encouragement and elliptical narrative that look like instructions: "Don't give up!", "Always here to
# help", "Never saw this coming".
_PRAISE = re.compile(
    r"^(?:keep (?:it|going|up)|never give up|always remember|"
    r"don'?t (?:worry|give up|stop|forget|let|be|feel|quit|miss|lose|hesitate|panic|doubt)|"
    r"always (?:here|there|up|good|happy|great|glad|fun|nice|a)|never (?:had|saw|seen|been|thought|knew|expected|"
    r"imagined|felt|got|a))\b", _I)
_CANCEL = re.compile(r"^(?:leave\s+(?:it|them|that|this|the\s+\w+|\w+)(?:\s+alone|\s+as is|\s+untouched)?\b|"
                     r"keep (?:it|them|that) as is|don'?t bother|skip it|never ?mind)", _I)
_CHATTER = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ty|cheers|bye|lol|haha+|ok(?:ay)?|sure|great|cool|nice|sweet|awesome|"
    r"perfect|sounds good|got it|no problem|you'?re welcome|yep|nope|right|exactly|i see|hmm+|oh|wow|phew|"
    r"good|good catch|nice catch|makes sense|will do|noted|understood|what a day|just curious|not really)\b"
    r"[\s\w,!.']{0,20}$", _I)


# The present moment only: "the screen is always on right now" is how things stand, no rule.
_TEMPORARY = re.compile(r"\b(?:right now|at the moment|as of now|as things stand|for the time being)\b", _I)


def is_question(text: str) -> bool:
    stripped = text.strip()
    return stripped.endswith("?") or bool(_QUESTION_WORD.match(stripped) or _QUESTION_AUX.match(stripped))


def is_hypothetical(text: str) -> bool:
    """A guess or a condition about the clause itself, not a word in a subordinate clause ("never ship
    code that could leak tokens" is a rule)."""
    main = _SUBORDINATE.split(_WISH.sub("", text), maxsplit=1)[0]
    return bool(_HYPOTHETICAL.search(main))


def is_quote(text: str) -> bool:
    return bool(_QUOTE.search(text))


@_CACHE
def why_not(text: str) -> str | None:
    """Why a clause is never kept, or None when nothing here rules it out (a status report is told
    apart by `is_status`, after the rules: "never merge with failing tests" is a rule)."""
    for why, test in (("question", is_question), ("quote", is_quote), ("negated", _NEGATED.search),
                      ("hypothetical", is_hypothetical), ("chit-chat", _CHATTER.match), ("chit-chat", _PRAISE.match),
                      ("cancelled", _CANCEL.match), ("temporary", _TEMPORARY.search)):
        if test(text):
            return why
    return None


@_CACHE
def is_status(text: str) -> bool:
    """What happened rather than what holds: "the build fails on RTD", "prod is down since 14:05"."""
    return bool(_STATUS.search(text))


def is_request(text: str) -> bool:
    """A request for help now ("can you look at the logs", "help me", "I need a bottom sheet")."""
    return bool(_REQUEST.search(text))


def is_one_off(text: str) -> bool:
    """Said about this task only ("for now", "too", "this file"), and not as a standing rule."""
    return bool(_ONE_OFF.search(text)) and not STANDING.search(text)
