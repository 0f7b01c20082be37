"""What a pydantic validation error tells the caller: the rule broken and how to meet it (the
allowed values, the bounds, the fields that exist), read from the contract models themselves so
the hint cannot drift from what is validated."""

from __future__ import annotations

import re
import types
from typing import Any, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")
_TYPES = {
    "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
    "float_type": "a number", "float_parsing": "a number",
    "string_type": "a string", "bool_type": "true or false", "bool_parsing": "true or false",
    "list_type": "an array", "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
}
_JSON_NAMES = {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
               list: "an array", tuple: "an array", dict: "an object"}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (`X | None`, `list[X]`), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) in (Union, types.UnionType, list, tuple) or get_args(annotation):
        for arg in get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _locate(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> tuple[type[BaseModel] | None,
                                                                               FieldInfo | None]:
    """The model holding the last named field of `loc`, and that field (None where unknown)."""
    container: type[BaseModel] | None = None
    info: FieldInfo | None = None
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        if current is None:
            return None, None
        container, info = current, current.model_fields.get(part)
        if info is None:
            return container, None
        current = _model_in(info.annotation)
    return container, info


def _bounds(info: FieldInfo | None) -> tuple[object | None, object | None]:
    low = high = None
    for rule in info.metadata if info is not None else ():
        if isinstance(rule, annotated_types.Ge | annotated_types.Gt):
            low = getattr(rule, "ge", None) if isinstance(rule, annotated_types.Ge) else rule.gt
        elif isinstance(rule, annotated_types.Le | annotated_types.Lt):
            high = getattr(rule, "le", None) if isinstance(rule, annotated_types.Le) else rule.lt
    return low, high


def _json_name(value: object) -> str:
    return _JSON_NAMES.get(type(value), "an object")


def explain(error: Any, path: str, model: type[BaseModel] | None) -> tuple[str, dict[str, object]]:
    """A message and extra `details` for one pydantic error at `path` (never echoing the value).

    Args:
        error: one entry of `ValidationError.errors()`.
        path: the field path as the caller wrote it (`filters.layer`, `items[0].content`).
        model: the model validated, to look up allowed fields and bounds.
    """
    kind, ctx = error["type"], error.get("ctx") or {}
    container, info = _locate(model, tuple(error["loc"]))
    if kind == "extra_forbidden":
        if container is None:
            return f"unknown field {path}", {}
        allowed = list(container.model_fields)
        return f"unknown field {path}; the fields here are {', '.join(allowed)}", {"allowed": allowed}
    if kind == "missing":
        return f"{path} is required", {}
    if kind == "literal_error":
        allowed = _QUOTED.findall(str(ctx.get("expected", "")))
        return f"{path} must be one of {', '.join(allowed)}", {"allowed": allowed}
    if kind in ("less_than_equal", "greater_than_equal", "less_than", "greater_than"):
        low, high = _bounds(info)
        if low is not None and high is not None and kind.endswith("equal"):
            return f"{path} must be between {low} and {high}", {"minimum": low, "maximum": high}
        limit = next(iter(ctx.values()), None)
        words = {"less_than_equal": "at most", "greater_than_equal": "at least", "less_than": "below",
                 "greater_than": "above"}[kind]
        return f"{path} must be {words} {limit}", {"limit": limit}
    if kind == "too_long":
        limit = ctx.get("max_length")
        return (f"{path} has {ctx.get('actual_length')} entries; at most {limit} are allowed: split the request",
                {"limit": limit})
    if kind == "too_short":
        limit = ctx.get("min_length")
        return f"{path} needs at least {limit}", {"limit": limit}
    if kind in _TYPES:
        return f"{path} must be {_TYPES[kind]}, not {_json_name(error.get('input'))}", {}
    return f"{path}: {error['msg']}", {}
