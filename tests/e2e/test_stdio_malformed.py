"""End to end: malformed lines on stdio get a JSON-RPC error (never silence), and the session lives on."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.e2e.servers import agent_memory_command, server_env

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
ANSWER_SECONDS = 5

HUGE = "9" * 5000  # over Python's and the SDK parser's 4,300-digit integer limit
DEEP = "[" * 200 + "]" * 200
TOOLS_LIST = '{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{"x":%s}}'

# name -> (line, the id the error must carry, its code; None: no answer at all)
CASES: dict[str, tuple[str, int | None, int | None]] = {
    "lone_surrogate": ('{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_crud",'
                       '"arguments":{"action":"create","items":[{"content":"\\ud800"}]}}}', 11, PARSE_ERROR),
    "nested_200_deep": (TOOLS_LIST % (12, '{"a":' * 100 + DEEP + "}" * 100), 12, PARSE_ERROR),
    "integer_5000_digits": (TOOLS_LIST % (13, HUGE), 13, PARSE_ERROR),
    "nested_past_python_recursion": (TOOLS_LIST % (14, "[" * 200_000 + "]" * 200_000), 14, PARSE_ERROR),
    "truncated_json": ('{"jsonrpc":"2.0","method":"tools/list","id":"req-15","params":{', "req-15", PARSE_ERROR),
    "not_json": ("this is not JSON at all", None, PARSE_ERROR),
    "array": ('[{"jsonrpc":"2.0","id":16,"method":"tools/list"}]', None, INVALID_REQUEST),
    "scalar": ("42", None, INVALID_REQUEST),
    "no_method": ('{"jsonrpc":"2.0","id":17}', 17, INVALID_REQUEST),
    "array_id": ('{"jsonrpc":"2.0","id":[18],"method":"tools/list"}', None, INVALID_REQUEST),
    "huge_integer_id": (f'{{"jsonrpc":"2.0","id":{HUGE},"method":"tools/list"}}', None, PARSE_ERROR),
    "surrogate_id": ('{"jsonrpc":"2.0","id":"\\udfff","method":"tools/list","params":{"x":"\\ud800"}}', None,
                     PARSE_ERROR),
    "malformed_notification": ('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,'
                               f'"progress":{HUGE}}}}}', None, PARSE_ERROR),
    "malformed_response": (f'{{"jsonrpc":"2.0","id":99,"result":{{"x":{HUGE}}}}}', None, None),
    "blank_line": ("   ", None, None),
}


class Wire:
    """Raw JSON-RPC lines to a server's stdin and from its stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin and proc.stdout
        self.proc, self.stdin, self.fd = proc, proc.stdin, proc.stdout.fileno()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        self.buffer = b""
        self.next_id = 1000

    def send(self, line: str) -> None:
        self.stdin.write(line.encode("utf-8") + b"\n")
        self.stdin.flush()

    def receive(self, timeout: float) -> dict | None:
        """The next message on stdout (it must be JSON), or None when none came within `timeout`."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.selector.select(remaining):
                return None
            chunk = os.read(self.fd, 65536)
            assert chunk, f"server closed stdout (exit {self.proc.poll()})"
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, method: str, params: dict, timeout: float = 60) -> dict:
        """Send a request and return its answer, which must be the next message."""
        self.next_id += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}))
        answer = self.receive(timeout)
        assert answer is not None, f"no answer to {method} in {timeout} s"
        assert answer["id"] == self.next_id, answer
        return answer


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wire]:
    data = tmp_path_factory.mktemp("stdio-malformed")
    with (data / "stderr.log").open("wb") as stderr:
        proc = subprocess.Popen([agent_memory_command(), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, env=server_env(data / "data"))
        try:
            wire = Wire(proc)
            init = wire.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "1"}})
            assert "result" in init, init
            wire.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
            yield wire
        finally:
            proc.stdin.close()  # type: ignore[union-attr]
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()  # type: ignore[union-attr]
    assert proc.returncode == 0, (data / "stderr.log").read_text()


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_line_is_answered_and_the_session_goes_on(wire: Wire, case: str) -> None:
    line, expected_id, expected_code = CASES[case]
    wire.send(line)
    if expected_code is None:  # neither a response nor a blank line is answered
        assert wire.call("tools/list", {})["result"]["tools"]
        return
    answer = wire.receive(ANSWER_SECONDS)
    assert answer is not None, f"no answer in {ANSWER_SECONDS} s to the {case} line"
    assert answer["jsonrpc"] == "2.0" and "result" not in answer
    assert answer["id"] == expected_id
    assert answer["error"]["code"] == expected_code
    assert len(json.dumps(answer)) < 500, "the input must not be echoed back"
    assert [t["name"] for t in wire.call("tools/list", {})["result"]["tools"]] == [
        "memory_crud", "memory_retrieve", "memory_reflect"]


@pytest.mark.parametrize("depth", [40, 300, 900])
def test_tool_arguments_nested_hundreds_deep_get_a_tool_result_naming_the_field(wire: Wire, depth: int) -> None:
    wire.next_id += 1
    wire.send('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_crud","arguments":'  # noqa: UP031
              '{"action":"create","items":[{"content":"deep","tags":%s}]}}}'
              % (wire.next_id, "[" * depth + '"x"' + "]" * depth))
    answer = wire.receive(60)
    assert answer is not None and answer["id"] == wire.next_id, answer
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["errors"] == [{
        "code": "INVALID_PARAMS", "message": "items[0].tags nests arrays or objects deeper than 32 levels",
        "details": {"field": "items[0].tags", "limit": 32}}]
