"""SQLite (aiosqlite) adapters: the source of truth for entries, FTS5 index and audit."""
