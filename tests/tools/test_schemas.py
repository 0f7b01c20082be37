"""schemas/ is generated from the pydantic contracts and must not drift from them."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from agent_memory.tools.schemas import generate, render

pytestmark = pytest.mark.anyio

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schema_files_match_the_contracts() -> None:
    expected = generate()
    on_disk = {p.name for p in SCHEMAS.glob("*.json")}
    assert on_disk == set(expected), "run: python -m agent_memory.tools.schemas schemas"
    for name, schema in expected.items():
        assert (SCHEMAS / name).read_text() == render(schema), f"{name} drifted; regenerate it"


async def test_published_tool_schemas_are_the_contracts(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    crud = tools["memory_crud"]
    assert crud.input_schema == generate()["memory_crud.input.json"]
    assert crud.output_schema == generate()["memory_crud.output.json"]
    assert set(crud.input_schema["properties"]) == {
        "action", "scope", "namespace", "layer", "items", "filters", "subtree", "cursor", "limit", "if_match"}
    assert crud.input_schema["additionalProperties"] is False
