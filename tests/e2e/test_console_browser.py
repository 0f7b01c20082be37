"""The memory console in a real browser (Debian's headless chromium over CDP): sign in with a pasted
token, find an entry created over MCP, edit it, resolve a conflict, see the audit rows; and
`agent-memory console --open`'s one-time sign-in, after which no token is kept anywhere but in memory."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.cdp import chromium, why_no_browser
from tests.e2e.servers import http_client, http_server, token

pytestmark = pytest.mark.anyio


async def test_sign_in_find_edit_resolve_a_conflict_and_see_the_audit(tmp_path: Path) -> None:
    reason = why_no_browser()
    if reason is not None:
        pytest.skip(reason)
    bearer = token("browser-agent", "sys3", "red")
    with http_server(tmp_path / "data", MEMORY_VECTOR_BACKEND="none") as url:
        base = url.removesuffix("/mcp")
        async with http_client(url, bearer) as client:
            created = await client.call_tool("memory_crud", {
                "action": "create", "scope": "team", "namespace": "red/runbooks", "layer": "long_term",
                "items": [{"content": "restart the queue with systemctl", "tags": ["ops"]}]})
            entry = created.structured_content["items"][0]
        with chromium(tmp_path / "profile") as page:
            # an old #token= link: the token is not taken (nor left in the address bar), the view it names is kept
            page.goto(f"{base}/console/#/search?q=restart+queue&token=am1.old-token&mode=keyword")
            assert "no longer carry tokens" in page.wait_for("document.querySelector('#main p.error')?.textContent")
            assert page.evaluate("location.hash") == "#/search?q=restart+queue&mode=keyword"
            assert page.evaluate("document.getElementById('status').hidden")  # no message, no status bar
            for link, kept in (("#token=am1.x&/metrics", "#/metrics"), ("#token=am1.x&view=search&q=a", "#/search?q=a"),
                               ("#/entry/mem_1&code=abc", "#/entry/mem_1"), ("#token=am1.x", "#/browse")):
                assert page.evaluate(f"withoutCredentials({json.dumps(link)})") == kept, link
            page.fill("#token-input", bearer)
            page.click("#sign-in")
            assert "browser-agent" in page.wait_for("document.getElementById('who').textContent")
            page.wait_for("document.querySelector('#results tbody tr')")  # the search the link named
            assert page.evaluate("document.querySelector('#search-form [name=mode]').value") == "keyword"

            # the search modes are memory_retrieve's own, hybrid by default
            page.goto(f"{base}/console/#/search")
            page.wait_for("document.getElementById('search-q')")
            modes = page.evaluate("[...document.querySelectorAll('#search-form [name=mode] option')]"
                                  ".map(o => o.value)")
            assert modes == ["hybrid", "semantic", "keyword"]
            assert page.evaluate("document.querySelector('#search-form [name=mode]').value") == "hybrid"

            # browse, narrowed to the team namespace subtree, finds the entry written over MCP
            page.goto(f"{base}/console/#/browse")
            page.fill("#filters [name=scope]", "team")
            page.fill("#filters [name=namespace]", "red")
            page.click("#apply-filters")
            page.wait_for(f"document.querySelector('#entries tr[data-id=\"{entry['id']}\"]')")
            # the time as minutes (the full value in its tooltip), on one line; content is the widest column
            stamp = json.loads(page.evaluate(
                "JSON.stringify((t => [t.textContent, t.title, getComputedStyle(t.parentNode).whiteSpace])"
                "(document.querySelector('#entries tr[data-id] time')))"))
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", stamp[0]), stamp
            assert stamp[1].startswith(stamp[0].replace(" ", "T")) and len(stamp[1]) > len(stamp[0])
            assert stamp[2] == "nowrap"
            widths = page.evaluate("[...document.querySelectorAll('#browse-table th')]"
                                   ".map(t => t.getBoundingClientRect().width)")
            assert widths[-1] == max(widths), widths
            page.click(f"#entries a[data-id=\"{entry['id']}\"]")

            # edit it (the console sends the etag it shows as if_match)
            page.wait_for("document.getElementById('edit-content')")
            page.fill("#edit-content", "restart the queue with systemctl restart queue.service")
            page.click("#save")
            page.wait_for("document.querySelector('[data-field=version]')?.textContent === '2'")

            # another writer still holding the first etag: their change becomes a conflict entry
            async with http_client(url, bearer) as client:
                stale = await client.call_tool("memory_crud", {
                    "action": "update", "scope": "team", "namespace": "red/runbooks", "if_match": entry["etag"],
                    "items": [{"id": entry["id"], "content": "restart the queue with kill -HUP"}]})
            conflict_id = stale.structured_content["errors"][0]["details"]["conflict_id"]

            page.goto(f"{base}/console/#/conflicts")
            pair = f".pair[data-conflict=\"{conflict_id}\"]"
            page.wait_for(f"document.querySelector('{pair}')")
            shown = page.text(pair)
            assert "systemctl restart queue.service" in shown and "kill -HUP" in shown
            page.click(f"{pair} button.take")
            page.wait_for("document.getElementById('no-conflicts')")
            # the status bar: shown for the message, in plain words, and dismissable
            said = page.wait_for("!document.getElementById('status').hidden && "
                                 "document.getElementById('status-text').textContent")
            assert said == "Conflict resolved: kept this version."
            page.click("#status-dismiss")
            assert page.evaluate("document.getElementById('status').hidden")

            page.goto(f"{base}/console/#/entry/{entry['id']}")
            page.wait_for("document.querySelectorAll('#audit .audit-row').length >= 4")
            rows = json.loads(page.evaluate(
                "JSON.stringify([...document.querySelectorAll('#audit .audit-row')]"
                ".map(r => [...r.cells].map(c => c.textContent)))"))
            assert page.evaluate("document.getElementById('edit-content').value") == "restart the queue with kill -HUP"
        actions = [(row[2], row[3], row[4]) for row in rows]
        assert ("memory_crud", "create", "ok") in actions
        assert ("console", "update", "ok") in actions
        assert ("memory_crud", "update", "conflict") in actions
        assert actions.count(("console", "update", "ok")) == 2  # the edit, then "take this"
        gone = httpx.get(f"{base}/console/api/entries/{conflict_id}", headers={"Authorization": f"Bearer {bearer}"},
                         timeout=30)
        assert gone.status_code == 404


async def test_console_open_signs_in_once_keeps_no_token_anywhere_and_shows_scores_and_charts(tmp_path: Path) -> None:
    reason = why_no_browser()
    if reason is not None:
        pytest.skip(reason)
    from tests.e2e.test_console_sign_in import console

    argv_file = tmp_path / "browser-argv"
    recorder = tmp_path / "browser"  # stands in for the desktop browser: records what it was asked to open
    recorder.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {argv_file}.part && mv {argv_file}.part {argv_file}\n")
    recorder.chmod(0o700)
    with console(tmp_path, "--open", BROWSER=str(recorder)) as running:
        base = running.base
        async with http_client(f"{base}/mcp", token("blue-writer", "sys1", "blue")) as client:
            await client.call_tool("memory_crud", {"action": "create", "items": [
                {"content": "the blue build cache lives on volume seven"}]})
            await client.call_tool("memory_retrieve", {"query": "build cache"})
        code = running.next_code()
        deadline = time.monotonic() + 30
        while not argv_file.exists():
            assert time.monotonic() < deadline, "--open started no browser within 30 s"
            time.sleep(0.05)
        opened = argv_file.read_text()
        assert opened.startswith("file://") and code not in opened
        with chromium(tmp_path / "profile") as page:
            page.send("Page.navigate", url=opened)  # the private redirect file, then the console with the code
            assert page.wait_for("document.getElementById('who')?.textContent").startswith("OPERATOR launcher")
            assert "code=" not in page.evaluate("location.href")  # out of the address bar at once
            assert page.evaluate("sessionStorage.length + localStorage.length + document.cookie.length") == 0
            assert page.evaluate("!document.getElementById('nav-warnings').hidden")

            page.goto(f"{base}/console/#/search?q=build+cache+volume&mode=keyword")
            page.wait_for("document.querySelector('#results tbody tr')")
            headers = page.evaluate("[...document.querySelectorAll('#results th')].map(t => t.textContent)")
            assert headers[:2] == ["id", "score"] and {"keyword", "recency", "priority", "scope"} <= set(headers)
            assert "volume seven" in page.text("#results tbody")

            page.goto(f"{base}/console/#/metrics")
            page.wait_for("document.querySelectorAll('.chart svg rect').length >= 3")
            summary = page.text("#metrics-summary")
            assert "retrieval hit rate" in summary and "vector outbox backlog" in summary
            assert "memory_retrieve" in page.text(".charts")
            # each count says what it counts; the hit rate is a percentage of retrievals
            rows = dict(json.loads(page.evaluate(
                "JSON.stringify([...document.querySelectorAll('#metrics-summary tr')]"
                ".map(r => [r.cells[0].textContent, r.cells[1].textContent]))")))
            assert any(k.startswith("tool calls (") for k in rows) and any(k.startswith("retrievals (") for k in rows)
            rate = next(v for k, v in rows.items() if k.startswith("retrieval hit rate"))
            assert re.fullmatch(r"\d+(\.\d)?% \(\d+ of \d+\)", rate), rate
            # a time series: "no data yet" until two samples, then a line with its scale on the axes
            assert "no data yet" in page.text("#spark-calls")
            page.wait_for("document.querySelector('#spark-calls svg polyline')", timeout=20)
            assert page.evaluate("document.querySelector('#spark-calls .axis-max')?.textContent") is not None
            assert "now" in page.text("#spark-calls svg") and "last values" in page.text("#spark-calls")

            # warnings as a readable list, not JSON lines (a refused token logs one)
            assert httpx.get(f"{base}/console/api/whoami", headers={"Authorization": "Bearer am1.not-a-token"},
                             timeout=30).status_code == 401
            page.goto(f"{base}/console/#/warnings")
            page.wait_for("document.querySelector('#warning-lines .warning-line')")
            cells = json.loads(page.evaluate(
                "JSON.stringify([...document.querySelector('#warning-lines .warning-line').cells]"
                ".map(c => c.textContent))"))
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", cells[0]), cells
            assert cells[1].lower() == "warning" and cells[2] == "console_unauthorized"
            assert "reason" in page.text("#warning-lines dl") and '{"' not in page.text("#warning-lines")

            # the code URL as the browser's history kept it: opened again, it signs nobody in
            page.goto("about:blank")
            page.goto(f"{base}/console/#code={code}")
            assert "already used" in page.wait_for("document.querySelector('#main p.error')?.textContent")
            assert page.evaluate("document.getElementById('nav').hidden")
