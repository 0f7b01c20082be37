"""Fixtures for the storage tests: a real PostgreSQL (tests/postgres.py) and every record store
(`store`, tests/storage/stores.py)."""

from tests.postgres import postgres_server, postgres_url  # noqa: F401 - fixtures
from tests.storage.stores import store  # noqa: F401 - fixture
