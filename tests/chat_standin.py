"""A stand-in for an OpenAI-compatible chat endpoint (what Ollama, llama.cpp's server and vLLM
expose) on 127.0.0.1: records every request (method, path, headers, JSON body) and answers with
what the test scripts, one answer a request, in order (then the default): a chat completion, a
malformed or hostile one, an HTTP error, an oversized body, or a slow answer that waits until the
stand-in stops. Runs in threads of its own, so a server under test in this process or a hook
helper in another reaches it over real TCP."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "qwen-standin"


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0  # seconds to wait first (cut short when the stand-in stops)
    declare_length: bool = True  # False: no Content-Length, the body ends when the connection closes


def completion(content: str | dict[str, Any], *, finish_reason: str = "stop") -> Answer:
    """A chat completion whose first choice's message says `content` (a dict: as JSON)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Answer(body=json.dumps({
        "id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}}).encode())


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any  # the parsed JSON body (None when it was not JSON)

    @property
    def prompt(self) -> str:
        """Every message's text, one after another."""
        return "\n".join(str(m.get("content")) for m in (self.body or {}).get("messages", []))


class ChatStandIn:
    def __init__(self, default: Answer | None = None) -> None:
        self.requests: list[Request] = []
        self.default = default or completion({"facts": [], "decisions": [], "preferences": [], "rules": []})
        self._answers: list[Answer] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The API's base URL, as `distill_url` takes it."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, *answers: Answer) -> None:
        """Answer the next requests with these, in order."""
        with self._lock:
            self._answers.extend(answers)

    def next_answer(self, request: Request) -> Answer:
        with self._lock:
            self.requests.append(request)
            return self._answers.pop(0) if self._answers else self.default

    def start(self) -> None:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the standard library's name
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                answer = standin.next_answer(Request(self.command, self.path,
                                                     {k.lower(): v for k, v in self.headers.items()}, body))
                if answer.delay and standin.stopping.wait(answer.delay):
                    return  # stopped meanwhile: no answer at all
                try:
                    self.send_response(answer.status)
                    for name, value in answer.headers.items():
                        self.send_header(name, value)
                    if answer.declare_length:
                        self.send_header("Content-Length", str(len(answer.body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a body it refused to read to the end)

            do_GET = do_POST  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@contextmanager
def chat_standin(default: Answer | None = None) -> Iterator[ChatStandIn]:
    standin = ChatStandIn(default)
    standin.start()
    try:
        yield standin
    finally:
        standin.stop()


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (a port just given back)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
