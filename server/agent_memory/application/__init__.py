"""The application layer: one door into the services for every caller.

Adapters (the MCP tools, the memory console's JSON API, the hook helper, the command line's
operator work) turn what they receive into the typed requests here and what comes back into their
own form; the use cases here check the request as a whole, drive the core's services and raise the
core's errors. Nothing here knows a protocol, a wire format or a database driver:

- `memories`: write, read, list, update, delete, promote memories (`memory_crud`), and what the
  console adds (browse, conflicts, reconcile);
- `recall`: retrieve (`memory_retrieve`);
- `sessions`: log, compact, reflect (`memory_reflect`);
- `lineage`: what a fact replaced, and undoing a supersede.
"""
