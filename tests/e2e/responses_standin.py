"""A stand-in for the OpenAI Responses API on 127.0.0.1, as the Codex CLI calls it (`POST
/v1/responses`, `stream: true`, server-sent events): every turn is answered with a short text and
each request body is recorded, so a test reads exactly what Codex sent the model (the hooks' added
context arrives as `developer` messages in `input`; MCP tools as a `namespace` tool `mcp__<server>`).
A test may script tool calls (`StandIn.call`): the next requests are answered with them, one each.
Checked with codex-cli 0.171.0 and a `[model_providers.<id>]` of `wire_api = "responses"`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Noted."


def provider_config(port: int) -> str:
    """The lines of Codex's config.toml that send its model requests here (the key is read from STANDIN_KEY)."""
    return (f'model = "gpt-standin"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "standin"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_KEY"\n')


def _events(text: str, call: tuple[str, str, dict[str, Any]] | None = None, call_id: str = "call_1") -> bytes:
    """A streamed answer: `text`, or a call of (namespace, tool, arguments)."""
    message: dict[str, Any] = {"type": "message", "role": "assistant", "id": "msg_standin", "status": "completed",
                               "content": [{"type": "output_text", "text": text, "annotations": []}]}
    if call is not None:
        message = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "status": "completed",
                   "namespace": call[0], "name": call[1], "arguments": json.dumps(call[2])}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 2,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 12}
    events = [{"type": "response.created", "response": {"id": "resp_standin"}},
              {"type": "response.output_item.done", "output_index": 0, "item": message},
              {"type": "response.completed", "response": {"id": "resp_standin", "usage": usage}}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class StandIn:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._calls: list[tuple[str, str, dict[str, Any]]] = []

    def call(self, namespace: str, name: str, arguments: dict[str, Any]) -> None:
        """Answer a coming request with a call of tool `name` of `namespace` (in order, one a request)."""
        with self._lock:
            self._calls.append((namespace, name, arguments))

    def next_call(self) -> tuple[str, str, dict[str, Any]] | None:
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

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - e.g. /v1/models
            self._send(json.dumps({"models": [], "data": []}).encode(), "application/json")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unreadable": raw.decode("utf-8", "replace")}
            standin.record(body)
            self._send(_events(REPLY, standin.next_call(), f"call_{len(standin.requests)}"), "text/event-stream")

    return Handler


@contextmanager
def responses_standin() -> Iterator[tuple[StandIn, int]]:
    standin = StandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield standin, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
