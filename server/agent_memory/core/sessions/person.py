"""First person said again in the third person: "I prefer tabs" -> "The user prefers tabs", so a
fact still reads right when it is recalled in another session."""

from __future__ import annotations

import re

_ADVERBS = {"really", "always", "never", "usually", "also", "still", "just", "strongly", "generally", "often",
            "sometimes", "definitely", "mostly", "only", "actually", "much", "rarely", "normally", "now", "no",
            "longer"}
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "don't": "doesn't",
              "dont": "doesn't", "can": "can", "will": "will", "would": "would", "should": "should",
              "could": "could", "must": "must", "might": "might", "may": "may", "did": "did", "had": "had",
              "didn't": "didn't", "can't": "can't", "won't": "won't", "wouldn't": "wouldn't", "cannot": "cannot",
              "shall": "shall", "need": "needs"}
_CONTRACTIONS = {"i'm": ("is", False), "i've": ("has", False), "i'd": ("would", False), "i'll": ("will", False)}
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[^A-Za-z]+")


_PAST = {"chose", "went", "was", "were", "had", "did", "made", "took", "got", "saw", "felt", "thought", "knew",
         "said", "came", "gave", "found", "told", "left", "began", "wrote", "ran", "bought", "brought", "taught",
         "met", "lost", "won", "spent", "kept", "built", "sent", "became", "grew", "drove", "ate", "fell", "heard",
         "held", "led", "paid", "sat", "slept", "spoke", "stood", "understood", "woke", "wore", "quit", "set", "put"}


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ed") or low in _PAST or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(sentence: str, speaker: str) -> str:
    """Rewrite first-person singular words with `speaker` ("The user", or the turn's name)."""
    tokens = _WORD.findall(sentence.replace("’", "'"))
    out: list[str] = []
    conjugate_next = False
    for token in tokens:
        low = token.lower()
        label = speaker if not out or not "".join(out).strip() else _lower_label(speaker)
        if not token[0].isalpha():
            out.append(token)
            continue
        if conjugate_next:
            if low in _ADVERBS:
                out.append(token)
                continue
            out.append(_conjugate(token))
            conjugate_next = False
            continue
        if low == "i":
            out.append(label)
            conjugate_next = True
        elif low in _CONTRACTIONS:
            out.append(f"{label} {_CONTRACTIONS[low][0]}")
        elif low in ("my", "mine"):
            out.append(f"{label}'s")
        elif low in ("me",):
            out.append(_lower_label(speaker) if out else speaker)
        elif low == "myself":
            out.append("themselves")
        else:
            out.append(token)
    text = "".join(out).strip()
    return text[:1].upper() + text[1:]


def _lower_label(speaker: str) -> str:
    return "the user" if speaker == "The user" else ("the assistant" if speaker == "The assistant" else speaker)
