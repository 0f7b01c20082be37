"""`agent-memory token issue|verify|list|revoke`: bearer tokens and their revocation.

Each command opens the configured store (the same one the servers use: the data directory, or
PostgreSQL), where issued tokens are recorded by id and claims (never their text) and revocations
are kept; the servers read that list on every request."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from agent_memory.config import Settings

if TYPE_CHECKING:
    from agent_memory.application.tokens import Tokens

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
KIND = "cli"  # the `kind` of tokens recorded by `token issue`
T = TypeVar("T")


def run(options: argparse.Namespace, settings: Settings) -> int:
    from agent_memory.logging import configure_logging
    from agent_memory.transports.auth import load_secret

    configure_logging("warning", settings.log_format)
    secret = load_secret(settings)
    command = options.token_command
    if command == "issue":
        return _issue(options, settings, secret)
    if command == "verify":
        return _verify(options, settings, secret)
    if command == "list":
        return _list(options, settings, secret)
    return _revoke(options, settings, secret)


def _with_tokens(settings: Settings, secret: bytes, work: Callable[[Tokens], Awaitable[T]]) -> T:
    """`work(tokens)` on the store `settings` names, opened (and migrated) for this command."""
    import anyio

    from agent_memory.bootstrap import open_records

    async def opened() -> T:
        async with open_records(settings) as records:
            return await work(records.tokens(secret))

    return anyio.run(opened)


def _issue(options: argparse.Namespace, settings: Settings, secret: bytes) -> int:
    from agent_memory.core.access.identity import parse_identity
    from agent_memory.core.access.tokens import check_ttl
    from agent_memory.core.model.errors import Forbidden
    from agent_memory.core.model.models import ALL_SKILLS

    operator = options.token_operator
    raw: dict[str, object] = {"agent_id": options.token_agent_id,
                              "system_type": options.token_system_type or ("sys4" if operator else None),
                              "team": options.token_team or ("operators" if operator else None)}
    for flag, name in (("--system-type", "system_type"), ("--team", "team")):
        if raw[name] is None:
            print(f"agent-memory: token issue needs {flag} (or --operator for a console operator token)",
                  file=sys.stderr)
            return EXIT_USAGE
    if options.token_skills is not None:
        raw["skills"] = options.token_skills
    try:
        caller = dataclasses.replace(parse_identity(raw, default_skills=ALL_SKILLS), operator=operator)
        check_ttl(options.ttl)
    except (Forbidden, ValueError) as exc:
        print(f"agent-memory: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return EXIT_USAGE
    issued = _with_tokens(settings, secret, lambda tokens: tokens.issue(caller, ttl_seconds=options.ttl, kind=KIND))
    print(issued.token)
    print(f"token issue: {issued.claims.token_id} (revoke with: agent-memory token revoke {issued.claims.token_id})",
          file=sys.stderr)
    return EXIT_OK


def _verify(options: argparse.Namespace, settings: Settings, secret: bytes) -> int:
    from agent_memory.core.access.tokens import TokenError

    try:
        claims = _with_tokens(settings, secret, lambda tokens: tokens.verify(options.token.strip()))
    except TokenError as exc:
        print(f"agent-memory: invalid token: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(claims.as_dict(), indent=2))
    return EXIT_OK


def _list(options: argparse.Namespace, settings: Settings, secret: bytes) -> int:
    from agent_memory.core.access.revocation import ms_timestamp

    listing = _with_tokens(settings, secret, lambda tokens: tokens.listed(options.token_list_agent))
    records, cutoffs = listing.records, listing.cutoffs
    now = ms_timestamp(int(time.time() * 1000))
    for record in records:
        print(json.dumps(record.as_dict(), ensure_ascii=False))
    revoked = sum(1 for r in records if r.revoked_at is not None)
    expired = sum(1 for r in records if r.revoked_at is None and r.expires_at <= now)
    print(f"token list: {len(records)} tokens ({len(records) - revoked - expired} valid, {revoked} revoked, "
          f"{expired} expired)", file=sys.stderr)
    for cutoff in cutoffs:
        if options.token_list_agent in (None, cutoff.agent_id):
            print(f"token list: every token of {cutoff.agent_id} issued through {cutoff.revoked_at} is revoked",
                  file=sys.stderr)
    return EXIT_OK


def _revoke(options: argparse.Namespace, settings: Settings, secret: bytes) -> int:
    from agent_memory.core.access.identity import ID_PATTERN

    token_id, agent = options.token_id, options.token_revoke_agent
    if (token_id is None) == (agent is None):
        print("agent-memory: token revoke needs a token id (see `agent-memory token list`) or --agent A, "
              "not both", file=sys.stderr)
        return EXIT_USAGE
    if agent is not None:
        if not ID_PATTERN.fullmatch(agent):
            print(f"agent-memory: --agent {agent!r} is not an agent id", file=sys.stderr)
            return EXIT_USAGE
        marked = _with_tokens(settings, secret, lambda tokens: tokens.revoke_agent(agent))
        print(f"token revoke: every token of {agent} issued until now is revoked ({marked} recorded tokens newly "
              "marked); servers sharing this store refuse them from their next request", file=sys.stderr)
        return EXIT_OK
    record = _with_tokens(settings, secret, lambda tokens: tokens.revoke(token_id))
    if record is None:
        print(f"agent-memory: no token {token_id} is recorded in this store (see `agent-memory token list`; "
              "`token revoke --agent A` revokes an agent's tokens that were never recorded)", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(record.as_dict(), ensure_ascii=False))
    print(f"token revoke: {token_id} revoked at {record.revoked_at}; servers sharing this store refuse it from "
          "their next request", file=sys.stderr)
    return EXIT_OK
