"""The server's settings: every setting with its default, its check and its help (the fields), and
what follows from them (the data directory and its files, the launch identity). Where the values
come from (a TOML file, `MEMORY_*` variables, flags) is `agent_memory.config`."""

from __future__ import annotations

import dataclasses
import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_memory.core.access.identity import parse_identity
from agent_memory.core.model.errors import Forbidden
from agent_memory.core.model.models import Caller, Skill
from agent_memory.core.recall.budget import shares_text
from agent_memory.projects import AUTO, IDENTITIES, Project, claim, host_directory, identify
from agent_memory.setting_values import (
    ConfigError,
    boolean as _bool,
    choice as _choice,
    env_name,
    float_between as _float_between,
    http_url as _http_url,
    int_between as _int_between,
    model_url as _model_url,
    postgres_url as _postgres_url,
    setting as _setting,
    text as _text,
)

ALL_SKILLS_TEXT = ",".join(skill.value for skill in Skill)


@dataclass(frozen=True)
class Settings:
    backend: str = _setting("sqlite", _choice("sqlite", "list", "postgres"),
                            "Record store: 'sqlite' (a file in the data directory), 'list' (in memory, lost at "
                            "exit) or 'postgres' (PostgreSQL with pgvector at postgres_url)")
    data_dir: str = _setting("", _text,
                             "Data directory; empty means $XDG_DATA_HOME/agent-memory or ~/.local/share/agent-memory")
    sqlite_path: str = _setting("", _text, "SQLite file; empty means <data_dir>/memory.db")
    sqlite_busy_timeout_ms: int = _setting(5000, _int_between(0, 600_000),
                                           "How long a write waits for another process's lock (ms)")
    postgres_url: str = _setting("", _postgres_url, "PostgreSQL: libpq URL of the database (backend postgres); the "
                                 "password from the URL or PGPASSWORD, never logged. Environment or file only, "
                                 "never a flag", flag=False, secret=True)
    postgres_pool_size: int = _setting(10, _int_between(1, 1000),
                                       "PostgreSQL: most connections this process holds at once")
    agent_id: str = _setting("", _text, "Launch identity (stdio): agent id; empty means the OS user name")
    system_type: str = _setting("sys1", _text, "Launch identity: VSM system type, sys1..sys5")
    team: str = _setting("default", _text, "Launch identity: team")
    skills: str = _setting(ALL_SKILLS_TEXT, _text, "Launch identity: granted tools, comma-separated")
    project: str = _setting("", _text, "The project memory works in: empty none (hooks: auto), auto the host "
                            "directory's repository, else its name")
    project_identity: str = _setting("remote", _choice(*IDENTITIES), "How auto tells projects apart: remote (else "
                                     "the root's path), path, or name")
    max_content_chars: int = _setting(32_000, _int_between(1, 1_000_000), "Largest entry content, in characters")
    redact_secrets: bool = _setting(True, _bool, "Replace API keys, tokens, passwords, private keys and credentials "
                                    "in every write (tools, session logs, reflection, imports) with [REDACTED:<kind>]")
    log_level: str = _setting("info", _choice("debug", "info", "warning", "error"), "Lowest level logged to stderr")
    log_format: str = _setting("auto", _choice("auto", "json", "console"),
                               "stderr log format; auto is JSON unless stderr is a terminal")
    transport: str = _setting("stdio", _choice("stdio", "http"),
                              "stdio, or http (MCP streamable HTTP at /mcp; `serve --http` sets it)")
    http_host: str = _setting("127.0.0.1", _text, "HTTP: address to bind (loopback unless told otherwise)",
                              aliases=("--host",))
    http_port: int = _setting(8765, _int_between(1, 65_535), "HTTP: port", aliases=("--port",))
    http_max_request_bytes: int = _setting(4 * 1024 * 1024, _int_between(1024, 1024**3),
                                           "HTTP: largest request body; larger ones get 413")
    auth_secret: str = _setting("", _text, "HTTP: token signing secret; empty means <data_dir>/auth_secret "
                                "(created on first run, mode 0600). Environment or file only, never a flag",
                                flag=False, secret=True)
    trust_client_meta: bool = _setting(False, _bool, "HTTP: accept agent-memory/identity in _meta (it may only "
                                       "repeat or narrow the token's identity)")
    console_code_seconds: int = _setting(120, _int_between(1, 3600), "agent-memory console: seconds a one-time "
                                         "sign-in code is valid")
    rate_limit_per_second: float = _setting(50.0, _float_between(0, 1_000_000),
                                            "Tool calls per second per caller (token bucket); 0 disables")
    rate_limit_burst: int = _setting(100, _int_between(1, 1_000_000), "Token bucket size per caller")
    vector_backend: str = _setting("chroma", _choice("chroma", "none"),
                                   "Semantic search index: chroma, or none (keyword retrieval only)")
    chroma_path: str = _setting("", _text, "Chroma directory; empty means <data_dir>/chroma")
    vector_exact_max: int = _setting(
        20_000, _int_between(0, 10_000_000), "Partitions (scope and namespace) of up to this many vectors are "
        "searched exactly, in memory, instead of through the HNSW index (faster below about 30,000); 0 = never. "
        "Only in a server, never with a Chroma server")
    vector_exact_total: int = _setting(
        100_000, _int_between(0, 100_000_000), "Most vectors held in memory for exact search, in all partitions "
        "(1.5 KB each)")
    chroma_host: str = _setting("", _text, "Use a Chroma server at this host instead of a local directory")
    chroma_port: int = _setting(8000, _int_between(1, 65_535), "Chroma server port")
    chroma_ssl: bool = _setting(False, _bool, "Chroma server over TLS")
    embedding_model_dir: str = _setting("", _text, "A directory with model.onnx + tokenizer.json to use instead "
                                        "of the packaged all-MiniLM-L6-v2 (int8)")
    embedding_int8_compute: bool = _setting(True, _bool, "Multiply in int8 with the packaged model (about 2x "
                                            "faster embedding; false: float32 products, as shipped)")
    retrieval_limit: int = _setting(10, _int_between(1, 50), "memory_retrieve: default number of memories")
    injection_max_chars: int = _setting(4000, _int_between(100, 1_000_000),
                                        "memory_retrieve: default size of the context block, in characters")
    injection_per_entry_max_chars: int = _setting(800, _int_between(20, 100_000),
                                                  "memory_retrieve: default cut of each memory, in characters")
    retrieval_budget_shares: str = _setting("agent=0.4,team=0.4,global=0.2", shares_text, "memory_retrieve: "
                                            "default budget_shares, the split of the context budget by tier")
    retrieval_min_score: float = _setting(0.45, _float_between(0, 1),
                                          "memory_retrieve: relevance floor on score_parts.match (0 = off)")
    retrieval_relative_floor: float = _setting(
        0.62, _float_between(0, 1), "memory_retrieve: relative floor; memories scoring under this share of the best "
        "memory's score are left out (0 = off)")
    retrieval_unknown_name_penalty: float = _setting(
        0.1, _float_between(0, 1), "memory_retrieve: how much harder the floor is for a question naming someone or "
        "something no candidate mentions (times the share of such names)")
    retrieval_load_wait_seconds: float = _setting(
        10.0, _float_between(0, 300), "memory_retrieve: how long a call that arrives while the embedding model and "
        "vector index are still loading waits for them before answering keyword-only")
    retrieval_inline_embed_max: int = _setting(
        1000, _int_between(0, 10_000), "memory_retrieve: memories not yet in the vector index that a call covers by "
        "meaning itself (the newest first; embedded in-line, or by an earlier call), so what was just written is "
        "found by meaning; the rest by keyword only")
    retrieval_inline_embed_ms: float = _setting(
        500.0, _float_between(0, 60_000), "memory_retrieve: how long a call may spend embedding memories not yet in "
        "the vector index (the next calls go on where it stopped; those not reached are searched by keyword only)")
    retrieval_candidate_depth: int = _setting(100, _int_between(10, 1000),
                                              "Candidates taken from each of keyword and semantic search")
    rank_weight_keyword: float = _setting(0.5, _float_between(0, 10), "Ranking: weight of normalised BM25")
    rank_weight_semantic: float = _setting(0.5, _float_between(0, 10), "Ranking: weight of normalised cosine")
    rank_name_boost: float = _setting(0.25, _float_between(0, 10),
                                      "Ranking: bonus for mentioning the names the query mentions")
    rank_neighbor_weight: float = _setting(0.35, _float_between(0, 10),
                                           "Ranking: share of the best neighbour's relevance added (entries "
                                           "written in sequence by the same owner)")
    rank_weight_recency: float = _setting(0.05, _float_between(0, 10), "Ranking: weight of recency")
    rank_weight_priority: float = _setting(0.03, _float_between(0, 10), "Ranking: weight of priority")
    rank_weight_confidence: float = _setting(0.03, _float_between(0, 10), "Ranking: weight of confidence")
    rank_weight_scope: float = _setting(0.02, _float_between(0, 10),
                                        "Ranking: weight of scope specificity (agent > team > global)")
    recency_half_life_days: float = _setting(30.0, _float_between(0.01, 36_500), "Ranking: recency half-life")
    session_logging: bool = _setting(True, _bool, "memory_reflect log: store session turns (false: log answers "
                                     "NOT_IMPLEMENTED)")
    session_log_max_chars: int = _setting(4000, _int_between(100, 1_000_000),
                                          "memory_reflect log: longest turn kept, in characters (longer turns are "
                                          "cut, and the answer says which)")
    compaction_threshold_chars: int = _setting(20_000, _int_between(0, 100_000_000),
                                               "A session whose uncompacted turns exceed this many characters is "
                                               "compacted after a log (0: only on request)")
    compaction_keep_recent: int = _setting(10, _int_between(0, 10_000),
                                           "Compaction: most recent turns of a session left intact")
    compaction_summary_max_chars: int = _setting(800, _int_between(100, 100_000),
                                                 "Compaction: longest summary entry (one per chunk of turns), in "
                                                 "characters")
    compaction_chunk_turns: int = _setting(2, _int_between(1, 10_000),
                                           "Compaction: most turns one summary covers")
    compaction_chunk_gap_minutes: float = _setting(60.0, _float_between(0, 525_600),
                                                   "Compaction: a pause between two turns longer than this starts "
                                                   "a new summary (0: only the turn count splits)")
    reflection_interval_seconds: float = _setting(900.0, _float_between(0, 31_536_000),
                                                  "Background reflection of sessions with new turns, every this "
                                                  "many seconds (0 disables it)")
    reflection_max_items: int = _setting(20, _int_between(1, 100),
                                         "memory_reflect reflect: most facts plus rules kept from one reflection")
    digest_max_chars: int = _setting(700, _int_between(200, 1_000_000),
                                     "Keeping a session before its turns are pruned: longest digest entry, in "
                                     "characters")
    digest_chunk_turns: int = _setting(6, _int_between(1, 10_000),
                                       "Keeping a session: most turns one digest entry covers")
    distill_url: str = _setting("", _model_url, "Local model: base URL of an OpenAI-compatible chat endpoint "
                                "(Ollama's http://127.0.0.1:11434/v1, llama.cpp's server, vLLM) that reflection asks "
                                "to distil sessions when the client offers no sampling; empty: none, nothing is sent",
                                secret=True)  # never echoed in an error: a URL may hold what it should not
    distill_model: str = _setting("", _text, "Local model: the name of the model the endpoint serves (needed with "
                                  "distill_url)")
    distill_key_file: str = _setting("", _text, "Local model: a file holding its API key, only its owner may read it "
                                     "(empty: $MEMORY_DISTILL_KEY, else no key is sent)")
    distill_key: str = _setting("", _text, "Local model: its API key, sent as a bearer token. Environment or file "
                                "only, never a flag (distill_key_file wins)", flag=False, secret=True)
    distill_timeout_seconds: float = _setting(60.0, _float_between(0.1, 3600), "Local model: seconds it may take to "
                                              "answer before reflection falls back to the extractive engine")
    distill_transcript_chars: int = _setting(12_000, _int_between(500, 1_000_000), "Local model: most characters "
                                             "of a session it is sent (the most recent part)")
    max_entries_per_namespace: int = _setting(10_000, _int_between(1, 100_000_000),
                                              "Pruning: entries a namespace may hold; past it compacted turns go "
                                              "first, then lowest priority and oldest")
    prune_interval_seconds: float = _setting(3600.0, _float_between(0, 31_536_000),
                                             "Pruning: full pass every this many seconds (0: only after writes and "
                                             "by `agent-memory prune`)")
    retention_working_days: float = _setting(1.0, _float_between(0, 36_500),
                                             "Pruning: days a `working` entry is kept after its last update "
                                             "(0: forever)")
    retention_session_days: float = _setting(30.0, _float_between(0, 36_500),
                                             "Pruning: days a `session` entry is kept after its last update "
                                             "(0: forever)")
    retention_long_term_days: float = _setting(0.0, _float_between(0, 36_500),
                                               "Pruning: days a `long_term` entry is kept (0: forever)")
    retention_meta_days: float = _setting(0.0, _float_between(0, 36_500),
                                          "Pruning: days a `meta` entry is kept (0: forever)")
    hook_budget_chars: int = _setting(1200, _int_between(100, 100_000), "Host hooks: characters added to a prompt")
    hook_start_chars: int = _setting(2000, _int_between(100, 100_000), "Host hooks: characters added at session start")
    hook_min_score: float = _setting(0.55, _float_between(0, 1), "Host hooks: the relevance floor of a prompt's "
                                     "recall", flag=False)
    hook_project: str = _setting("", _text, "Host hooks: the project's name where project is empty or auto "
                                 "(older spelling of project)")
    hook_server_url: str = _setting("", _http_url, "Host hooks: a team server's MCP URL (empty: the embedded store)")
    hook_token_file: str = _setting("", _text, "Host hooks: its bearer token's file, mode 600 (or $MEMORY_HOOK_TOKEN)")
    hook_idle_minutes: float = _setting(30.0, _float_between(0.1, 1440), "Host hooks: minutes the hook helper "
                                        "process stays up without a request")
    hooks_capture: bool = _setting(False, _bool, "Host hooks capture the sessions (setup sets it in the server "
                                   "entry it writes beside them): the instructions and prompts do not ask the model "
                                   "to log or reflect a session itself")
    metrics_log: bool = _setting(False, _bool, "Log the in-process metrics (as in memory://metrics) periodically")
    metrics_log_interval_seconds: float = _setting(60.0, _float_between(1, 86_400),
                                                   "Seconds between metrics log lines when metrics_log is on")

    @property
    def data_path(self) -> Path:
        if self.data_dir:
            return Path(self.data_dir).expanduser()
        xdg = os.environ.get("XDG_DATA_HOME")
        base = Path(xdg) if xdg else Path.home() / ".local" / "share"
        return base / "agent-memory"

    @property
    def log_dir(self) -> Path | None:
        """Where warnings and errors are kept for `agent-memory warnings` (none for the list store)."""
        return None if self.backend == "list" else self.data_path / "logs"

    @property
    def chroma_dir(self) -> Path:
        return Path(self.chroma_path).expanduser() if self.chroma_path else self.data_path / "chroma"

    @property
    def sqlite_file(self) -> str:
        if self.backend == "list":
            return ":memory:"
        return str(Path(self.sqlite_path).expanduser()) if self.sqlite_path else str(self.data_path / "memory.db")

    def project_in(self, directory: str, *, always: bool = False) -> Project | None:
        """The project `directory` belongs to, as these settings name and tell projects apart; None
        when no project is set (`always`: the hooks, which always work in one: auto then)."""
        if not self.project and not always:
            return None
        name = self.project if self.project not in ("", AUTO) else self.hook_project or AUTO
        found = identify(directory, name, self.project_identity)
        return found if self.backend == "list" else claim(self.data_path / "projects", found)

    def launch_caller(self, origins: Mapping[str, str] | None = None, directory: str | None = None) -> Caller:
        """The caller for sessions that bring no identity of their own, working in the project of
        `directory` (default: the host's project directory, else the current one) when `project` is set.

        Raises:
            ConfigError: an identity setting is invalid.
        """
        raw = {
            "agent_id": self.agent_id or _os_user(),
            "system_type": self.system_type,
            "team": self.team,
            "skills": self.skills,
        }
        try:
            caller = parse_identity(raw, default_skills=frozenset())
        except Forbidden as exc:
            name = str(exc.details.get("field", "agent_id"))
            origin = (origins or {}).get(name, env_name(name))  # where the value came from: a flag, a file, a variable
            raise ConfigError(f"invalid setting {name} ({origin}): {exc.message}") from None
        if not self.project:
            return caller
        found = self.project_in(directory if directory is not None else host_directory(os.environ, os.getcwd()))
        return caller if found is None else dataclasses.replace(caller, project=found.segment,
                                                                 project_legacy=found.legacy)


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "agent"
