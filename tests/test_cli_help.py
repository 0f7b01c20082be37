"""The command line's own answers: `--version`, and help that fits a screen (server settings only
under `serve`, every setting still reachable through the environment and the config file)."""

from __future__ import annotations

import importlib.metadata
import subprocess

import pytest

from agent_memory.cli.main import _parser, _settings, main
from agent_memory.config import flag_settings
from tests.e2e.servers import agent_memory_command


def _commands() -> list[list[str]]:
    """Every command but `serve`, including ones added later (they are held to the same limit)."""
    found: list[list[str]] = [[]]
    parsers = [([], _parser())]
    while parsers:
        prefix, parser = parsers.pop()
        for action in parser._subparsers._group_actions if parser._subparsers else []:  # noqa: SLF001
            for name, sub in action.choices.items():
                if prefix + [name] != ["serve"]:
                    found.append(prefix + [name])
                    parsers.append((prefix + [name], sub))
    return sorted(found)


COMMANDS = _commands()


def help_text(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.fixture(autouse=True)
def terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


def test_version_is_the_installed_distribution() -> None:
    shown = subprocess.run([agent_memory_command(), "--version"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"agent-memory {importlib.metadata.version('vsm-agent-memory')}"


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "agent-memory" for c in COMMANDS])
def test_help_outside_serve_is_short_and_lists_no_server_tuning(command: list[str],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(capsys, *command)
    assert len(text.splitlines()) <= 70, text  # was 180-190 lines for every command
    settings = text.partition("\nsettings:\n")[2]
    assert len(settings.splitlines()) <= 32, settings  # the dozen settings the command reads, at most
    for flag in ("--rank-weight-keyword", "--retrieval-min-score", "--compaction-keep-recent", "--rate-limit-burst"):
        assert flag not in text


def test_serve_help_lists_every_settable_flag_and_points_at_the_readme(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(capsys, "serve")
    assert all(flags[0] in text for _, flags in flag_settings())
    assert "table in docs/configuration.md" in " ".join(text.split())


def test_settings_without_a_flag_still_come_from_the_environment_and_the_config_file(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    config = tmp_path / "settings.toml"
    config.write_text("rank_weight_semantic = 0.7\n")
    monkeypatch.setenv("MEMORY_RANK_WEIGHT_KEYWORD", "0.9")
    settings = _settings(_parser().parse_args(["stats", "--config", str(config), "--data-dir", str(tmp_path)]))
    assert (settings.rank_weight_keyword, settings.rank_weight_semantic, settings.data_dir) == \
        (0.9, 0.7, str(tmp_path))
    prune = _settings(_parser().parse_args(["prune", "--retention-working-days", "3"]))
    assert prune.retention_working_days == 3


def test_a_server_flag_on_an_operator_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["stats", "--rank-weight-keyword", "1"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --rank-weight-keyword" in capsys.readouterr().err
