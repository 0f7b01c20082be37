"""A pool of PostgreSQL connections and short explicit transactions, run on worker threads.

The driver is psycopg 3, used synchronously (tests/bench/bench_pg_driver.py has the figures): the
domain's write ports hand storage one synchronous function per transaction, which runs here on a
worker thread with a connection of its own, statement after statement, and is committed or rolled
back before the thread returns. The transaction is never held across an `await`, and a cancelled
caller waits for it to finish (it is never left half-done), as on SQLite.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import anyio
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

RETRIES = 3  # runs again of a transaction a deadlock (or a serialisation failure) stopped
T = TypeVar("T")

CONNECT_TIMEOUT_SECONDS = 10.0


class PostgresUnavailable(RuntimeError):
    """The server cannot be reached, or refused us. The message never carries the password."""


def redacted_url(url: str) -> str:
    """`url` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


class PostgresDatabase:
    """Connections to one PostgreSQL database, at most `pool_size` at once.

    The password comes from the URL or else from `PGPASSWORD` (libpq reads the environment
    itself); it is never logged nor put in an error message. Pooled connections are in autocommit
    mode: a single read statement costs one round trip, and transactions are explicit.
    """

    def __init__(self, url: str, *, pool_size: int = 10, connect_timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ValueError("the PostgreSQL URL must start with postgresql://")
        self._url = url
        self._timeout = connect_timeout
        self._pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, open=False, timeout=connect_timeout, name="agent-memory",
            kwargs={"autocommit": True, "application_name": "agent-memory",
                    "connect_timeout": max(1, int(connect_timeout))},
        )

    @property
    def display_url(self) -> str:
        return redacted_url(self._url)

    @property
    def pool_size(self) -> int:
        return self._pool.max_size

    async def open(self) -> None:
        """Connect (waits at most the connect timeout). Raises: PostgresUnavailable.

        One plain connection is tried first, so an unreachable server or a refused login fails at
        once with libpq's reason, instead of the pool retrying (and logging) until its timeout."""

        def connect() -> None:
            reason = self._probe()
            if reason is not None:
                raise PostgresUnavailable(f"cannot connect to {self.display_url}: {reason}")
            try:
                self._pool.open(wait=True, timeout=self._timeout)
            except PoolTimeout:
                self._pool.close()
                raise PostgresUnavailable(f"cannot connect to {self.display_url}: "
                                          f"{self._probe() or 'no connection within the timeout'}") from None

        await anyio.to_thread.run_sync(connect)

    def _probe(self) -> str | None:
        """Why a connection fails, in libpq's words (which never include the password); None if
        it does not."""
        try:
            psycopg.connect(self._url, connect_timeout=max(1, int(self._timeout))).close()
        except psycopg.Error as exc:
            text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
            text = text.removeprefix("connection failed: ") or type(exc).__name__
            password = urlsplit(self._url).password or os.environ.get("PGPASSWORD")
            return text.replace(password, "***") if password else text
        return None

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self._pool.close)

    async def transact(self, work: Callable[[psycopg.Connection], T]) -> T:
        """Run `work(connection)` inside BEGIN ... COMMIT on a worker thread; roll back and
        re-raise if it raises. A transaction PostgreSQL chose as a deadlock's victim (or failed to
        serialise) is run again from the start, up to RETRIES times after a short random pause:
        two writers touching the same rows in different orders (pruning deleting a namespace's
        oldest entries while a reflection marks some of them superseded) then both finish, as
        they would one after the other. `work` is a pure transaction body (see
        `core.ports.WriteTransaction`): running it again is safe."""

        def run() -> T:
            attempt = 0
            while True:
                try:
                    with self._pool.connection() as conn, conn.transaction():
                        return work(conn)
                except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
                    if attempt == RETRIES:
                        raise
                    attempt += 1
                    time.sleep(random.uniform(0.01, 0.05) * attempt)  # noqa: S311 - jitter, not secrets

        return await anyio.to_thread.run_sync(run)

    async def read(self, work: Callable[[psycopg.Connection], T], *, snapshot: bool = False) -> T:
        """Run `work(connection)` on a worker thread (several statements, one hand-off). With
        `snapshot`, every statement sees the same committed state (a read-only repeatable-read
        transaction); otherwise each statement sees what was committed when it started."""

        def run() -> T:
            with self._pool.connection() as conn:
                if not snapshot:
                    return work(conn)
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try:
                    result = work(conn)
                except BaseException:
                    with suppress(psycopg.Error):  # a broken connection: the pool discards it
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                return result

        return await anyio.to_thread.run_sync(run)
