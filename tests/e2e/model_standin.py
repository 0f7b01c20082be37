"""A stand-in for the Anthropic Messages API on 127.0.0.1: answers every turn with a short text
(server-sent events, as the Claude Code CLI streams) and records each request body, so a test can
read exactly what the host sent to the model (hook context included). A test may script tool calls
(`StandIn.call`): the next requests are answered with them, one each, before text again."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Noted."


def _events(text: str, tool: tuple[str, dict[str, Any]] | None = None, call_id: str = "toolu_01") -> bytes:
    """A streamed answer: `text`, or a call of `tool` (name, input)."""
    if tool is None:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
    else:
        block = {"type": "tool_use", "id": call_id, "name": tool[0], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool[1])}
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn" if tool is None else "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class StandIn:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, name: str, arguments: dict[str, Any]) -> None:
        """Answer a coming streamed request with a call of tool `name` (in order, one a request)."""
        with self._lock:
            self._calls.append((name, arguments))

    def next_call(self) -> tuple[str, dict[str, Any]] | None:
        with self._lock:
            return self._calls.pop(0) if self._calls else None

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def since(self, count: int) -> list[dict[str, Any]]:
        with self._lock:
            return self.requests[count:]


def _handler(standin: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _json(self, data: object) -> None:
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._json({"data": [], "has_more": False, "first_id": None, "last_id": None})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unreadable": raw.decode("utf-8", "replace")}
            if "count_tokens" in self.path:
                self._json({"input_tokens": 10})
                return
            standin.record(body)
            if not body.get("stream"):
                self._json({"id": "msg_standin", "type": "message", "role": "assistant", "model": "claude-standin",
                            "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
                            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2}})
                return
            payload = _events(REPLY, standin.next_call(), f"toolu_{len(standin.requests):02d}")
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def model_standin() -> Iterator[tuple[StandIn, int]]:
    standin = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
