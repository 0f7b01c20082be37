"""Settings: defaults, configs/default.toml, environment and flags, and refusing bad values."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from dataclasses import asdict
from pathlib import Path

import pytest

from agent_memory.config import ConfigError, Settings, load_settings, setting_names

ROOT = Path(__file__).resolve().parents[1]


def test_default_toml_lists_every_setting_with_its_default() -> None:
    documented = tomllib.loads((ROOT / "configs" / "default.toml").read_text())
    assert documented == asdict(Settings())
    assert set(documented) == set(setting_names())


def test_loading_the_default_file_gives_the_defaults() -> None:
    assert load_settings(config_file=ROOT / "configs" / "default.toml", environ={}) == Settings()


def test_environment_overrides_file_and_flags_override_environment(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('team = "from-file"\nmax_content_chars = 10\nsystem_type = "sys2"\n')
    env = {"MEMORY_TEAM": "from-env", "MEMORY_MAX_CONTENT_CHARS": "20"}
    settings = load_settings(config_file=config, environ=env, overrides={"team": "from-flag", "log_level": None})
    assert (settings.team, settings.max_content_chars, settings.system_type) == ("from-flag", 20, "sys2")


def test_memory_config_environment_variable_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('backend = "list"\n')
    settings = load_settings(environ={"MEMORY_CONFIG": str(config)})
    assert settings.backend == "list" and settings.sqlite_file == ":memory:"


def test_data_directory_follows_xdg_and_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Settings().sqlite_file == str(tmp_path / "xdg" / "agent-memory" / "memory.db")
    assert Settings(data_dir=str(tmp_path / "d")).sqlite_file == str(tmp_path / "d" / "memory.db")
    assert Settings(sqlite_path=str(tmp_path / "x.db")).sqlite_file == str(tmp_path / "x.db")


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MEMORY_MAX_CONTENT_CHARS": "lots"}, "max_content_chars (MEMORY_MAX_CONTENT_CHARS)"),
        ({"MEMORY_MAX_CONTENT_CHARS": "0"}, "max_content_chars (MEMORY_MAX_CONTENT_CHARS)"),
        ({"MEMORY_BACKEND": "mysql"}, "backend (MEMORY_BACKEND)"),
        ({"MEMORY_BACKEND": "postgres"}, "postgres_url (MEMORY_POSTGRES_URL)"),
        ({"MEMORY_POSTGRES_URL": "mysql://u:pw@h/db"}, "postgres_url (MEMORY_POSTGRES_URL)"),
        ({"MEMORY_SYSTEM_TYPE": "sys7"}, "system_type (MEMORY_SYSTEM_TYPE)"),
        ({"MEMORY_AGENT_ID": "has space"}, "agent_id (MEMORY_AGENT_ID)"),
        ({"MEMORY_SKILLS": "memory_crud,root"}, "skills (MEMORY_SKILLS)"),
        ({"MEMORY_LOG_LEVEL": "loud"}, "log_level (MEMORY_LOG_LEVEL)"),
    ],
)
def test_invalid_value_names_the_setting(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("(", r"\(").replace(")", r"\)")):
        load_settings(environ=env)


def test_an_invalid_postgres_url_is_refused_without_showing_it() -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={"MEMORY_POSTGRES_URL": "http://memory:hunter2@db/memory"})
    assert "postgres_url" in str(refused.value) and "hunter2" not in str(refused.value)
    settings = load_settings(environ={"MEMORY_BACKEND": "postgres",
                                      "MEMORY_POSTGRES_URL": "postgresql://memory:hunter2@db/memory"})
    assert settings.backend == "postgres" and "hunter2" not in repr(settings)


def test_unknown_key_in_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("max_contents = 5\n")
    with pytest.raises(ConfigError, match="unknown setting max_contents"):
        load_settings(config_file=config, environ={})


def test_server_refuses_to_start_on_an_invalid_setting(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agent_memory", "serve", "--max-content-chars", "-5", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "invalid setting max_content_chars (--max-content-chars)" in result.stderr


def test_an_invalid_identity_names_where_its_value_came_from(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"system_type \(--system-type\)"):
        load_settings(environ={}, overrides={"system_type": "3"})
    with pytest.raises(ConfigError, match=r"system_type \(MEMORY_SYSTEM_TYPE\)"):
        load_settings(environ={"MEMORY_SYSTEM_TYPE": "3"})
    config = tmp_path / "memory.toml"
    config.write_text('agent_id = "has space"\n')
    with pytest.raises(ConfigError, match=r"agent_id \(agent_id in .*memory.toml\)"):
        load_settings(config_file=config, environ={})
