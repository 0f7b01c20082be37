"""Fixtures for the storage tests: every record store (`store`, tests/storage/stores.py); the real
PostgreSQL (tests/postgres.py) comes from tests/conftest.py, one server for the whole run."""

from tests.storage.stores import store  # noqa: F401 - fixture
