"""A model's answer, validated like any write before it becomes insights: one JSON object of
lists of items, each item text or `{content, confidence?, replaces?}`; content non-empty, at most
`MAX_FACT_CHARS`, text the stores can hold; confidence 0..1; no more items than were asked for;
`replaces` only an id the model was shown. Anything else in an item (a "kind", a "layer", a
"source") is ignored: what an item becomes is the list it is in. Anything unusable is
`DistillFailed` with the reason in plain words, never the model's text. Also the transcript and
the remembered facts as every model is shown them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from agent_memory.core.model.confidence import SAMPLED
from agent_memory.core.model.models import Entry
from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.model.text import is_storable
from agent_memory.core.ports import DistillFailed

MAX_FACT_CHARS = 1000
KNOWN_LISTED = 40  # remembered facts shown to the model, newest first
KNOWN_CHARS = 200  # of each

# The lists of an answer: the list's key -> (insight kind, category).
FACTS_AND_RULES: Mapping[str, tuple[str, str]] = {"facts": ("fact", "sampled"), "rules": ("rule", "sampled")}


def transcript(turns: list[Turn], chars: int) -> str:
    """The session's user, assistant and system turns as `speaker: text` lines (tool output left
    out); its most recent `chars` characters when it is longer."""
    lines = [f"{turn.name or turn.role}: {turn.content}" for turn in turns if turn.role != "tool"]
    return "\n".join(lines)[-chars:]


def remembered(known: list[Entry]) -> tuple[str, frozenset[str]]:
    """The facts and rules a model is shown as already remembered (`- id: text` lines, newest
    first), and their ids (the only ones an answer may name in `replaces`)."""
    listed = known[:KNOWN_LISTED]
    return "".join(f"- {e.id}: {e.content[:KNOWN_CHARS]}\n" for e in listed), frozenset(e.id for e in listed)


def parse_distillation(text: str, max_items: int, known_ids: frozenset[str] | set[str] = frozenset(),
                       kinds: Mapping[str, tuple[str, str]] = FACTS_AND_RULES) -> list[Insight]:
    """The insights in a model's answer `text`: the first JSON object in it (a server that wraps
    it in prose or a code fence is tolerated), its lists named in `kinds`. Lists present but
    empty are an answer (nothing worth keeping); an object with none of them is not.

    Raises:
        DistillFailed: no JSON object, none of the lists, an unusable item, or more than
            `max_items` items."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        raise DistillFailed("the model's answer held no JSON object")
    try:
        data = json.loads(match.group(0))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the json module goes
        raise DistillFailed("the model's answer was not valid JSON") from None
    if not isinstance(data, dict):
        raise DistillFailed("the model's answer was not a JSON object")
    if not any(key in data for key in kinds):
        raise DistillFailed("the model's answer held no facts or rules")
    out: list[Insight] = []
    for key, (kind, category) in kinds.items():
        items = data.get(key, [])
        if not isinstance(items, list):
            raise DistillFailed(f"'{key}' in the model's answer was not a list")
        if len(out) + len(items) > max_items:
            raise DistillFailed(f"the model's answer held more than the {max_items} items asked for")
        out += [_insight(item, key, kind, category, known_ids) for item in items]
    return out


def _insight(item: object, key: str, kind: str, category: str, known_ids: frozenset[str] | set[str]) -> Insight:
    content, confidence = (item, SAMPLED) if isinstance(item, str) else (
        (item.get("content"), item.get("confidence", SAMPLED)) if isinstance(item, dict) else (None, None))
    # the text rule (core/model/text.py): "\u0000" or a lone "\ud800" decodes to text no store holds
    if not isinstance(content, str) or not content.strip() or not is_storable(content):
        raise DistillFailed(f"an item of '{key}' in the model's answer had no usable content")
    if len(content.strip()) > MAX_FACT_CHARS:
        raise DistillFailed(f"an item of '{key}' in the model's answer was longer than {MAX_FACT_CHARS} characters")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise DistillFailed(f"an item of '{key}' in the model's answer had a confidence outside 0..1")
    replaces = item.get("replaces") if isinstance(item, dict) else None
    return Insight(kind, content.strip(), round(float(confidence), 4), category,
                   replaces if isinstance(replaces, str) and replaces in known_ids else None)
