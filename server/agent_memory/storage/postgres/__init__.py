"""PostgreSQL (psycopg 3) adapters: entries, keyword index, audit, outbox and vectors (pgvector) in
one database, for `MEMORY_BACKEND=postgres`. Needs the `postgres` extra; import only when chosen."""
