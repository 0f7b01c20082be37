"""`agent-memory setup --write` never clobbers what it cannot parse and never turns a linked
config file (dotfiles) into a copy: the file the link points at is the one merged into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.cli.main import main
from tests.test_host_setup import home  # noqa: F401 - the fixture


def test_a_linked_config_file_is_merged_through_the_link(home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "cursor-mcp.json"
    real.write_text(json.dumps({"mcpServers": {"other": {"command": "/bin/other"}}}))
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert main(["setup", "cursor", "--write"]) == 0
    assert link.is_symlink() and link.resolve() == real.resolve()
    merged = json.loads(real.read_text())
    assert set(merged["mcpServers"]) == {"other", "agent-memory"}
    assert json.loads((dotfiles / "cursor-mcp.json.bak").read_text()) == {"mcpServers": {"other": {"command":
                                                                                                   "/bin/other"}}}


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"mcpServers": {}}\n{"second": 1}',
                                  "\ufeff{\"mcpServers\": {}", '"just a string"', "null"])
def test_unparsable_files_are_left_alone_with_a_message(home: Path, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                                        text: str) -> None:
    target = home / ".cursor" / "mcp.json"
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    assert main(["setup", "cursor", "--write"]) == 1
    err = capsys.readouterr().err
    assert "nothing written" in err and "Traceback" not in err
    assert target.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in target.parent.iterdir()) == ["mcp.json"]  # no backup, no temporary file left


def test_a_folder_where_the_file_should_be_is_refused(home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    (home / ".cursor" / "mcp.json").mkdir(parents=True)
    assert main(["setup", "cursor", "--write"]) == 1
    assert "cannot read" in capsys.readouterr().err
