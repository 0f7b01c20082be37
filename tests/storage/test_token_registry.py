"""The `TokenRegistry` contract (issued tokens and revocations) on SQLite and PostgreSQL, each opened
through the composition root as the token commands and the servers open it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_memory.bootstrap import Records, open_records
from agent_memory.core.access.revocation import FORGET_EXPIRED_AFTER_SECONDS, register, revoke_agent, revoke_token
from agent_memory.core.access.tokens import TokenClaims, mint
from agent_memory.core.model.models import Caller, SystemType
from agent_memory.core.ports import AuditQuery, TokenRegistry, TokenStanding
from tests.conftest import make_settings

pytestmark = pytest.mark.anyio

SECRET = b"registry-test-secret-0123456789"
T0 = 1_800_000_000_000  # ms


def _minted(agent_id: str, at_ms: int, ttl: int = 3600) -> TokenClaims:
    return mint(Caller(agent_id, SystemType.SYS3, "red"), SECRET, now_ms=at_ms, ttl_seconds=ttl)[1]


class Opened:
    def __init__(self, registry: TokenRegistry, records: Records) -> None:
        self.registry = registry
        self.records = records


@pytest.fixture(params=["sqlite", "postgres"])
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else ""
    settings = make_settings(tmp_path / "data", backend=request.param, postgres_url=url)
    async with open_records(settings) as records:
        yield Opened(records.store.tokens, records)


async def test_recorded_tokens_are_listed_oldest_first_and_filtered_by_agent(opened: Opened) -> None:
    registry = opened.registry
    later, earlier = _minted("bob", T0 + 5), _minted("alice", T0)
    for claims in (later, earlier):
        await register(registry, claims, "cli", now_ms=T0 + 5)
    listed = await registry.tokens()
    assert [r.token_id for r in listed] == [earlier.token_id, later.token_id]
    assert listed[0].as_dict() | {"id": None} == {
        "id": None, "agent_id": "alice", "team": "red", "system_type": "sys3",
        "skills": ["memory_crud", "memory_reflect", "memory_retrieve"], "operator": False, "kind": "cli",
        "issued_at": "2027-01-15T08:00:00.000000Z", "expires_at": "2027-01-15T09:00:00.000000Z", "revoked_at": None}
    assert [r.agent_id for r in await registry.tokens("bob")] == ["bob"]
    assert await registry.standing(earlier.token_id, "alice") == TokenStanding(None, None)
    rows = await opened.records.operator.audit_rows(AuditQuery(action="token_issue"))
    assert [(r["tool"], r["details"]["token_id"]) for r in rows] == [("token", later.token_id),
                                                                     ("token", earlier.token_id)]


async def test_revoking_a_token_marks_it_once_audits_it_and_leaves_the_others(opened: Opened) -> None:
    registry = opened.registry
    kept, gone = _minted("alice", T0), _minted("alice", T0 + 1)
    for claims in (kept, gone):
        await register(registry, claims, "cli", now_ms=T0)
    first = await revoke_token(registry, gone.token_id or "", now_ms=T0 + 10)
    again = await revoke_token(registry, gone.token_id or "", now_ms=T0 + 20)
    assert first is not None and again is not None and first.revoked_at == again.revoked_at == (
        "2027-01-15T08:00:00.010000Z")
    assert await revoke_token(registry, "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV", now_ms=T0) is None
    assert (await registry.standing(gone.token_id, "alice")).revoked_at == first.revoked_at
    assert await registry.standing(kept.token_id, "alice") == TokenStanding(None, None)
    rows = await opened.records.operator.audit_rows(AuditQuery(action="token_revoke"))
    assert [r["details"]["token_id"] for r in rows] == [gone.token_id, gone.token_id]


async def test_an_agent_cutoff_only_rises_and_marks_that_agents_tokens_issued_by_then(opened: Opened) -> None:
    registry = opened.registry
    before, after, other = _minted("alice", T0), _minted("alice", T0 + 2000), _minted("bob", T0)
    for claims in (before, after, other):
        await register(registry, claims, "cli", now_ms=T0)
    assert await revoke_agent(registry, "alice", now_ms=T0 + 1000) == 1
    assert await revoke_agent(registry, "alice", now_ms=T0 + 500) == 0  # an older cutoff never lowers it
    assert await registry.standing(None, "alice") == TokenStanding(None, T0 + 1000)
    assert (await registry.standing(before.token_id, "alice")).revoked_at == "2027-01-15T08:00:01.000000Z"
    assert (await registry.standing(after.token_id, "alice")).revoked_at is None
    assert await registry.standing(other.token_id, "bob") == TokenStanding(None, None)
    assert [(c.agent_id, c.revoked_through_ms) for c in await registry.cutoffs()] == [("alice", T0 + 1000)]


async def test_recording_a_token_forgets_tokens_expired_long_ago(opened: Opened) -> None:
    registry = opened.registry
    old = _minted("alice", T0, ttl=60)
    await register(registry, old, "cli", now_ms=T0)
    long_after = T0 + 61_000 + FORGET_EXPIRED_AFTER_SECONDS * 1000
    await register(registry, _minted("alice", T0 + 1), "console", now_ms=long_after)
    assert [r.kind for r in await registry.tokens()] == ["console"]
