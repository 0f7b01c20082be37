"""agent-memory as an AutoGen memory (`autogen_core.memory.Memory`), over MCP as one identity.

    pip install '.[autogen]'   # from a clone of agent-memory

`add` creates an entry (`memory_crud create`), `query` runs `memory_retrieve` and returns the
memories with their scores, `update_context` adds the retrieved `context` block to the model
context as one system message (as AutoGen's `ListMemory` and `ChromaDBVectorMemory` do), `clear`
deletes what this identity owns in its scope and namespace, `close` ends the MCP session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

try:
    from autogen_core import CancellationToken, Image
    from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
    from autogen_core.model_context import ChatCompletionContext
    from autogen_core.models import SystemMessage
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "agent_memory.integrations.autogen needs autogen-core: from a clone of agent-memory: pip install '.[autogen]'"
    ) from exc

from agent_memory.integrations.mcp_link import MemoryLink, MemoryToolError

# MemoryContent.metadata keys that become entry fields; any other scalar metadata becomes a
# "key=value" tag.
ENTRY_FIELDS = ("priority", "layer", "confidence", "source", "expires_at", "ttl_seconds", "key")
MIME_TAG = "mime:"
MAX_TAG_CHARS = 128
CONTEXT_HEADER = "\nRelevant memory content:\n"


def _mime(value: MemoryMimeType | str) -> str:
    return value.value if isinstance(value, MemoryMimeType) else str(value)


def content_text(content: MemoryContent) -> tuple[str, str]:
    """The text stored for an AutoGen memory item, and its MIME type.

    Text and Markdown are stored as they are; JSON (a dict, or a JSON string) as compact JSON;
    bytes with a text MIME type are decoded as UTF-8. Images and other binary content cannot be
    stored (agent-memory keeps text).

    Raises:
        ValueError: content that is not text.
    """
    mime = _mime(content.mime_type)
    value = content.content
    if isinstance(value, Image) or mime in (MemoryMimeType.IMAGE.value, MemoryMimeType.BINARY.value) \
            or mime.startswith("image/"):
        raise ValueError(f"agent-memory stores text; {mime} content cannot be added (describe it in text)")
    if mime == MemoryMimeType.JSON.value or isinstance(value, dict):
        if isinstance(value, (str, bytes)):
            value = json.loads(value)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True), MemoryMimeType.JSON.value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8"), mime
        except UnicodeDecodeError as exc:
            raise ValueError(f"bytes with MIME type {mime} are not UTF-8 text") from exc
    return str(value), mime


def _content_value(text: str, mime: str, truncated: bool) -> str | dict[str, Any]:
    """JSON memories come back as the dict that was added (unless retrieval shortened them)."""
    if mime == MemoryMimeType.JSON.value and not truncated:
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, dict) else text
    return text


def _metadata_tags(metadata: Mapping[str, Any]) -> list[str]:
    raw = metadata.get("tags") or []
    tags = [raw] if isinstance(raw, str) else [str(t) for t in raw]
    for key, value in metadata.items():
        if key in ENTRY_FIELDS or key in ("tags", "scope", "namespace", "mime_type"):
            continue
        if isinstance(value, (str, int, float, bool)):
            tag = f"{key}={value}"
            if len(tag) <= MAX_TAG_CHARS:
                tags.append(tag)
    return tags


class AgentMemory(Memory):
    """AutoGen memory backed by an agent-memory server, speaking as one identity.

    Args:
        link: the MCP session (`MemoryLink.stdio(identity)` or `MemoryLink.http(url, token)`).
        scope: where `add` writes and `clear` deletes: `agent` (default), `team` or `global`.
        namespace: the namespace for `add`/`clear` (agent scope: the agent id by default; team and
            global need one, e.g. the team name).
        layer: default layer of added entries (required by the server for team and global).
        search_scopes: scopes `query` searches (default: every scope the identity may read).
        search_namespaces: namespaces `query` is confined to (default: all readable).
        k: how many memories `query` returns (1-50).
        min_score: relevance floor passed to `memory_retrieve` (None: the server's default).
        max_chars: budget of the injected context block (None: the server's default).
        name: this memory's name.
    """

    component_type = "memory"

    def __init__(self, link: MemoryLink, *, scope: str = "agent", namespace: str | None = None,
                 layer: str | None = None, search_scopes: Sequence[str] | None = None,
                 search_namespaces: Sequence[str] | None = None, k: int = 10, min_score: float | None = None,
                 max_chars: int | None = None, name: str | None = None) -> None:
        if scope != "agent" and (namespace is None or layer is None):
            raise ValueError(f"{scope} scope needs a namespace and a layer")
        self._link = link
        self._scope = scope
        self._namespace = namespace
        self._layer = layer
        self._search_scopes = list(search_scopes) if search_scopes is not None else None
        self._search_namespaces = list(search_namespaces) if search_namespaces is not None else None
        self._k = k
        self._min_score = min_score
        self._max_chars = max_chars
        self._name = name or "agent_memory"

    @property
    def name(self) -> str:
        return self._name

    @property
    def link(self) -> MemoryLink:
        return self._link

    def _where(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        where: dict[str, Any] = {"scope": str(metadata.get("scope", self._scope))}
        namespace = metadata.get("namespace", self._namespace if where["scope"] == self._scope else None)
        if namespace is not None:
            where["namespace"] = str(namespace)
        return where

    async def add(self, content: MemoryContent, cancellation_token: CancellationToken | None = None) -> None:
        """Store one item (`memory_crud create`).

        Metadata keys `tags`, `priority`, `layer`, `confidence`, `source`, `expires_at`,
        `ttl_seconds` and `key` become entry fields (an add with a `key` already held in that
        scope and namespace updates that entry, atomically: racing adds of a key leave one);
        `scope`/`namespace` choose where it goes; other scalar keys become `key=value` tags. A MIME
        type other than plain text is kept as a `mime:` tag.

        Raises:
            ValueError: non-text content.
            MemoryToolError: the server refused it (`code` is the SPEC code; FORBIDDEN raises
                `MemoryPermissionError`).
        """
        text, mime = content_text(content)
        metadata = dict(content.metadata or {})
        item: dict[str, Any] = {"content": text}
        for key in ENTRY_FIELDS:
            if metadata.get(key) is not None:
                item[key] = metadata[key]
        tags = _metadata_tags(metadata)
        if mime != MemoryMimeType.TEXT.value:
            tags.append(MIME_TAG + mime)
        if tags:
            item["tags"] = list(dict.fromkeys(tags))
        if "layer" not in item and self._layer is not None:
            item["layer"] = self._layer
        data = await self._link.call("memory_crud", {"action": "create", **self._where(metadata), "items": [item]})
        MemoryLink.raise_item_errors(data)

    async def query(self, query: str | MemoryContent = "", cancellation_token: CancellationToken | None = None,
                    **kwargs: Any) -> MemoryQueryResult:
        """The memories most relevant to `query` (`memory_retrieve`), best first.

        Each result's metadata holds `score` (and `score_parts`), `id`, `scope`, `namespace`,
        `layer`, `tags`, `priority`, `source`, `confidence`, `created_at`, `owner_agent_id`,
        `truncated`. Extra keyword arguments are passed to `memory_retrieve` (`tags`, `layers`,
        `mode`, `limit`, `min_score`, ...).
        """
        result, _ = await self._retrieve(query, **kwargs)
        return result

    async def _retrieve(self, query: str | MemoryContent, **kwargs: Any) -> tuple[MemoryQueryResult, str]:
        text = query if isinstance(query, str) else content_text(query)[0]
        if not text.strip():
            return MemoryQueryResult(results=[]), ""
        arguments: dict[str, Any] = {"query": text[:4000], "limit": self._k}
        if self._search_scopes is not None:
            arguments["scopes"] = self._search_scopes
        if self._search_namespaces is not None:
            arguments["namespaces"] = self._search_namespaces
        if self._min_score is not None:
            arguments["min_score"] = self._min_score
        if self._max_chars is not None:
            arguments["max_chars"] = self._max_chars
        arguments.update(kwargs)
        data = await self._link.call("memory_retrieve", arguments)
        results = []
        for item in data["items"]:
            mime = next((t[len(MIME_TAG):] for t in item["tags"] if t.startswith(MIME_TAG)), MemoryMimeType.TEXT.value)
            metadata = {key: item[key] for key in ("id", "score", "score_parts", "scope", "namespace", "layer", "tags",
                                                    "priority", "source", "confidence", "created_at",
                                                    "owner_agent_id", "truncated")}
            metadata["mime_type"] = mime
            results.append(MemoryContent(content=_content_value(item["content"], mime, item["truncated"]),
                                         mime_type=mime, metadata=metadata))
        return MemoryQueryResult(results=results), data.get("context", "")

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Retrieve by the last message of `model_context` and add the server's `context` block (the
        memories within the injection budget, one line each) as a system message.
        """
        messages = await model_context.get_messages()
        if not messages:
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        last = messages[-1]
        query = last.content if isinstance(last.content, str) else str(last)
        result, context = await self._retrieve(query)
        if result.results and context:
            await model_context.add_message(SystemMessage(content=CONTEXT_HEADER + context))
        return UpdateContextResult(memories=result)

    async def clear(self) -> None:
        """Delete every entry this identity owns in this memory's scope and namespace (and only
        those: other agents' team entries stay).

        Raises:
            MemoryToolError: the server refused the listing or a deletion.
        """
        ids: list[str] = []
        arguments: dict[str, Any] = {"action": "list", **self._where({}), "limit": 100,
                                     "filters": {"owner_agent_id": self._link.agent_id, "include_expired": True}}
        while True:
            page = await self._link.call("memory_crud", arguments)
            ids.extend(entry["id"] for entry in page["items"])
            if not page.get("next_cursor"):
                break
            arguments["cursor"] = page["next_cursor"]
        for chunk in MemoryLink.chunks(ids):
            data = await self._link.call("memory_crud", {"action": "delete", **self._where({}),
                                                         "items": [{"id": i} for i in chunk]})
            errors = [e for e in data.get("errors") or [] if e.get("code") != "NOT_FOUND"]
            if errors:
                MemoryLink.raise_item_errors({"errors": errors})

    async def close(self) -> None:
        """End the MCP session (and the server process the link launched)."""
        await self._link.close()


__all__ = ["AgentMemory", "MemoryToolError", "content_text"]
