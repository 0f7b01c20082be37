"""`--from memorynode`: records of the "Memory Architecture 2.0" store (seeds/003), the `MemoryNode`
v2 schema and its legacy shape (what `migrateLegacyMemoryNode` normalises).

A node is `{"id", "content", "embedding", "createdAt", "updatedAt", "version", "metadata": {"domain",
"scope": {"session"?, "project"?, "role"?, "org"?}, "scopeLevel", "provenance": {"source",
"timestamp", "confidence"}, "retention": {"ttlSec"?, "expiresAt"?}, "access": {"read": {"agentIds"?,
"userIds"?}}}}`; legacy records carry `sourceId`, `confidenceScore` and `ttlSec` instead (in
`metadata` or at the top level: both are read, as are the v2 metadata fields at the top level).
The file holds one node, a JSON array of nodes (or `{"nodes": [...]}`), or JSON lines.

Where a node lands (its primary level: `scopeLevel`, else the most specific level present):
`org`/`role`/`project` → team scope, namespace `<team>/org/<o>/role/<r>/project/<p>` (the levels
present, most general first); `session` → agent scope, namespace `<agent>` plus the parents' path,
layer `session`, `session_id` the session; no scope → the command's target. Every scope value is
also a tag (`project:<p>`); `domain` sets the entry's domain (one it does not know stays a tag
`domain:<d>`, reported); the provenance source is a tag `source:<s>`. Provenance timestamp (else
`createdAt`) → `created_at`, `updatedAt` → `updated_at`,
confidence kept, `retention.expiresAt` → `expires_at`, else `ttlSec` counted from `created_at`.
Dates are ISO-8601 or epoch numbers (milliseconds, as JavaScript writes them; seconds below 1e11).
Read lists: `access.read.agentIds` become the entry's read list (`read_agents`, enforced: only
those agents and the importing owner read it, within its scope); ids that are not agent ids are
left out and reported. This server has no user identities, so `userIds` stay tags
`read-user:<id>`, reported; a node naming only users (or no valid agent) is kept to its owner, so
an ACL never widens on import. `embedding` (recomputed) and `version` (a new
entry starts at 1) are dropped. Other fields are reported per record as not mapped.
Identity: the node id (else its content and scope).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime

from agent_memory.core.access.identity import ID_PATTERN
from agent_memory.core.model.domains import DOMAIN_NAMES
from agent_memory.importers.drafts import Bad, Draft, json_lines, stamp_text, tag_list
from agent_memory.importers.mem0 import segment

LEVELS = ("session", "project", "role", "org")  # most specific first (seeds/003)
_TOP = {"id", "content", "embedding", "createdAt", "updatedAt", "version", "metadata"}
_META = {"domain", "scope", "scopeLevel", "provenance", "retention", "access", "sourceId", "confidenceScore",
         "ttlSec"}
_PROVENANCE, _RETENTION, _READ = {"source", "timestamp", "confidence"}, {"ttlSec", "expiresAt"}, {"agentIds",
                                                                                                  "userIds"}
_LISTS = ("nodes", "records", "items", "memories")
_NOT_SESSION = re.compile(r"[^A-Za-z0-9._:-]")


class _Node:
    """One record's fields, looked up in `metadata` first, then at the top level (legacy flat records)."""

    def __init__(self, record: dict) -> None:
        meta = record.get("metadata", {})
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise ValueError("metadata must be an object")
        self.record, self.meta = record, meta
        self.unmapped = [f"metadata.{key}" for key in meta if key not in _META]
        self.unmapped += [key for key in record if key not in _TOP | _META]

    def get(self, name: str) -> object:
        value = self.meta.get(name)
        return self.record.get(name) if value is None else value

    def part(self, name: str, known: set[str]) -> dict:
        value = self.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError(f"{name} must be an object")
        self.unmapped += [f"{name}.{key}" for key in value if key not in known]
        return value


def _text(value: object, field: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"{field} must be a string, got {type(value).__name__}")
    text = str(value).strip()
    return text or None


