"""How server processes that do not own the vector directory still search it: the owner answers
semantic queries on a Unix socket next to the directory's lock file, and the others ask it.

One JSON line each way per connection. The socket is created by the owner (who holds the lock, so
removing a stale socket left by a crashed owner is safe), is readable and writable by its user
only, and a client refuses a socket that another user created. Whatever ids come back are still
filtered by SQLite against the caller's permissions, like any other candidate.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import structlog

from agent_memory.core.ports import Partition, SemanticUnavailable

MAX_LINE = 1 << 24
CONNECT_SECONDS = 2.0
ANSWER_SECONDS = 15.0
_SUN_PATH_MAX = 100  # Linux allows 107 bytes; keep a margin

log = structlog.get_logger("agent_memory.vectors")

Nearest = Callable[[str, list[Partition], int], Awaitable[tuple[list[tuple[str, float]], list[float]]]]
Similarities = Callable[[list[float], list[Partition], list[str]], Awaitable[dict[str, float]]]


def socket_path(index_dir: Path) -> Path:
    """Where the owner of `index_dir` listens: beside it, or (when that path is too long for a
    Unix socket) in the temp directory under a name derived from it."""
    beside = index_dir.with_name(index_dir.name + ".sock")
    if len(os.fsencode(str(beside))) <= _SUN_PATH_MAX:
        return beside
    digest = hashlib.sha256(os.fsencode(str(index_dir.resolve()))).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"agent-memory-{digest}.sock"


def _partitions(raw: Any) -> list[Partition]:
    return [Partition(scope=str(scope), namespace=str(namespace)) for scope, namespace in raw]


class OwnerService:
    """Runs in the owning process: answers `nearest` and `similarities` for the others."""

    def __init__(self, path: Path, nearest: Nearest, similarities: Similarities) -> None:
        self._path = path
        self._nearest = nearest
        self._similarities = similarities
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        with suppress(FileNotFoundError):
            self._path.unlink()  # a crashed owner's socket: we hold the lock now
        # Private before it listens (nobody can connect before then), without touching the
        # process's umask, which other threads' new files and directories depend on meanwhile.
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(self._path))
            os.chmod(self._path, 0o600)
            self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=MAX_LINE)
        except BaseException:
            sock.close()
            raise
        log.info("vector_owner_listening", socket=str(self._path))

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            with suppress(Exception):
                await self._server.wait_closed()
            self._server = None
            with suppress(FileNotFoundError):
                self._path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            if line:
                writer.write(json.dumps(await self._answer(line)).encode() + b"\n")
                await writer.drain()
        except Exception as exc:  # one bad client must not disturb the owner
            log.warning("vector_owner_request_failed", error=type(exc).__name__)
        finally:
            writer.close()
            with suppress(Exception):
                await writer.wait_closed()

    async def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
            op = request["op"]
            partitions = _partitions(request["partitions"])
            if op == "nearest":
                hits, vector = await self._nearest(str(request["text"]), partitions, int(request["limit"]))
                return {"hits": hits, "vector": vector}
            if op == "similarities":
                found = await self._similarities([float(v) for v in request["vector"]], partitions,
                                                 [str(i) for i in request["ids"]])
                return {"similarities": found}
            return {"unavailable": f"unknown request {op!r}"}
        except SemanticUnavailable as exc:
            return {"unavailable": str(exc)}
        except (ValueError, KeyError, TypeError):
            return {"unavailable": "malformed request"}


class OwnerLink:
    """Used by a process that does not own the index: asks the owner, one connection a request."""

    def __init__(self, path: Path, owner: str) -> None:
        self._path = path
        self.owner = owner  # for messages: who owns it

    async def nearest(self, text: str, partitions: list[Partition], limit: int
                      ) -> tuple[list[tuple[str, float]], list[float]]:
        answer = await self._ask({"op": "nearest", "text": text, "limit": limit,
                                  "partitions": [[p.scope, p.namespace] for p in partitions]})
        try:
            hits = [(str(i), float(s)) for i, s in answer["hits"]]
            return hits, [float(v) for v in answer["vector"]]
        except (KeyError, TypeError, ValueError):
            raise SemanticUnavailable("the process owning the vector index gave an unreadable answer") from None

    async def similarities(self, vector: list[float], partitions: list[Partition],
                           entry_ids: list[str]) -> dict[str, float]:
        answer = await self._ask({"op": "similarities", "vector": vector, "ids": entry_ids,
                                  "partitions": [[p.scope, p.namespace] for p in partitions]})
        try:
            return {str(i): float(s) for i, s in answer["similarities"].items()}
        except (AttributeError, KeyError, TypeError, ValueError):
            raise SemanticUnavailable("the process owning the vector index gave an unreadable answer") from None

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        unreachable = SemanticUnavailable(
            f"semantic search unavailable: {self.owner}, and it is not answering; keyword results only")
        try:
            if os.stat(self._path).st_uid != os.getuid():
                raise unreachable  # someone else's socket: never trust it
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(self._path), limit=MAX_LINE), CONNECT_SECONDS)
        except (TimeoutError, OSError):
            raise unreachable from None
        try:
            writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), ANSWER_SECONDS)
            answer = json.loads(line) if line else None
        except (TimeoutError, OSError, ValueError):
            raise unreachable from None
        finally:
            writer.close()
            with suppress(Exception):
                await writer.wait_closed()
        if not isinstance(answer, dict):
            raise unreachable
        if "unavailable" in answer:
            raise SemanticUnavailable(str(answer["unavailable"]))
        return answer
