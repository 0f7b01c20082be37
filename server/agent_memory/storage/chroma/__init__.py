"""The SQLite store's vector side: the Chroma index (derived, rebuildable from SQLite), kept in step
through the SQLite outbox and searched for semantic candidates. The embedding model and what both
stores' vector runtimes share live in `storage/embedding`."""