def _number(value: object, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{field} must be a number, got {json.dumps(value)[:40]}")
    return float(value)


def _stamp(value: object, field: str) -> str | None:
    """ISO text as it is (checked at placement), or an epoch number (ms, or s below 1e11) as ISO."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value) / 1000 if abs(value) >= 1e11 else float(value)
        try:
            return datetime.fromtimestamp(seconds, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"{field} is not a date: {value}") from None
    try:
        return stamp_text(value)
    except ValueError:
        raise ValueError(f"{field} must be an ISO-8601 date-time or epoch milliseconds, "
                         f"got {type(value).__name__}") from None


def _scope(node: _Node) -> tuple[str | None, dict[str, str]]:
    """The primary level and the scope's values by level. Raises: ValueError."""
    scope = node.get("scope")
    if scope is None:
        scope = {}
    if not isinstance(scope, dict):
        raise ValueError(f"scope must be an object of {', '.join(LEVELS)}")
    unknown = [key for key in scope if key not in LEVELS]
    if unknown:
        raise ValueError(f"scope has an unknown level {unknown[0]!r} (known: {', '.join(LEVELS)})")
    values = {level: text for level in LEVELS if (text := _text(scope.get(level), f"scope.{level}"))}
    level = _text(node.get("scopeLevel"), "scopeLevel")
    if level is not None and level not in LEVELS:
        raise ValueError(f"scopeLevel must be one of {', '.join(LEVELS)}, got {level!r}")
    if level is not None and level not in values:
        raise ValueError(f"scopeLevel is {level!r} but scope has no {level}")
    return level or next((name for name in LEVELS if name in values), None), values


def _place(level: str | None, values: dict[str, str]) -> dict[str, str | None]:
    """Draft fields placing a node at its level (empty: the command's target)."""
    if level is None:
        return {}
    parents = LEVELS[LEVELS.index(level) + (1 if level == "session" else 0):]
    path = "/".join(f"{name}/{segment(values[name])}" for name in reversed(parents) if name in values) or None
    if level != "session":
        return {"scope": "team", "subspace": path}
    session = _NOT_SESSION.sub("_", values["session"])[:128]
    return {"scope": "agent", "subspace": path, "layer": "session", "session_id": session}


def _read_list(node: _Node) -> tuple[tuple[str, ...] | None, list[str], list[str]]:
    """The read list `access.read` gives (None: no ACL; (): the owner only), the `read-user:` tags
    and what to report."""
    read = node.part("access", {"read"}).get("read")
    if read is None:
        return None, [], []
    if not isinstance(read, dict):
        raise ValueError("access.read must be an object")
    node.unmapped += [f"access.read.{key}" for key in read if key not in _READ]
    named: dict[str, list[str]] = {}
    for key in ("agentIds", "userIds"):
        ids = read.get(key) or []
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise ValueError(f"access.read.{key} must be a list of strings")
        named[key] = [item.strip() for item in ids if item.strip()]
    if not named["agentIds"] and not named["userIds"]:
        return None, [], []
    agents = tuple(dict.fromkeys(i for i in named["agentIds"] if ID_PATTERN.match(i)))
    notes = [f"access.read.agentIds {i!r} is not an agent id (left out of the read list)"
             for i in named["agentIds"] if not ID_PATTERN.match(i)]
    if named["userIds"]:
        notes.append("access.read.userIds kept as tags read-user: (no user identities here, not enforced)")
    if not agents:
        notes.append("no agent may read it but its owner (the read list named no valid agent id)")
    return agents, [f"read-user:{i}" for i in named["userIds"]], notes


def node(record: object, where: str) -> Draft:
    """One MemoryNode as a Draft. Raises: ValueError saying what is wrong."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    content = record.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("content must be a non-empty string")
    item = _Node(record)
    level, values = _scope(item)
    provenance, retention = item.part("provenance", _PROVENANCE), item.part("retention", _RETENTION)
    source = _text(provenance.get("source") or item.get("sourceId"), "provenance.source")
    confidence = provenance.get("confidence")
    confidence = _number(item.get("confidenceScore") if confidence is None else confidence, "provenance.confidence")
    ttl = retention.get("ttlSec")
    ttl = _number(item.get("ttlSec") if ttl is None else ttl, "retention.ttlSec")
    if ttl is not None and ttl <= 0:
        raise ValueError(f"retention.ttlSec must be more than 0, got {ttl:g}")
    domain = _text(item.get("domain"), "domain")
    read_agents, read_tags, notes = _read_list(item)
    if domain and domain not in DOMAIN_NAMES:
        notes.append(f"domain {domain!r} is not one of {', '.join(DOMAIN_NAMES)} (kept as tag domain:{domain})")
    created = _stamp(provenance.get("timestamp"), "provenance.timestamp") or _stamp(record.get("createdAt"),
                                                                                       "createdAt")
    node_id = _text(record.get("id"), "id")
    key = f"id:{node_id}" if node_id else "content:" + json.dumps([values, content])
    return Draft(
        where=where, key=key, content=content.strip(),
        tags=tag_list([f"{name}:{values[name]}" for name in reversed(LEVELS) if name in values],
                      [f"domain:{domain}"] if domain and domain not in DOMAIN_NAMES else [],
                      [f"source:{source}"] if source else [], read_tags),
        domain=domain if domain in DOMAIN_NAMES else None, read_agents=read_agents,
        created_at=created, updated_at=_stamp(record.get("updatedAt"), "updatedAt"),
        expires_at=_stamp(retention.get("expiresAt"), "retention.expiresAt"),
        ttl_seconds=ttl, confidence=confidence, notes=tuple(notes + [f"{', '.join(item.unmapped)} not mapped"]
                                                             if item.unmapped else notes),
        **_place(level, values),
    )


def _records(text: str) -> Iterator[tuple[str, object]]:
    try:
        document = json.loads(text)
    except RecursionError:
        yield "file", Bad("file", "not JSON (nested too deeply)")
        return
    except ValueError:  # not one JSON document: JSON lines
        for number, value in json_lines(text.splitlines()):
            yield f"line {number}", value
        return
    if isinstance(document, dict):
        listed = next((document[name] for name in _LISTS if isinstance(document.get(name), list)), None)
        document = [document] if listed is None else listed
    if not isinstance(document, list):
        yield "file", Bad("file", "a MemoryNode file is one node, a list of nodes, or JSON lines")
        return
    for number, value in enumerate(document, start=1):
        yield f"record {number}", value


def read_memorynode(text: str) -> Iterator[Draft | Bad]:
    for where, value in _records(text):
        if isinstance(value, Bad):
            yield value
            continue
        try:
            yield node(value, where)
        except ValueError as exc:
            yield Bad(where, str(exc))
