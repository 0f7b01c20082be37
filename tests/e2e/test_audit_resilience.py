"""End to end on PostgreSQL (whose text cannot hold NUL): a console request carrying a NUL stops
nobody's audit. Afterwards another agent's five reads over MCP are all audited, and the server
logs no lost audit event when it stops."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.e2e.servers import http_client, token
from tests.e2e.test_postgres_servers import postgres_http_server

pytestmark = pytest.mark.anyio


async def test_a_nul_in_a_console_request_stops_no_audit_on_postgresql(tmp_path: Path, postgres_url: str) -> None:
    data = tmp_path / "server"
    with postgres_http_server(data, postgres_url) as (url, proc):
        base = url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.get(f"{base}/console/api/entries?namespace=red%00",
                                    headers={"Authorization": f"Bearer {token('mallory', 'sys1', 'red')}"})
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.status_code in (200, 400), answer.text
        async with http_client(url, token("bob", "sys1", "red")) as bob:
            created = await bob.call_tool("memory_crud", {"action": "create", "items": [{"content": "bob's note"}]})
            entry_id = created.structured_content["items"][0]["id"]
            for _ in range(5):
                read = await bob.call_tool("memory_crud", {"action": "read", "items": [{"id": entry_id}]})
                assert not read.is_error, read.structured_content
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    log = (tmp_path / "server.log").read_text()
    assert "audit_events_lost" not in log and "audit_write_failed" not in log, log[-2000:]
    import psycopg

    with psycopg.connect(postgres_url) as pg:
        reads = pg.execute("SELECT count(*) FROM audit WHERE agent_id = 'bob' AND action = 'read' "
                           "AND outcome = 'ok'").fetchone()[0]
    assert reads == 5
