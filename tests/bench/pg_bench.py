"""A PostgreSQL for the benchmarks: `MEMORY_BENCH_POSTGRES_URL` (an existing server: each run
makes databases on it), else the server bundled in the `pgserver` wheel (the test extra), started
durable (fsync on, as in production) in a temporary directory and stopped at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: its tests package
from tests.postgres import LocalPostgres, PostgresForTests, pgserver_bin_dir  # noqa: E402


@contextmanager
def bench_postgres() -> Iterator[PostgresForTests]:
    """Yields a maker of fresh databases (`create_database()` returns a URL); exits 2 with the
    reason when no PostgreSQL is available."""
    if url := os.environ.get("MEMORY_BENCH_POSTGRES_URL"):
        yield PostgresForTests(url)
        return
    bin_dir = pgserver_bin_dir()
    if bin_dir is None:
        print("needs PostgreSQL: install the test extra (pgserver) or set MEMORY_BENCH_POSTGRES_URL",
              file=sys.stderr)
        sys.exit(2)
    server = LocalPostgres(bin_dir, durable=True)
    try:
        server.start()
        yield PostgresForTests(server.url())
    finally:
        server.stop()
