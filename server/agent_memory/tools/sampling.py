"""The sampling distiller: asks the client's own model (MCP `sampling/createMessage`) to distil
facts and rules. Only on 2025-11-25 sessions whose client declared the sampling capability and can
receive a server request now; anything unusable in the answer (`distillers.answers`) is
`DistillFailed`, and reflection falls back to the next engine."""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import ValidationError

from agent_memory.core.model.models import Entry
from agent_memory.core.model.statements import Insight, Turn
from agent_memory.core.ports import DistillFailed
from agent_memory.distillers.answers import parse_distillation, remembered, transcript

LEGACY_VERSION = "2025-11-25"
TIMEOUT_SECONDS = 60.0
TRANSCRIPT_CHARS = 24_000

PROMPT = """Distil the conversation below into durable memory for an AI agent.
Return only JSON: {"facts": [{"content": str, "confidence": 0..1}], "rules": [{"content": str, "confidence": 0..1}]}
facts: lasting facts about the user, their work, preferences and decisions, in the third person.
rules: instructions and constraints the agent should follow from now on, in the imperative.
Leave out small talk, questions and anything only true for this moment. At most {max_items} items in all.
When a fact or rule changes one already remembered (listed below with its id), add "replaces": "<that id>" to it.
{known}
Conversation:
{transcript}"""


def sampling_distiller(ctx: Any) -> SamplingDistiller | None:
    """A distiller for this request's session, or None when the session cannot be sampled."""
    session = ctx.session
    capabilities = session.client_capabilities
    if session.protocol_version != LEGACY_VERSION or capabilities is None or capabilities.sampling is None:
        return None
    if not getattr(session, "can_send_request", True):
        return None
    return SamplingDistiller(session, ctx.request_id)


def _why(exc: Exception) -> str:
    """Why a sampling request failed, in words for the client (`fallback_reason`): never an
    exception class name or the client's own error text."""
    if isinstance(exc, MCPError):
        if exc.code == types.REQUEST_TIMEOUT:
            return f"the client did not answer within {TIMEOUT_SECONDS:.0f} s"
        return f"the client answered with error {exc.code}"
    if isinstance(exc, TimeoutError):
        return f"the client did not answer within {TIMEOUT_SECONDS:.0f} s"
    if isinstance(exc, ValidationError):
        return "the client's answer was not a valid sampling result"
    return "the request could not be sent to the client"


class SamplingDistiller:
    def __init__(self, session: Any, request_id: Any) -> None:
        self._session = session
        self._request_id = request_id

    async def distil(self, turns: list[Turn], max_items: int, known: list[Entry]) -> list[Insight]:
        listed, known_ids = remembered(known)
        prompt = (PROMPT.replace("{max_items}", str(max_items))
                  .replace("{known}", f"\nAlready remembered:\n{listed}" if listed else "")
                  .replace("{transcript}", transcript(turns, TRANSCRIPT_CHARS)))
        request = types.CreateMessageRequest(params=types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
            max_tokens=1500, temperature=0.0,
            system_prompt="You extract durable memories. Answer with JSON only.",
        ))
        try:
            result = await self._session.send_request(
                request, types.CreateMessageResult, request_read_timeout_seconds=TIMEOUT_SECONDS,
                metadata=ServerMessageMetadata(related_request_id=self._request_id))
        except Exception as exc:  # refused, timed out, malformed result, no back channel
            raise DistillFailed(f"sampling failed: {_why(exc)}") from None
        content = result.content
        text = content.text if isinstance(content, types.TextContent) else None
        if text is None:
            raise DistillFailed("the model answered without text")
        return parse_distillation(text, max_items, known_ids)
