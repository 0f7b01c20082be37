"""agent-memory as a LangGraph store (`langgraph.store.base.BaseStore`), over MCP as one identity.

    pip install '.[langgraph]'   # from a clone of agent-memory

Namespace tuples map onto scope and namespace: `("team", "<team>", ...)` is team scope, namespace
`<team>/...`; `("global", "<name>", ...)` is global scope; any other tuple is the caller's own
agent scope, namespace `<agent_id>/<label>/...`. Labels are kept as they are when they are
`[A-Za-z0-9_-]`; any other character is written `.HH` (its UTF-8 bytes in hex; LangGraph labels never
contain a period, so this reads back exactly). An item is one entry: its value as JSON content, its
key as the entry's `key` (and a tag), its namespace as tags (`PutOp.index` is not used: the server
embeds every entry whole). A put is one keyed `create`, which the server turns into an update of the
entry already holding the key in one statement: parallel writers of a key leave one item.
`search` with a `query` ranks through `memory_retrieve` (which returns near-identical values once:
it dedupes at 90% shared words); without one it lists, newest first. `filter` is applied to the
value's fields (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, nested objects). Errors from the server
raise `MemoryToolError` (`code` is the SPEC code; FORBIDDEN raises `MemoryPermissionError`, also a
`PermissionError`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "agent_memory.integrations.langgraph needs langgraph: from a clone of agent-memory: pip install '.[langgraph]'"
    ) from exc

import anyio.to_thread

from agent_memory.integrations.mcp_link import MemoryLink, MemoryToolError, tool_error
from agent_memory.integrations.store_terms import decode_label, encode_label, matches, namespace_matches

MARKER_TAG = "langgraph"
KEY_TAG = "lg-key:"
NS_TAG = "lg-ns:"
MAX_TAG_CHARS = 128
PAGE = 100
MAX_RETRIEVE = 50
SCOPE_HEADS = ("team", "global")


def _label(label: str) -> str:
    try:
        return encode_label(label)
    except ValueError as exc:
        raise InvalidNamespaceError(str(exc)) from exc


class AgentMemoryStore(BaseStore):
    """A LangGraph `BaseStore` on agent-memory, speaking as the link's identity.

    Args:
        link: the MCP session (`MemoryLink.stdio(identity)` or `MemoryLink.http(url, token)`).
        layer: the layer of stored items (`long_term` by default; team and global need one).
        min_score: relevance floor of semantic search (0: every readable match is ranked, as
            LangGraph stores do; None: the server's default).
    """

    supports_ttl = False

    def __init__(self, link: MemoryLink, *, layer: str = "long_term", min_score: float | None = 0.0) -> None:
        self._link = link
        self._layer = layer
        self._min_score = min_score

    @property
    def link(self) -> MemoryLink:
        return self._link

    # -- namespaces --

    def area(self, namespace: tuple[str, ...]) -> tuple[str, str]:
        """The (scope, server namespace) of a LangGraph namespace tuple (not empty)."""
        if not namespace:
            raise InvalidNamespaceError("Namespace cannot be empty.")
        if namespace[0] in SCOPE_HEADS:
            if len(namespace) < 2:
                raise InvalidNamespaceError(f"a {namespace[0]} namespace names it: ({namespace[0]!r}, '<name>', ...)")
            return namespace[0], "/".join(_label(label) for label in namespace[1:])
        return "agent", "/".join((self._link.agent_id, *(_label(label) for label in namespace)))

    def namespace_of(self, scope: str, server_namespace: str) -> tuple[str, ...]:
        """The LangGraph namespace tuple of an entry (inverse of `area`)."""
        segments = tuple(decode_label(s) for s in server_namespace.split("/"))
        return segments[1:] if scope == "agent" else (scope, *segments)

    @staticmethod
    def _tags(scope: str, server_namespace: str, key: str) -> list[str]:
        key_tag = KEY_TAG + key
        if len(key_tag) > MAX_TAG_CHARS:
            raise ValueError(f"keys are at most {MAX_TAG_CHARS - len(KEY_TAG)} characters for agent-memory")
        segments = server_namespace.split("/")
        first = 1 if scope == "agent" else 0  # the agent id alone is not a LangGraph prefix
        prefixes = [NS_TAG + "/".join(segments[:n]) for n in range(first + 1, len(segments) + 1)]
        if any(len(t) > MAX_TAG_CHARS for t in prefixes) or len(prefixes) > 29:
            raise InvalidNamespaceError("namespace too long for agent-memory (at most 29 labels, "
                                        f"{MAX_TAG_CHARS - len(NS_TAG)} characters once encoded)")
        return [MARKER_TAG, key_tag, *prefixes]

    # -- reading --

    def _item(self, entry: Mapping[str, Any], score: float | None = None, *, searched: bool = False) -> Item | None:
        """The LangGraph item an entry holds (None for an entry this store did not write, and for an
        unkeyed copy: a conflict entry, or an older duplicate from before keys were stored; a retrieved
        memory carries no key field, its key tag names it)."""
        if "key" in entry:
            key = entry["key"]
        else:
            key = next((t[len(KEY_TAG):] for t in entry["tags"] if t.startswith(KEY_TAG)), None)
        if key is None or MARKER_TAG not in entry["tags"]:
            return None
        try:
            value = json.loads(entry["content"])
        except ValueError:
            value = None
        fields = {"value": value if isinstance(value, dict) else {"content": entry["content"]}, "key": key,
                  "namespace": self.namespace_of(entry["scope"], entry["namespace"]),
                  "created_at": datetime.fromisoformat(entry["created_at"]),
                  "updated_at": datetime.fromisoformat(entry["updated_at"])}
        return SearchItem(score=score, **fields) if searched else Item(**fields)

    def _entries(self, scope: str, namespace: str, key: str, *, legacy: bool = False) -> list[dict[str, Any]]:
        """The entry holding `key` (with `legacy`, also older copies of it that hold it as a tag only)."""
        if len(KEY_TAG + key) > MAX_TAG_CHARS:
            return []  # no key that long can have been stored
        filters: dict[str, Any] = {"tags": [MARKER_TAG, KEY_TAG + key]}
        if not legacy:
            filters["key"] = key
        data = self._link.call_sync("memory_crud", {"action": "list", "scope": scope, "namespace": namespace,
                                                    "limit": PAGE, "filters": filters})
        return list(data["items"])

    def _get(self, op: GetOp) -> Item | None:
        scope, namespace = self.area(op.namespace)
        entries = self._entries(scope, namespace, op.key)
        return self._item(entries[0]) if entries else None

    def _list(self, scope: str, namespace: str, tags: list[str]) -> Iterable[dict[str, Any]]:
        arguments: dict[str, Any] = {"action": "list", "scope": scope, "namespace": namespace, "subtree": True,
                                     "limit": PAGE, "filters": {"tags": tags}}
        while True:
            page = self._link.call_sync("memory_crud", arguments)
            yield from page["items"]
            if not page.get("next_cursor"):
                return
            arguments["cursor"] = page["next_cursor"]

    def _search_area(self, prefix: tuple[str, ...]) -> tuple[str | None, str | None, list[str]]:
        """(scope, server namespace to list under, tags) of a search prefix."""
        if not prefix:
            return None, None, [MARKER_TAG]
        if prefix[0] in SCOPE_HEADS and len(prefix) == 1:
            return prefix[0], None, [MARKER_TAG]
        scope, namespace = self.area(prefix)
        return scope, namespace, [MARKER_TAG, NS_TAG + namespace]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scope, namespace, tags = self._search_area(tuple(op.namespace_prefix))
        wanted = op.offset + op.limit
        if op.query:
            arguments: dict[str, Any] = {"query": op.query[:4000], "tags": tags,
                                         "limit": MAX_RETRIEVE if op.filter else min(MAX_RETRIEVE, max(wanted, 1)),
                                         "max_chars": 1_000_000, "per_entry_max_chars": 100_000}
            if scope is not None:
                arguments["scopes"] = [scope]
            if self._min_score is not None:
                arguments["min_score"] = self._min_score
            found = self._link.call_sync("memory_retrieve", arguments)["items"]
            full = self._full_entries([e for e in found if e["truncated"]])
            hits = [(full.get(e["id"], e), e["score"]) for e in found]
        else:
            if scope == "global" and namespace is None:
                raise ValueError("listing global memory needs a name: search(('global', '<name>', ...))")
            if namespace is None:  # () lists the agent's own items, ("team",) the caller's team
                scope, namespace = (("team", self._link.team) if scope == "team" else ("agent", self._link.agent_id))
            hits = ((entry, None) for entry in self._list(scope, namespace, tags))
        results: list[SearchItem] = []
        for entry, score in hits:
            item = self._item(entry, score, searched=True)
            if item is not None and matches(item.value, op.filter):
                results.append(item)  # type: ignore[arg-type]
                if len(results) >= wanted:
                    break
        return results[op.offset:wanted]

    def _full_entries(self, entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Entries whose retrieved content was shortened, read in full."""
        full: dict[str, dict[str, Any]] = {}
        for entry in entries:
            data = self._link.call_sync("memory_crud", {"action": "read", "scope": entry["scope"],
                                                        "namespace": entry["namespace"],
                                                        "items": [{"id": entry["id"]}]})
            MemoryLink.raise_item_errors(data)
            full[entry["id"]] = data["items"][0]
        return full

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        head = prefix[:2] if prefix and prefix[0] in SCOPE_HEADS else ()
        if prefix and prefix[0] in SCOPE_HEADS and (len(head) < 2 or "*" in head):
            raise ValueError(f"listing {prefix[0]} namespaces needs a name: ({prefix[0]!r}, '<name>', ...)")
        scope, namespace = self.area(head) if head else ("agent", self._link.agent_id)
        found: set[tuple[str, ...]] = set()
        for entry in self._list(scope, namespace, [MARKER_TAG]):
            if entry.get("key") is None:
                continue
            ns = self.namespace_of(entry["scope"], entry["namespace"])
            if all(namespace_matches(ns, c.match_type, c.path) for c in conditions):
                found.add(ns[:op.max_depth] if op.max_depth is not None else ns)
        return sorted(found)[op.offset:op.offset + op.limit]

    # -- writing --

    def _apply_puts(self, puts: list[PutOp]) -> None:
        """A put is one keyed create (the server updates the entry holding the key, atomically: racing
        writers of a key leave one item, the last write winning); a delete removes the entries
        holding the key (one already gone is fine)."""
        writes: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for op in puts:
            if op.ttl is not None:
                raise NotImplementedError("TTL is not supported by AgentMemoryStore; set ttl=None")
            scope, namespace = self.area(op.namespace)
            if op.value is None:
                gone = [{"id": e["id"]} for e in self._entries(scope, namespace, op.key, legacy=True)]
                writes.setdefault(("delete", scope, namespace), []).extend(gone)
                continue
            content = json.dumps(dict(op.value), ensure_ascii=False, separators=(",", ":"))
            writes.setdefault(("create", scope, namespace), []).append(
                {"content": content, "tags": self._tags(scope, namespace, op.key), "key": op.key})
        for (action, scope, namespace), items in writes.items():
            for chunk in MemoryLink.chunks(items):
                arguments: dict[str, Any] = {"action": action, "scope": scope, "namespace": namespace,
                                             "items": list(chunk)}
                if action == "create":
                    arguments["layer"] = self._layer
                data = self._link.call_sync("memory_crud", arguments)
                errors = [e for e in data.get("errors") or []
                          if not (action == "delete" and e.get("code") == "NOT_FOUND")]
                if errors:
                    raise tool_error(errors[0])

    # -- BaseStore --

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops` (from a thread with no running loop, or any thread): reads see the store as it
        was before the batch, then the writes apply, the last write of a key winning (as LangGraph's
        own stores do). Writes go out in bulk requests of at most 10 items."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts.pop((tuple(op.namespace), op.key), None)
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise TypeError(f"unknown store operation {type(op).__name__}")
        self._apply_puts(list(puts.values()))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` for async callers: runs in a worker thread, the MCP calls on the link's loop."""
        return await anyio.to_thread.run_sync(self.batch, list(ops))

    def close(self) -> None:
        self._link.close_sync()

    async def aclose(self) -> None:
        await self._link.close()


__all__ = ["AgentMemoryStore", "MemoryToolError", "decode_label", "encode_label"]
