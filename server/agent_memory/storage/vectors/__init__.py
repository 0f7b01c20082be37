"""The vector side: the embedder and the Chroma index (a derived index, rebuildable from SQLite)."""
