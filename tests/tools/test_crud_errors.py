"""Bad input gets a clear `{code, message, details}` error and loses nothing."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from mcp import Client
from pydantic import BaseModel

from agent_memory.tools.server import ToolSpec, create_server
from tests.conftest import Agent, make_settings

pytestmark = pytest.mark.anyio

SPEC_CODES = {"INVALID_PARAMS", "FORBIDDEN", "NOT_FOUND", "CONFLICT", "RATE_LIMITED", "NOT_IMPLEMENTED", "INTERNAL"}


async def _count(agent: Agent) -> int:
    _, data = await agent.crud(action="list", limit=100)
    return len(data["items"])


async def test_eleven_items_is_invalid_params_and_nothing_is_written(agent: Agent) -> None:
    failed, data = await agent.crud(action="create", items=[{"content": f"n{i}"} for i in range(11)])
    assert failed and data["items"] == []
    assert data["errors"] == [{"code": "INVALID_PARAMS", "message": data["errors"][0]["message"],
                               "details": {"field": "items", "limit": 10}}]
    assert "at most 10" in data["errors"][0]["message"] and "split the request" in data["errors"][0]["message"]
    assert await _count(agent) == 0


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"action": "explode"}, "action"),
        ({}, "action"),
        ({"action": "list", "limit": "25"}, "limit"),
        ({"action": "list", "limit": 2.5}, "limit"),
        ({"action": "list", "scope": "universe"}, "scope"),
        ({"action": "list", "surprise": True}, "surprise"),
        ({"action": "list", "filters": {"colour": "red"}}, "filters.colour"),
        ({"action": "list", "filters": {"tags": "ops"}}, "filters.tags"),
        ({"action": "create", "items": "not a list"}, "items"),
        ({"action": "create", "items": [{"content": 42}]}, "items[0].content"),
        ({"action": "create", "items": [{"content": "x", "confidence": 1.5}]}, "items[0].confidence"),
        ({"action": "create", "items": [{"content": "x", "tags": ["t"] * 33}]}, "tags"),
        ({"action": "create", "items": [{"content": "x", "tags": ["x" * 129]}]}, "tags"),
        ({"action": "create", "items": [{"content": "x", "priority": "urgent"}]}, "items[0].priority"),
        ({"action": "create", "items": [{"content": "x", "ttl_seconds": 5, "expires_at": "2999-01-01T00:00:00Z"}]},
         "ttl_seconds"),
        ({"action": "create", "items": [{"content": "x", "expires_at": "next tuesday"}]}, "expires_at"),
        ({"action": "create", "namespace": "../etc", "items": [{"content": "x"}]}, "namespace"),
        ({"action": "create", "items": []}, "items"),
        ({"action": "update", "items": [{"id": "mem_x"}]}, "items"),
        ({"action": "update", "items": [{"id": "mem_x", "content": None}]}, "content"),
        ({"action": "update", "items": [{"id": "a"}, {"id": "b"}], "if_match": "e"}, "if_match"),
        ({"action": "list", "items": [{"id": "a"}]}, "items"),
        ({"action": "create", "filters": {}, "items": [{"content": "x"}]}, "filters"),
        ({"action": "read", "items": [{"id": "a"}], "filters": {"ids": ["b"]}}, "filters.ids"),
    ],
)
async def test_bad_arguments_are_invalid_params_naming_the_field(agent: Agent, arguments: dict, field: str) -> None:
    failed, data = await agent.crud(**arguments)
    assert failed, data
    assert data["items"] == []
    error = data["errors"][0]
    assert error["code"] == "INVALID_PARAMS"
    assert error["details"]["field"] == field
    assert await _count(agent) == 0


async def test_oversize_content_names_the_limit(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, max_content_chars=100)
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        failed, data = await agent.crud(action="create", items=[{"content": "x" * 101}])
        assert failed and data["errors"][0]["details"] == {"field": "content", "limit": 100, "index": 0}
        entry = await agent.create("x" * 100)
        failed, data = await agent.crud(action="update", items=[{"id": entry["id"], "content": "y" * 101}])
        assert failed and data["errors"][0]["details"]["field"] == "content"


async def test_unknown_tool_is_a_structured_error(client: Client) -> None:
    result = await client.call_tool("memory_nothing", {})
    assert result.is_error
    assert result.structured_content["errors"][0]["code"] == "INVALID_PARAMS"


class _Empty(BaseModel):
    model_config = {"extra": "forbid"}


class _Out(BaseModel):
    items: list[str] = []
    errors: list[dict] = []

    @classmethod
    def failed(cls, error: BaseModel) -> _Out:
        return cls(errors=[error.model_dump()])


async def _explode(app: object, call: object, args: object, ctx: object) -> _Out:
    raise RuntimeError("secret internal detail: /var/db password=hunter2")


async def test_unexpected_exception_becomes_internal_with_request_id_only(tmp_path: Path) -> None:
    boom = ToolSpec(name="boom", skill=None, description="raises", args_model=_Empty, result_model=_Out, run=_explode)
    async with Client(create_server(make_settings(tmp_path), extra_tools=[boom])) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error
    error = result.structured_content["errors"][0]
    assert error["code"] == "INTERNAL" and error["details"]["request_id"].startswith("req_")
    text = result.content[0].text
    assert "hunter2" not in text and "secret" not in text and "Traceback" not in text


def _random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 2 else 5)
    if kind == 0:
        return rng.randint(-(10**12), 10**12)
    if kind == 1:
        return "".join(rng.choice(string.printable + "é中\u0000'\"();*") for _ in range(rng.randrange(40)))
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return rng.random() * 1e6
    if kind == 4:
        return rng.choice(["create", "read", "update", "delete", "list", "promote", "agent", "team", "global"])
    if kind == 5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(12))]
    return {rng.choice(["id", "content", "tags", "if_match", "layer", "x", "target_scope", "ids"]):
            _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


async def test_fuzzed_arguments_always_get_a_spec_shaped_answer(agent: Agent) -> None:
    rng = random.Random(20261122)
    keys = ["action", "scope", "namespace", "layer", "items", "filters", "cursor", "limit", "if_match", "junk"]
    for _ in range(150):
        arguments = {key: _random_value(rng) for key in rng.sample(keys, rng.randrange(1, 6))}
        if rng.random() < 0.7:
            arguments["action"] = rng.choice(["create", "read", "update", "delete", "list", "promote"])
        failed, data = await agent.crud(**arguments)
        assert set(data) == {"items", "errors", "next_cursor", "has_more", "redacted"}
        for error in data["errors"]:
            assert set(error) == {"code", "message", "details"} and error["code"] in SPEC_CODES
            assert error["code"] != "INTERNAL", (arguments, error)
        assert failed is (not data["items"] and bool(data["errors"]))


async def test_lone_surrogates_are_invalid_params_and_nothing_is_written(tmp_path: Path) -> None:
    # JSON transports refuse lone surrogates; an in-process client can send them, and SQLite cannot
    # store them (this was INTERNAL).
    async with Client(create_server(make_settings(tmp_path)), mode="auto") as client:
        agent = Agent(client)
        failed, data = await agent.crud(action="create", items=[{"content": "a\ud800b"}])
        assert failed and data["errors"] == [{"code": "INVALID_PARAMS", "message": data["errors"][0]["message"],
                                              "details": {"field": "items[0].content"}}]
        failed, data = await agent.crud(action="list", filters={"tags": ["ok", "\udfff"]})
        assert failed and data["errors"][0]["details"] == {"field": "filters.tags[1]"}
        json.dumps(data, ensure_ascii=False).encode("utf-8")  # the answer can be written as UTF-8
        assert await _count(agent) == 0


@pytest.mark.parametrize(("arguments", "field"), [
    ({"action": 10**5000}, "action"),  # str() of it raises: this was a JSON-RPC "Internal server error"
    ({"action": "list", "scope": -(10**5000)}, "scope"),
    ({"action": "\ud800"}, "action"),  # could not be written to the log: a JSON-RPC error too
    ({"action": "list", "scope": "agent\udfff"}, "scope"),
], ids=["huge-int-action", "huge-int-scope", "surrogate-action", "surrogate-scope"])
async def test_unprintable_action_or_scope_gets_a_structured_answer(tmp_path: Path, arguments: dict,
                                                                     field: str) -> None:
    async with Client(create_server(make_settings(tmp_path)), mode="auto") as client:
        agent = Agent(client)
        failed, data = await agent.crud(**arguments)
        assert failed and data["errors"][0]["code"] == "INVALID_PARAMS"
        assert data["errors"][0]["details"]["field"] == field
        assert await _count(agent) == 0
