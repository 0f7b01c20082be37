"""A real PostgreSQL 16 with pgvector for tests: one server per test run, a fresh database per test.

The server comes from the `pgserver` wheel (PostgreSQL 16 + pgvector, in the `test` extra); its
binaries are run directly, so nothing outside a temporary directory changes. PostgreSQL refuses to
run as root: as root the server runs as the unprivileged `nobody` user, which owns only that
directory. It listens on a Unix socket in the directory (no port to collide on) and trusts local
connections, with durability off (fsync, synchronous commit): it is a test server.

Set `MEMORY_TEST_POSTGRES_URL` to a libpq URL of an existing server (with pgvector) to use it
instead; each test then gets its own database on it. When no server can start, the tests that
need one are skipped with the reason (shown by `-rs`, which pyproject's addopts set), or fail
when `MEMORY_TEST_POSTGRES=required` (CI sets it, so PostgreSQL tests can never silently vanish).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

START_TIMEOUT_SECONDS = 60
_UNPRIVILEGED = "nobody"
# The one role that must give a password (scram-sha-256) on the bundled server; every other role
# is trusted. Tests of password handling create it (`PostgresForTests.password_role`).
PASSWORD_ROLE = "am_password_user"


def pgserver_bin_dir() -> Path | None:
    """The bundled PostgreSQL binaries of the `pgserver` wheel, found without importing it (its
    import registers locks and exit hooks we do not need)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        return None
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return bin_dir if (bin_dir / "postgres").exists() else None


class LocalPostgres:
    """A PostgreSQL server in a directory of its own, stopped and removed by `stop()`."""

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        self._bin = bin_dir
        self._durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="am-pg-"))  # short: a socket path holds at most 107 bytes
        self._data = self.root / "data"
        self._user: pwd.struct_passwd | None = pwd.getpwnam(_UNPRIVILEGED) if os.geteuid() == 0 else None
        self._started = False

    def _run(self, *args: str) -> None:
        user = self._user
        result = subprocess.run(
            [str(self._bin / args[0]), *args[1:]], capture_output=True, text=True, timeout=START_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL, cwd=self.root,
            user=user.pw_uid if user else None, group=user.pw_gid if user else None,
            extra_groups=[] if user else None)
        if result.returncode != 0:
            log = self.root / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr.strip()[-2000:]} {tail}")

    def start(self) -> None:
        self._data.mkdir(mode=0o700)
        if self._user is not None:
            self.root.chmod(0o755)
            for path in (self.root, self._data):
                os.chown(path, self._user.pw_uid, self._user.pw_gid)
            # The unprivileged user may not reach the venv (a clone in a 0700 directory): run a copy
            # of the binaries, libraries and share files from our own directory (about 40 MB), laid
            # out as in site-packages, where the binaries' RPATH finds pgserver.libs.
            installed = self._bin.parent
            copy = self.root / "pkg" / "pgserver" / "pginstall"
            for part in ("bin", "lib", "share"):
                if (installed / part).is_dir():
                    shutil.copytree(installed / part, copy / part, symlinks=True)
            libs = installed.parent.parent / "pgserver.libs"
            if libs.is_dir():
                shutil.copytree(libs, self.root / "pkg" / "pgserver.libs", symlinks=True)
            self._bin = copy / "bin"
        self._run("initdb", "-D", str(self._data), "-U", "postgres", "--auth=trust", "--encoding=UTF8",
                  "--locale=C", "--no-sync")
        hba = self._data / "pg_hba.conf"
        hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\nlocal all all trust\n")
        if self._user is not None:
            os.chown(hba, self._user.pw_uid, self._user.pw_gid)
        options = [f"-k {self.root}", "-h ''", "-c max_connections=200"]
        if not self._durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._run("pg_ctl", "-D", str(self._data), "-l", str(self.root / "log"), "-w",
                  "-t", str(START_TIMEOUT_SECONDS), "-o", " ".join(options), "start")
        self._started = True

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={quote(str(self.root), safe='/')}"

    def stop(self) -> None:
        try:
            if self._started:
                self._run("pg_ctl", "-D", str(self._data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


class PostgresForTests:
    """Hands out fresh, empty databases on one server (`admin_url` names its maintenance database)."""

    def __init__(self, admin_url: str, *, password_role: str | None = None) -> None:
        """`password_role`: a role the server makes give a password (None: an external server)."""
        self.admin_url = admin_url
        self.password_role = password_role
        self._names = (f"am_test_{os.getpid()}_{n}" for n in itertools.count(1))

    def url_for(self, database: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg  # the `postgres` extra; imported here so a missing driver is a skip reason

        name = next(self._names)
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = urlsplit(url).path.lstrip("/")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _unavailable(reason: str) -> None:
    """Skip (with the reason printed on stderr and in the `-rs` summary), or fail when required."""
    message = f"PostgreSQL tests cannot run: {reason}"
    if os.environ.get("MEMORY_TEST_POSTGRES", "").lower() == "required":
        pytest.fail(message + " (MEMORY_TEST_POSTGRES=required)", pytrace=False)
    print(message, file=sys.stderr)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresForTests]:
    """One PostgreSQL for the whole run (started on first use, stopped at the end)."""
    if importlib.util.find_spec("psycopg") is None:
        _unavailable("the driver is not installed (from the clone: pip install '.[postgres]')")
    external = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    if external:
        import psycopg

        try:
            psycopg.connect(external, connect_timeout=10).close()
        except psycopg.Error as exc:
            _unavailable(f"MEMORY_TEST_POSTGRES_URL does not connect: {type(exc).__name__}")
        yield PostgresForTests(external)
        return
    bin_dir = pgserver_bin_dir()
    if bin_dir is None:
        _unavailable("no server binaries: install the test extra (pgserver) or set MEMORY_TEST_POSTGRES_URL")
    assert bin_dir is not None
    server = LocalPostgres(bin_dir)
    try:
        server.start()
    except (OSError, RuntimeError, KeyError, subprocess.SubprocessError) as exc:
        server.stop()
        _unavailable(f"the bundled server did not start: {exc}")
    try:
        yield PostgresForTests(server.url(), password_role=PASSWORD_ROLE)
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresForTests) -> Iterator[str]:
    """The libpq URL of a fresh, empty database of its own for this test."""
    url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)
