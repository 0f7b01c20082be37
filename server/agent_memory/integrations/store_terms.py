"""How LangGraph store terms map onto agent-memory: namespace labels as namespace segments, and
LangGraph's `filter` semantics (applied to values read back). No LangGraph import here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_SEGMENT_CHARS = 128
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def encode_label(label: str) -> str:
    """A LangGraph namespace label as a server namespace segment: `[A-Za-z0-9_-]` as they are, any
    other character as `.HH` per UTF-8 byte (LangGraph labels never hold a period, so this reads back).

    Raises:
        ValueError: the encoded label is longer than a segment may be.
    """
    out = "".join(c if c in _PLAIN else "".join(f".{b:02X}" for b in c.encode("utf-8")) for c in label)
    if len(out) > MAX_SEGMENT_CHARS:
        raise ValueError(f"namespace label {label[:40]!r}... is too long for agent-memory "
                         f"({len(out)} > {MAX_SEGMENT_CHARS} characters once encoded)")
    return out


def decode_label(segment: str) -> str:
    """The label `encode_label` made `segment` from (a segment it did not make comes back as is)."""
    if "." not in segment:
        return segment
    parts = segment.split(".")
    data = bytearray(parts[0].encode())
    try:
        for part in parts[1:]:
            data += bytes.fromhex(part[:2]) + part[2:].encode()
        return data.decode("utf-8")
    except ValueError:
        return segment


def _compare(actual: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (as its InMemoryStore): operators, nested objects, equality."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, dict) and all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(actual, (list, tuple)) and len(actual) == len(wanted)
                and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True)))
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(actual), float(operand)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"unsupported filter operator {op!r} (use $eq, $ne, $gt, $gte, $lt, $lte)")


def matches(value: Mapping[str, Any], filter_: Mapping[str, Any] | None) -> bool:
    """Whether a stored value passes a LangGraph `filter` (every field condition holds).

    Raises:
        ValueError: an operator LangGraph does not define.
    """
    return not filter_ or all(_compare(value.get(k), v) for k, v in filter_.items())


def namespace_matches(namespace: tuple[str, ...], match_type: str, path: Sequence[str]) -> bool:
    """LangGraph's prefix/suffix namespace condition, `*` matching any one label."""
    path = tuple(path)
    if len(namespace) < len(path):
        return False
    if match_type == "suffix":
        namespace, path = namespace[::-1], path[::-1]
    return all(p == "*" or n == p for n, p in zip(namespace, path, strict=False))
