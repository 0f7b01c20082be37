"""Published JSON Schemas in their cheapest-to-validate form.

MCP clients validate every structured result against the tool's output schema (the Python SDK
with `jsonschema`), so the schema's shape is on every call's critical path: `$ref` lookups and
`anyOf` branches cost several times more than the same constraint written inline. Here pydantic's
schema is rewritten with the same meaning: `$defs` inlined, and `anyOf [X, null]` over a simple
typed X folded into `type: [X, "null"]`.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_FOLDABLE = {"type", "enum", "items", "maxItems", "minItems", "minimum", "maximum", "exclusiveMinimum",
             "exclusiveMaximum", "maxLength", "minLength", "format"}


def published_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return _rewrite(schema, defs)


def _rewrite(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _rewrite(merged, defs)
    rewritten = {key: _rewrite(value, defs) for key, value in node.items()}
    branches = rewritten.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if isinstance(other.get("type"), str) and set(other) <= _FOLDABLE:
            folded = {**other, "type": [other["type"], "null"]}
            if "enum" in folded:
                folded["enum"] = [*folded["enum"], None]
            del rewritten["anyOf"]
            rewritten = {**folded, **rewritten}
    return rewritten
