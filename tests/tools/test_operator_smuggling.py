"""The operator flag comes only from a signed token on the console: an identity in `_meta` that
claims it (under any spelling) is refused, and reaches nothing of another team."""

from __future__ import annotations

import pytest

from tests.conftest import IDENTITY_KEY, Agent, identity

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("claim", [{"operator": True}, {"op": True}, {"is_operator": True}, {"Operator": True}])
async def test_an_identity_claiming_to_be_an_operator_is_refused(agent: Agent, claim: dict) -> None:
    blue = agent.as_(identity("blue-lead", "sys3", "blue"))
    await blue.create("blue team secret", scope="team", namespace="blue", layer="long_term")
    smuggler = agent.as_({**identity("intruder", "sys1", "red"), **claim})
    failed, data = await smuggler.crud(action="list", scope="team", namespace="blue")
    assert failed and not data["items"], data
    assert data["errors"][0]["code"] == "FORBIDDEN", data
    assert "unknown field" in data["errors"][0]["message"]
    found = await agent.client.call_tool("memory_retrieve", {"query": "blue team secret", "mode": "keyword"},
                                         meta={IDENTITY_KEY: smuggler.ident})
    assert found.is_error and "unknown field" in str(found.structured_content), found.structured_content
    assert not found.structured_content.get("items")
    assert "blue team secret" not in str(found.structured_content)
