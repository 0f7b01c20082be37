"""Domain models: the caller, memory entries and their vocabularies."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Scope(StrEnum):
    AGENT = "agent"
    TEAM = "team"
    GLOBAL = "global"


class SystemType(StrEnum):
    SYS1 = "sys1"
    SYS2 = "sys2"
    SYS3 = "sys3"
    SYS4 = "sys4"
    SYS5 = "sys5"


class Layer(StrEnum):
    WORKING = "working"
    SESSION = "session"
    LONG_TERM = "long_term"
    META = "meta"


class Priority(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class Source(StrEnum):
    REFLECTION = "reflection"
    MANUAL = "manual"
    TOOL = "tool"
    IMPORT = "import"


class Domain(StrEnum):
    """What a memory is about (an entry's optional `domain`)."""

    USER_PREF = "user_pref"
    SYSTEM_FACT = "system_fact"
    SESSION_SUMMARY = "session_summary"
    AGENT_EVAL = "agent_eval"
    CODE_CONTEXT = "code_context"


class Skill(StrEnum):
    CRUD = "memory_crud"
    RETRIEVE = "memory_retrieve"
    REFLECT = "memory_reflect"


class Access(StrEnum):
    READ = "read"
    WRITE = "write"


ALL_SKILLS: frozenset[Skill] = frozenset(Skill)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling: bound to the MCP session, never taken from tool arguments."""

    agent_id: str
    system_type: SystemType
    team: str
    skills: frozenset[Skill] = ALL_SKILLS
    operator: bool = False  # an operator token (the memory console): reads and edits every scope, audited
    # The project the session works in (a namespace segment; empty: none): agent-scope writes without
    # a namespace land in `home`, and retrieval without namespaces searches the project plus agent-
    # and team-wide memory (`visibility.project_areas`). `project_legacy`: the project's older
    # segment, read there and never written.
    project: str = ""
    project_legacy: str = ""

    @property
    def home(self) -> str:
        """The caller's default agent namespace: `<agent_id>/<project>` in a project, else its id."""
        return f"{self.agent_id}/{self.project}" if self.project else self.agent_id


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory record, as stored. Timestamps are UTC ISO-8601 strings ending in `Z`."""

    id: str
    scope: Scope
    namespace: str
    team: str | None
    owner_agent_id: str
    content: str
    tags: tuple[str, ...]
    priority: Priority
    source: Source
    confidence: float
    layer: Layer
    created_at: str
    updated_at: str
    expires_at: str | None
    version: int
    etag: str
    conflict: bool = False
    conflict_of: str | None = None
    session_id: str | None = None
    promoted_from: str | None = None
    compacted: bool = False  # a session turn folded into a summary: kept, listable, not retrieved
    superseded_by: str | None = None  # a fact a later one changed: kept, listable, not retrieved by default
    key: str | None = None  # a stable name, unique within (scope, namespace, team) among non-conflict entries
    read_agents: tuple[str, ...] = ()  # a read list: only these agents (and the owner) may read it; () for none
    domain: Domain | None = None  # what it is about (user_pref, system_fact, ...); None: unclassified


@dataclass(frozen=True, slots=True)
class ListFilters:
    """Filters of a `list` request; every field narrows the result."""

    layer: Layer | None = None
    tags: tuple[str, ...] = ()
    source: Source | None = None
    priority: Priority | None = None
    owner_agent_id: str | None = None
    conflict: bool | None = None
    session_id: str | None = None
    created_after: str | None = None
    created_before: str | None = None
    include_expired: bool = False
    key: str | None = None
    domain: Domain | None = None


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One audit row. Never carries memory content."""

    at: str
    request_id: str
    agent_id: str
    team: str
    system_type: str
    tool: str
    action: str
    scope: str | None
    namespace: str | None
    entry_id: str | None
    outcome: str
    details: dict[str, object] = field(default_factory=dict)
