"""Published JSON Schemas in their cheapest-to-validate form.

MCP clients validate every structured result against the tool's output schema (the Python SDK
with `jsonschema`), so the schema's shape is on every call's critical path: `$ref` lookups and
`anyOf` branches cost several times more than the same constraint written inline. Here pydantic's
schema is rewritten with the same meaning: `$defs` inlined (entries in output schemas are already
untyped objects, see `contracts.crud._records_schema`).

Nullable fields stay `anyOf` branches of a single `type` each in the published tool schemas:
hosts turn them into function declarations for their model, and some of those dialects (the
OpenAPI subset behind Gemini function calling, for one) accept only one `type` per schema (the
MCP Inspector warns about `type: [X, "null"]`). `fold_nullable=True` folds them into
`type: [X, "null"]`, the compact form used for the typed record schema in `schemas/`.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_FOLDABLE = {"type", "enum", "items", "maxItems", "minItems", "minimum", "maximum", "exclusiveMinimum",
             "exclusiveMaximum", "maxLength", "minLength", "format"}


def published_schema(model: type[BaseModel], *, fold_nullable: bool = True) -> dict[str, Any]:
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return _rewrite(schema, defs, fold_nullable)


def _rewrite(node: Any, defs: dict[str, Any], fold: bool) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, defs, fold) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _rewrite(merged, defs, fold)
    rewritten = {key: _rewrite(value, defs, fold) for key, value in node.items()}
    branches = rewritten.get("anyOf")
    if fold and isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        if isinstance(other.get("type"), str) and set(other) <= _FOLDABLE:
            folded = {**other, "type": [other["type"], "null"]}
            if "enum" in folded:
                folded["enum"] = [*folded["enum"], None]
            del rewritten["anyOf"]
            rewritten = {**folded, **rewritten}
    return rewritten
