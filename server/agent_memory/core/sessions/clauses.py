"""A turn cut into clauses, each with its span in the turn: what the extractive engine classifies.

People type to a coding assistant in run-on lines ("nice I prefer errgroup btw if we ever add a
second consumer we'd need a pool", "4 pods, 6 threads each Priya reckons we call it per message"),
so sentences are cut further: at semicolons, dashes and asides in parentheses (hard cuts), and at
commas and word boundaries where a new clause plainly starts (soft cuts): "I prefer", "we'll",
"let's", "can you", "if", a retraction ("no wait", "scrap that"), an imperative after a noun ("on
this repo enable every linter"), a rule's subject ("every component needs"), someone's name before
"said". A word boundary is never cut after a function word ("should we", "the thing we run is"),
so questions and relative clauses stay whole. Code blocks, quoted lines (`> ...`), and lines that
look like code, logs or stack traces give no clause at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from agent_memory.core.sessions.lexicon import AUXILIARIES, STOP
from agent_memory.core.sessions.prose import prose_lines
from agent_memory.core.sessions.worktalk import has_verb, is_imperative, is_statement

HARD, SOFT = "hard", "soft"
RUN_ON = "run-on"  # a cut without punctuation starts a new sentence in all but name: HARD, or SOFT after a comma


@dataclass(frozen=True, slots=True)
class Clause:
    start: int
    end: int
    text: str
    sentence: int  # clauses of one sentence share this number
    cut: str  # how it is separated from the clause before it: HARD (a new sentence, or the first) or SOFT


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<=[.!?])\s+")
_HARD_CUT = re.compile(r"\s*;\s+|\s+[—–]\s*|\s*[—–]\s+|\s+--\s+|\s*\.\.\.(?=\w)")
_PAREN = re.compile(r"\s*\(([^()]{3,})\)")
_MARKERS = (r"no wait|wait,? no|nah|scrap that|scratch that|strike that|never ?mind|forget (?:it|that)|"
            r"actually,? no|(?:hmm|ok|okay),? (?:no|actually)|no, (?:forget|too|that)|er,|erm,|eh,|uh,")
# Word boundaries where a new clause starts whatever came before.
_RUN_ON = re.compile(
    rf"\s+(?=(?:(?:and|so|also|then|but)\s+)?(?:let'?s\b|can (?:you|u|we)\b|could (?:you|we)\b|would you\b|will you\b|"
    rf"should we\b|any idea\b|what about\b|how about\b|maybe we\b|"
    rf"help me\b|(?:btw\s+)?if\b|how (?:should|do|does|can|would|is|are)\b|the real ask\b|"
    rf"just (?:push|run|do|the)\b|(?:ok|okay),\s|and please\b|{_MARKERS}))", re.IGNORECASE)
# After a comma: a new subject, an imperative, a retraction, or a short subject with its verb.
_COMMA_CUT = re.compile(
    r",\s+(?!(?:run|set)\s+(?:in|on|with|by|via|at|from|through|under|as|to)\b)(?=(?:(?:and|but|so|also|then)\s+)?(?:i|i'm|i'd|i'll|i've|we|we're|we'll|we've|let'?s|please|"
    r"can you|could you|can u|pls|nah|no wait|wait|never ?mind|scrap that|scratch that|strike that|"
    r"forget (?:it|that)|add|write|keep|use|prefer|make|set|switch|go with|check|run|always|never|"
    r"don'?t|it'?s not that|not that|can we|could we|should we|do we|is it|are we|what|why|how|which|where|maybe|"
    r"perhaps|probably|unless|although|though)\b|(?:the\s+|our\s+|all\s+|every\s+|any\s+)?[\w./@*-]+(?:\s+[\w./@*-]+){0,3}\s+(?:is|are|must|"
    r"never|needs?|has|have|can'?t|cannot|goes|go|runs?|lives?|stays?)\b)", re.IGNORECASE)
# Any other comma, when what follows it up to the next one says something by itself: a statement
# ("hooks start with use", "untagged resources get deleted") or an imperative.
_ANY_COMMA = re.compile(r",\s+")
_JOINER = re.compile(r"^(?:and|but|so|then|also|plus|or)\s+", re.IGNORECASE)
_GOVERNED = re.compile(r"^(?:except|unless|with|without|for|in|on|at|by|from|like|as|including|because|since|which|"
                       r"that|where|when|while|after|before|until|than|to|of|via|per|especially|even|not)\b",
                       re.IGNORECASE)


# A participle that reads like an imperative: "dbt-core 1.7, run in GitHub Actions nightly", "..., set to 30s".
_PARTICIPLE = re.compile(r"^(?:run|set|put|cut|kept|built|hosted|written|deployed|stored|made|read)\s+(?:in|on|with|by|"
                         r"via|at|from|through|under|as|to|inside)\b", re.IGNORECASE)


def _statement_follows(text: str, pos: int) -> bool:
    segment = re.split(r"[,;.!?]", text[pos:].lstrip(", "), maxsplit=1)[0]
    segment = _JOINER.sub("", segment.strip())
    if _GOVERNED.match(segment) or _PARTICIPLE.match(segment):
        return False  # "..., except the payroll export which needs withTrashed": part of the clause before
    return len(segment.split()) >= 3 and (is_statement(segment) or is_imperative(segment))


# Word boundaries that start a clause unless a function word comes just before ("should we", "I'm
# not saying we"), or, for "we run" and "I prefer", a relative clause ("every cert we own must").
_PERSON = re.compile(r"\s+(?=(?:(?:and|also)\s+)?(?:i\s+(?:prefer|like|love|want|need|hate|dislike|don'?t|dont|"
                     r"really|always|never)\b|we\s+(?!\w+\s+(?:is|are|was|were|has|have|must|needs?|gets?|"
                     r"should|can|will|goes)\b)\w))", re.IGNORECASE)
_CONTRACTED = re.compile(r"\s+(?=(?:(?:and|also)\s+)?(?:i'd|i'm|i'll|we're|we'll|we've|it's (?:built|on|in|a|an)\b)"
                         r")", re.IGNORECASE)
_IMPERATIVE = re.compile(
    r"\s+(?=(?:(?:also|and|but)\s+)?(?:(?:add|enable|disable|bump|rename|remove|delete|write|fix|refactor|revert|mock|"
    r"skip|redo|use|make|check|keep|set|switch)\s+(?:a|an|the|every|all|it|this|that|some|its|our|my|both|"
    r"[\w.]*[A-Z_.][\w.]*)\b|prefer\s|walk me\b|help me\b))")
_RULE_SUBJECT = re.compile(
    r"\s+(?=(?:and\s+)?(?:(?:every|all|any|each)\s+\S+(?:\s+\S+){0,2}\s+(?:must|gets|needs|has to|have to|"
    r"goes|go|are|is)\b|(?:the|our)\s+\S+(?:\s+\S+){0,2}\s+(?:must|has to|have to|needs to|can'?t|cannot|"
    r"is never|are never)\b|(?<=and )[a-z][\w-]+s\s+(?:must|have to|need to|should|can'?t|are never|are not allowed)\b|"
    r"no\s+(?!wait\b|problem|worries|idea|way\b|thanks|rush|need\b|more\b)[\w.@*-]+,?\s+\S))",
    re.IGNORECASE)
_AFTER = re.compile(r"\b(?:anymore|btw|though|thanks|thx|cheers|obviously|for now|later|anyway|instead|soon)(\s+)"
                    r"(?=[a-z])(?!of\b|than\b)"
                    r"|\bit is(\s+)(?=(?:also|and|we|i|let'?s)\b)"
                    r"|\bnow(\s+)(?=(?:use|add|make|set|switch|enable|drop)\b)", re.IGNORECASE)
# "redis actually Valkey" (not "it's actually fine", "that was actually fun").
_ONE_WORD_ACTUALLY = re.compile(r"^(?!(?:it|it's|its|that|that's|this|there|i|i'm|we|we're|you|he|she|they|is|was|"
                                r"are|were|so|and|but)\b)(\S+(?:\s+\S+)?)\s+(?=actually\b)(?!\S+\s+(?:is|was|"
                                r"are|were)\b)", re.IGNORECASE)
# Someone else's words: "Marco said ...", "ops said ...", "Priya reckons ...", "the README says ...".
_QUOTE_VERB = re.compile(r"(?<![\w./-])(said|says|claims?|claimed|reckons?|thinks|mentioned|told (?:me|us)|swears)"
                         r"(?![\w/-])")
_CONDITION = re.compile(r"^(?:if|when|whenever|before|after|once|every time|any time)\b[^,.;]*,?\s*$", re.IGNORECASE)
_IDENTIFIER = re.compile(r"\d|[./:_@#]|[a-z][A-Z]")
_INTERJECTION = re.compile(
    r"^(?:(?:ok|okay|alright|hmm+|yes|yeah|yep|no|nah|wait|er|erm|eh|uh|so|well|then)[\s,.!]*){1,2}$", re.IGNORECASE)

# Words after which a clause cannot end: a boundary right after one of them is no boundary.
_FUNCTION = (STOP | AUXILIARIES | frozenset(
    "if which who when where why how what whether because before after since until unless while once so than as "
    "and or but to let's lets please just never always not don't dont also really rather saying think guess hope "
    "mean sure know wish ensure make can could should would will ever even still already you we i they he she "
    "i'm we're we'll i'll i'd we'd you're they're ok okay yes yeah no hmm u maybe perhaps probably".split())
             ) - frozenset("it this that only now then too here there both all one".split())
_SUBJECTS = frozenset("i we you they he she".split())
_ADVERBS = frozenset("now still also really always usually never just only actually no longer generally".split())
_RELATIVE = frozenset("any every all each the a an everything anything something nothing that which what this "
                      "those these one".split())
_JOINED = re.compile(r"\s*(?:and|also)\s", re.IGNORECASE)


def _words_before(text: str, pos: int, n: int) -> list[str]:
    return [w.lower().strip(",.:;!?()'\"`") for w in text[max(0, pos - 80):pos].split()][-n:]


def _after_content(text: str, pos: int) -> bool:
    """A word boundary at `pos` may start a clause: the word before it is not a function word (a
    clause joined by "and" or "also" may follow any word)."""
    before = _words_before(text, pos, 2)
    if len(before) == 2 and before[0] in _SUBJECTS and before[1] in _ADVERBS:
        return False  # "I now | prefer spaces", "we still | use Redis": one clause
    return bool(before) and (before[-1] not in _FUNCTION or bool(_JOINED.match(text, pos)))


_GAP = re.compile(r"\s*(?:and\s+|also\s+)?\S+\s+\S+(?:\s+(?:in|on|at|to|for|from|with|into|onto|by|via|through|under|"
                  r"is|are|was|were)\b|[,.;]|\s*$)", re.IGNORECASE)


def _not_relative(text: str, pos: int) -> bool:
    """As `_after_content`, and not a relative clause: "every goroutine we start", "everything we run",
    or a noun phrase of up to three words whose verb after it lacks its object ("a TLE feed we cache
    in public/", where "the design system we wrap Radix primitives" is two clauses)."""
    if not _after_content(text, pos) or set(_words_before(text, pos, 2)) & _RELATIVE:
        return False
    raw = text[max(0, pos - 80):pos].split()[-3:]
    phrase = any(word.lower() in _RELATIVE and not any(w.endswith((",", ";", ":", ".")) for w in raw[index:])
                 for index, word in enumerate(raw))
    return not (phrase and _GAP.match(text, pos))


Span = tuple[int, int, str]


def _split(spans: list[Span], text: str, pattern: re.Pattern[str], cut: str,
           guard: Callable[[str, int], bool] | None = None) -> list[Span]:
    out = []
    for start, end, how in spans:
        at = start
        for match in pattern.finditer(text, start, end):
            cut_at, cut_end = next((match.span(g) for g in range(1, pattern.groups + 1) if match.start(g) >= 0),
                                   match.span())  # a pattern with groups cuts at its group
            if cut_at <= at or cut_end >= end or (guard and not guard(text, cut_at)) or \
                    _CONDITION.match(text[at:cut_at]):
                continue  # "if a migration fails, roll back first": a condition stays with what it conditions
            out.append((at, cut_at, how))
            at, how = cut_end, cut if cut != RUN_ON else SOFT if text[:cut_at].rstrip().endswith(",") else HARD
        out.append((at, end, how))
    return out


def _parentheses(spans: list[Span], text: str) -> list[Span]:
    """An aside in parentheses of three or more words that says something by itself (it has a verb)
    is a clause of its own; a list of details ("three regions (ams, iad, sin)", "(slurm, partition
    gpu-a100)") stays with what it details."""
    out = []
    for start, end, how in spans:
        at = start
        for match in _PAREN.finditer(text, start, end):
            if len(match.group(1).split()) < 3 or not has_verb(match.group(1)):
                continue
            if match.start() > at:
                out.append((at, match.start(), how))
            out.append((match.start(1), match.end(1), HARD))
            at, how = match.end(), HARD
        if at < end:
            out.append((at, end, how))
    return out


def _quote_cut(text: str, start: int, end: int) -> int | None:
    """Where someone else's reported words begin in a clause (their name or subject), when the
    clause says something of its own before them."""
    verb = _QUOTE_VERB.search(text, start, end)
    if verb is None:
        return None
    words = list(re.finditer(r"\S+", text[start:verb.start()]))
    cut = None
    for index in range(len(words) - 1, max(-1, len(words) - 6), -1):
        token = words[index].group().strip(",")
        low = token.lower()
        if low in ("and", "but", "so", "or", "then", "also", "btw", "i", "we", "you") or \
                words[index].group().endswith(",") or (_IDENTIFIER.search(token) and not token.endswith("'s")):
            break
        cut = start + words[index].start()
        if token[:1].isupper():
            if index > 0 and words[index - 1].group().lower() in ("the", "our", "my", "their"):
                cut = start + words[index - 1].start()
            elif index > 1 and words[index - 1].group().lower() == "from":  # "Sam from SRE", "our report from March"
                back = [w for w in words[max(0, index - 5):index - 1]]
                starter = next((w for w in back if w.group().lower() in ("the", "our", "my", "their")), None)
                cut = start + (starter or words[index - 2]).start()
            break
    return cut if cut is not None and cut > start and len(words) > 1 else None


def _quotes(spans: list[Span], text: str) -> list[Span]:
    out = []
    for start, end, how in spans:
        cut = _quote_cut(text, start, end)
        out += [(start, cut, how), (cut, end, SOFT)] if cut else [(start, end, how)]
    return out


def _actually(spans: list[Span], text: str) -> list[Span]:
    """"redis actually Valkey": a word or two, then a correction."""
    out = []
    for start, end, how in spans:
        match = _ONE_WORD_ACTUALLY.match(text[start:end])
        out += [(start, start + match.end(), how), (start + match.end(), end, SOFT)] if match else [(start, end, how)]
    return out


def clauses(text: str) -> list[Clause]:
    """The clauses of a turn's prose, in order, each with its span in `text`."""
    out: list[Clause] = []
    for sentence, span in enumerate(_split(prose_lines(text), text, _SENTENCE_END, HARD)):
        parts = _split(_parentheses([span], text), text, _HARD_CUT, HARD)
        parts = _split(parts, text, _RUN_ON, RUN_ON)
        parts = _split(parts, text, _COMMA_CUT, SOFT)
        parts = _split(parts, text, _ANY_COMMA, SOFT, _statement_follows)
        parts = _split(parts, text, _PERSON, RUN_ON, _not_relative)
        parts = _split(parts, text, _CONTRACTED, RUN_ON, _after_content)
        parts = _split(parts, text, _IMPERATIVE, RUN_ON, _after_content)
        parts = _split(parts, text, _RULE_SUBJECT, RUN_ON, _after_content)
        parts = _split(parts, text, _AFTER, RUN_ON)
        pending: int | None = None  # where a lone interjection ("ok", "hmm", "wait") began
        for start, end, how in _actually(_quotes(parts, text), text):
            raw = text[start:end]
            lead = len(raw) - len(raw.lstrip(" ,"))
            body = raw.strip(" ,")
            if not body:
                continue
            if _INTERJECTION.match(body):
                pending = start + lead if pending is None else pending
                continue
            if pending is not None:  # "ok" + "no, that's insane" -> "ok no, that's insane"
                start, lead, how, pending = pending, 0, SOFT if out and out[-1].sentence == sentence else how, None
                body = text[start:end].strip(" ,")
            out.append(Clause(start + lead, start + lead + len(body), body, sentence, how))
        if pending is not None:
            body = text[pending:span[1]].strip(" ,")
            out.append(Clause(pending, pending + len(body), body, sentence, HARD))
    return out
