"""memory_reflect when the local model fails: malformed, misshapen, oversized, hostile-to-the-store,
slow or absent answers from the stand-in endpoint (tests/chat_standin.py) all fall back to the
extractive engine, say why in `fallback_reason` in plain words (never the model's text, never an
exception's name), store nothing of the answer, and leave a warning for the operator. Both record
stores (tests/conftest.py BOTH_STORES)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from structlog.testing import capture_logs

from agent_memory.config import Settings
from agent_memory.tools.server import create_server
from tests.chat_standin import MODEL, Answer, ChatStandIn, chat_standin, closed_port_url, completion
from tests.conftest import Agent, make_settings, store_settings

pytestmark = pytest.mark.anyio

SAID = "Never deploy on weekends, I run the on-call rota then."
EXTRACTED = ["Never deploy on weekends, I run the on-call rota then."]
MARK = "MODEL-TEXT-MARK"  # in every answer's items: never stored, never in a reason or a log line
HTML = {"Content-Type": "text/html"}

UNUSABLE = {
    "prose": (completion(f"Sure! The user {MARK} likes deploys."), "the model's answer held no JSON object"),
    "broken-json": (completion('{"facts": ["' + MARK + '",}'), "the model's answer was not valid JSON"),
    "not-a-list": (completion({"facts": MARK}), "'facts' in the model's answer was not a list"),
    "no-lists": (completion({"summary": MARK}), "the model's answer held no facts or rules"),
    "bad-confidence": (completion({"rules": [{"content": MARK, "confidence": 7}]}),
                       "an item of 'rules' in the model's answer had a confidence outside 0..1"),
    "too-many": (completion({"facts": [f"{MARK} {n}" for n in range(15)], "rules": [f"{MARK} r{n}" for n in range(6)]}),
                 "the model's answer held more than the 20 items asked for"),
    "oversize": (completion({"decisions": [MARK + "x" * 1000]}),
                 "an item of 'decisions' in the model's answer was longer than 1000 characters"),
    "nul": (completion('{"preferences": ["' + MARK + ' \\u0000 tea"]}'),
            "an item of 'preferences' in the model's answer had no usable content"),
    "lone-surrogate": (completion('{"facts": ["' + MARK + ' \\ud800 tea"]}'),
                       "an item of 'facts' in the model's answer had no usable content"),
    "cut-off": (completion({"facts": [MARK]}, finish_reason="length"),
                "the model's answer was cut off at its length limit"),
    "http-500": (Answer(500, MARK.encode()), "the model's server answered with HTTP 500"),
    "redirect": (Answer(302, b"", {"Location": "http://127.0.0.1:9/v1/chat/completions"}),
                 "the model's server answered with HTTP 302"),
    "html": (Answer(200, f"<html>{MARK}</html>".encode(), HTML), "the model's server did not answer with JSON"),
    "not-a-completion": (Answer(200, b'{"error": {"message": "' + MARK.encode() + b'"}}'),
                         "the model's server did not answer with a chat completion"),
    "huge-declared": (Answer(200, b" " * 1_500_000), "the model's answer was larger than 1,000,000 bytes"),
    "huge-streamed": (Answer(200, b" " * 3_000_000, declare_length=False),
                      "the model's answer was larger than 1,000,000 bytes"),
}


@pytest.fixture
def standin() -> Iterator[ChatStandIn]:
    with chat_standin() as running:
        yield running


async def _reflect(settings: Settings) -> dict:
    async with Client(create_server(settings)) as client:
        agent = Agent(client)
        await agent.log("s", SAID)
        failed, data = await agent.reflect(action="reflect", session_id="s")
        assert not failed, data
        failed, listed = await agent.crud(action="list", limit=100)
    assert all(MARK not in e["content"] for e in listed["items"])
    return data


@pytest.mark.parametrize("case", sorted(UNUSABLE))
async def test_an_unusable_answer_falls_back_to_extraction_and_says_why(
        case: str, standin: ChatStandIn, request: pytest.FixtureRequest, tmp_path: Path, store_backend: str) -> None:
    answer, reason = UNUSABLE[case]
    standin.answer(answer)
    settings = store_settings(request, tmp_path / "data", store_backend, distill_url=standin.url,
                              distill_model=MODEL)
    with capture_logs() as logged:
        data = await _reflect(settings)
    assert data["engine"] == "extractive" and [i["content"] for i in data["items"]] == EXTRACTED
    assert data["fallback_reason"] == f"local model: {reason}"
    assert len(standin.requests) == 1
    warned = [e for e in logged if e["event"] == "distill_model_failed"]
    assert warned == [{"event": "distill_model_failed", "log_level": "warning", "model": MODEL, "reason": reason}]


async def test_a_model_that_does_not_answer_in_time_falls_back(
        standin: ChatStandIn, request: pytest.FixtureRequest, tmp_path: Path, store_backend: str) -> None:
    standin.answer(Answer(delay=60, body=completion({"facts": [MARK]}).body))  # until the stand-in stops
    settings = store_settings(request, tmp_path / "data", store_backend, distill_url=standin.url,
                              distill_model=MODEL, distill_timeout_seconds=0.5)
    with anyio.fail_after(30):
        data = await _reflect(settings)
    assert data["engine"] == "extractive" and [i["content"] for i in data["items"]] == EXTRACTED
    assert data["fallback_reason"] == "local model: the model did not answer within 0.5 s"


async def test_a_model_server_that_is_down_falls_back(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data", distill_url=closed_port_url(), distill_model=MODEL)
    with anyio.fail_after(30):
        data = await _reflect(settings)
    assert data["engine"] == "extractive" and [i["content"] for i in data["items"]] == EXTRACTED
    assert data["fallback_reason"] == "local model: the model's server could not be reached"


async def test_the_warning_holds_neither_the_key_nor_the_session(standin: ChatStandIn, tmp_path: Path) -> None:
    standin.answer(Answer(401, b'{"error": "bad key sk-standin-secret"}'))
    settings = make_settings(tmp_path / "data", distill_url=standin.url, distill_model=MODEL,
                             distill_key="sk-standin-secret")
    with capture_logs() as logged:
        data = await _reflect(settings)
    assert data["fallback_reason"] == "local model: the model's server answered with HTTP 401"
    assert standin.requests[0].headers["authorization"] == "Bearer sk-standin-secret"
    text = repr(logged) + repr(settings)
    assert "sk-standin-secret" not in text and "on-call rota" not in text
