"""What both stores' vector runtimes share: the packaged embedding model (`embedder`, `integer_model`),
in-line embedding of entries the index has not reached (`fresh`), recent query vectors (`queries`),
the background task's life (`task`), its health and status files (`health`) and its step timer
(`indexing_clock`). Nothing here imports Chroma or a record store."""
