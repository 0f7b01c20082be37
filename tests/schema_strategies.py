"""Hypothesis strategies drawn from a tool's published JSON Schema (its `tools/list` inputSchema),
with hand-written nasty values mixed in at every level. Used by `tests/tools/test_fuzz.py`.

Only the JSON Schema the server publishes is understood: `type` (one or a list), `enum`, `anyOf`,
`properties`, `required`, `additionalProperties`, `items`, `minItems`/`maxItems`,
`minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`, `minLength`/`maxLength`. Anything
else fails loudly, so a new schema feature cannot silently shrink what the fuzzer covers.

A schema alone allows mostly values the server turns away at once (any string is a "namespace").
`hints` give plausible values for a property by its name (real namespaces, ids, dates, ...) so
most examples get past validation into the service and storage code; `nasty` strategies by
property name, plus generic ones for every value, are the hostile part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

_SUPPORTED = {
    "type", "enum", "anyOf", "properties", "required", "additionalProperties", "propertyNames", "items", "minItems",
    "maxItems",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    # annotations only
    "title", "description", "default",
}


@dataclass(frozen=True)
class Ref:
    """A placeholder resolved just before the call from what the example has seen so far: `kind`
    is `id`, `etag`, `stale_etag`, `cursor` or `foreign_cursor`; `index` picks among the known."""

    kind: str
    index: int = 0


def weighted(*options: tuple[int, SearchStrategy[Any]]) -> SearchStrategy[Any]:
    """Draw from one of the strategies with the given weights; shrinks towards the first."""
    total = sum(weight for weight, _ in options)

    @st.composite
    def pick(draw: st.DrawFn) -> Any:
        k = draw(st.integers(0, total - 1))
        for weight, strategy in options:
            if k < weight:
                return draw(strategy)
            k -= weight
        raise AssertionError("unreachable")

    return pick()


# -- generic nasty values --------------------------------------------------------------------

HUGE_INT = 10**4400  # more digits than int->str allows by default (4300): str() and json.dumps raise
HUGE_TEXT = "x" * 100_001  # bounded, so the suite stays fast; larger than every text limit
LONE_SURROGATES = ["\ud800", "a\udfffb", "\ud83d", "x" * 10 + "\udc00"]


def _nested(depth: int, as_list: bool) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


NASTY_SCALARS: list[object] = [
    None, True, False, 0, -1, 1, 2**31, 2**63, -(2**63) - 1, 2**64, HUGE_INT, -HUGE_INT,
    0.5, -0.0, 1.0, float("nan"), float("inf"), float("-inf"), 1e308, 5e-324,
    "", " ", "\x00", "a\x00b", *LONE_SURROGATES, "\ufeff", "\u202e\u202d", "\U0001f4a5" * 8, "é" * 300,
    HUGE_TEXT, "null", "true", "[]", "{}", "NaN", "-Infinity", "' OR 1=1 --", "%", "_", "%_%", "..", "../..",
    "\n\r\t", "\\", '"', "\x1b[31m", "memory_crud", "INTERNAL",
]
NASTY_CONTAINERS: list[object] = [
    [], [None], [1, "a", None, 2.5], ["x"] * 2000, list(range(200)), {}, {"": None}, {"\x00": 1},
    {"a": 1, "b": [2]}, {"__class__": "x"}, _nested(120, as_list=False), _nested(120, as_list=True),
]
UNKNOWN_KEYS = ["surprise", "", "\x00", "_meta", "__proto__", "ID", "Action", "items ", "content\x00", "\ud800",
                "k" * 500]


def nasty_values() -> SearchStrategy[Any]:
    return st.one_of(st.sampled_from(NASTY_SCALARS), st.sampled_from(NASTY_CONTAINERS))


def enum_variants(values: Sequence[object]) -> SearchStrategy[Any]:
    """Near misses of enum values: case, whitespace, NUL, plural."""
    texts = [v for v in values if isinstance(v, str)]
    if not texts:
        return st.nothing()
    return st.sampled_from(texts).flatmap(lambda v: st.sampled_from(
        [v.upper(), v.title(), f" {v}", f"{v} ", f"{v}\x00", f"{v}s", v[:-1], v.replace("_", "-")]))


# -- the generator ---------------------------------------------------------------------------


class SchemaStrategies:
    """Strategies for the values a JSON Schema describes.

    Args:
        hints: property name -> strategy of plausible values (used most of the time for that name).
        nasty: property name -> strategy of hostile values specific to it (namespaces with `..`, ...).
        nasty_weight: out of 100, how often a value is replaced by a nasty one.
        extra_weight / missing_weight: out of 100, how often an object gets an unknown field, or
            loses a required one.
    """

    def __init__(self, hints: Mapping[str, SearchStrategy[Any]] | None = None,
                 nasty: Mapping[str, SearchStrategy[Any]] | None = None, *, nasty_weight: int = 3,
                 extra_weight: int = 2, missing_weight: int = 1, max_list: int = 4, max_text: int = 40) -> None:
        self.hints = dict(hints or {})
        self.nasty = dict(nasty or {})
        self.nasty_weight = nasty_weight
        self.extra_weight = extra_weight
        self.missing_weight = missing_weight
        self.max_list = max_list
        self.max_text = max_text

    # public ---------------------------------------------------------------------------------

    def value(self, schema: Mapping[str, Any], name: str | None = None) -> SearchStrategy[Any]:
        """Mostly a valid (hint-biased) value of `schema`; sometimes a nasty one."""
        valid = self.valid(schema, name)
        hostile = self.hostile(schema, name)
        return weighted((100 - self.nasty_weight, valid), (self.nasty_weight, hostile))

    def valid(self, schema: Mapping[str, Any], name: str | None = None) -> SearchStrategy[Any]:
        plain = self._plain(schema)
        if name is not None and name in self.hints:
            return weighted((5, self.hints[name]), (1, plain))
        return plain

    def hostile(self, schema: Mapping[str, Any], name: str | None = None) -> SearchStrategy[Any]:
        options: list[tuple[int, SearchStrategy[Any]]] = [(2, nasty_values())]
        if name is not None and name in self.nasty:
            options.insert(0, (4, self.nasty[name]))
        enums = [v for branch in _branches(schema) for v in branch.get("enum", ())]
        if enums:
            options.append((2, enum_variants(enums)))
        return weighted(*options)

    def object(self, schema: Mapping[str, Any], overrides: Mapping[str, SearchStrategy[Any]] | None = None,
               include: Mapping[str, int] | None = None) -> SearchStrategy[dict[str, Any]]:
        """An object of `schema`: required properties, some optional ones, now and then an
        unknown field or a missing required one. `overrides` replace the strategy of a property;
        `include` gives, out of 100, how often each optional property is sent (default 50)."""
        _check(schema)
        properties: Mapping[str, Any] = schema.get("properties", {})
        names = schema.get("propertyNames", {}).get("enum")
        values = schema.get("additionalProperties")
        if not properties and names and isinstance(values, Mapping):
            # a map whose keys are a closed set (e.g. budget shares per tier): each key now and then
            properties = {name: values for name in names}
        required = set(schema.get("required", ()))
        overrides = dict(overrides or {})
        chance = {key: 50 for key in properties} | dict(include or {})
        strategies = {key: overrides[key] if key in overrides else self.value(sub, key)
                      for key, sub in properties.items()}

        @st.composite
        def build(draw: st.DrawFn) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for key, strategy in strategies.items():
                if key in required:
                    if draw(st.integers(0, 99)) >= self.missing_weight:
                        out[key] = draw(strategy)
                elif draw(st.integers(0, 99)) < chance[key]:
                    out[key] = draw(strategy)
            if draw(st.integers(0, 99)) < self.extra_weight:
                out[draw(st.sampled_from(UNKNOWN_KEYS))] = draw(nasty_values())
            return out

        return build()

    # the schema-valid part ------------------------------------------------------------------

    def _plain(self, schema: Mapping[str, Any]) -> SearchStrategy[Any]:
        _check(schema)
        if "anyOf" in schema:
            # null is one value; the other branches hold the interesting ones
            branches = [(1 if branch == {"type": "null"} else 5, self._plain(branch)) for branch in schema["anyOf"]]
            return weighted(*sorted(branches, key=lambda b: -b[0]))
        if "enum" in schema:
            return st.sampled_from(list(schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            return st.one_of([self._plain({**schema, "type": k}) for k in kind])
        if kind == "object":
            return self.object(schema)
        if kind == "array":
            item = self.value(schema.get("items", {}))
            low = schema.get("minItems", 0)
            high = min(schema.get("maxItems", low + self.max_list), low + self.max_list)
            return st.lists(item, min_size=low, max_size=high)
        if kind == "string":
            low = schema.get("minLength", 0)
            high = min(schema.get("maxLength", low + self.max_text), low + self.max_text)
            return st.text(st.characters(codec="utf-8"), min_size=low, max_size=high)
        if kind == "integer":
            low, high = _bounds(schema)
            return st.integers(min_value=None if low is None else int(low),
                               max_value=None if high is None else int(high))
        if kind == "number":
            low, high = _bounds(schema)
            return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)
        if kind == "boolean":
            return st.booleans()
        if kind == "null":
            return st.none()
        if kind is None and not schema.get("properties"):
            return nasty_values()  # an untyped schema takes anything
        raise AssertionError(f"unsupported schema type {kind!r}")


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(schema.get("anyOf", [schema]))


def _bounds(schema: Mapping[str, Any]) -> tuple[float | None, float | None]:
    low = schema.get("minimum")
    high = schema.get("maximum")
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + (1 if schema.get("type") == "integer" else 1e-9)
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - (1 if schema.get("type") == "integer" else 1e-9)
    return low, high


def _check(schema: Mapping[str, Any]) -> None:
    unknown = set(schema) - _SUPPORTED
    if unknown:
        raise AssertionError(f"schema keywords the fuzzer does not understand: {sorted(unknown)}")


def branch_titled(schema: Mapping[str, Any], title: str) -> Mapping[str, Any]:
    """The `anyOf` branch (searched depth-first) whose title is `title`."""
    if schema.get("title") == title:
        return schema
    for key in ("anyOf", "items"):
        children = schema.get(key)
        for child in children if isinstance(children, list) else [children] if children else []:
            try:
                return branch_titled(child, title)
            except LookupError:
                pass
    raise LookupError(title)
