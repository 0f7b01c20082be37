"""The application layer: one door into the services for every caller.

Adapters (the MCP tools, the memory console's JSON API, the hook helper, the command line's
operator work) turn what they receive into the typed requests here and what comes back into their
own form; the use cases here check the request as a whole, drive the core's services and raise the
core's errors. Nothing here knows a protocol, a wire format or a database driver:

- `memories`: write, read, list, update, delete, promote memories (`memory_crud`), and what the
  console adds (browse, conflicts, reconcile);
- `recall`: retrieve (`memory_retrieve`);
- `sessions`: log, compact, reflect (`memory_reflect`);
- `lineage`: what a fact replaced, and undoing a supersede;
- operator work: `transfer` (export, and restoring an export), `import_writer` (storing what
  another store's export or notes became), `inspection` (stats, warnings), `maintenance`
  (reindex, prune, erase), for the command line and the console;
- `tokens`: bearer tokens issued, checked, listed and revoked (`agent-memory token ...`, the HTTP
  transport, the console's sign-in), signed with the transport's secret, so not part of the door:
  `App.tokens(secret)` and `Records.tokens(secret)` make one.

The composition root (`bootstrap.open_app`) builds one `Application` and hands it to every adapter
as `App.door`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.application.lineage import Lineage
from agent_memory.application.memories import Memories
from agent_memory.application.recall import Recall
from agent_memory.application.sessions import Sessions


@dataclass(frozen=True)
class Application:
    """Every use case family, as one server process offers them."""

    memories: Memories
    recall: Recall
    sessions: Sessions
    lineage: Lineage
