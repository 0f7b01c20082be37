"""The local model's settings (`distill_*`): opt-in, an http(s) URL without credentials, a model
name, a key from a file only its owner may read or from MEMORY_DISTILL_KEY; refused at start with a
message naming the setting and never showing a secret."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.bootstrap import local_model
from agent_memory.config import ConfigError, load_settings

URL = "http://127.0.0.1:11434/v1"


def _key_file(tmp_path: Path, mode: int, text: str = "sk-local-hunter2\n") -> str:
    path = tmp_path / "model.key"
    path.write_text(text)
    os.chmod(path, mode)
    return str(path)


def test_nothing_set_means_no_model() -> None:
    settings = load_settings(environ={})
    assert (settings.distill_url, settings.distill_model, settings.distill_key) == ("", "", "")
    assert local_model(settings) is None


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "file:///etc/passwd", "127.0.0.1:11434/v1", "http://",
                                 "http:///v1", "http://host name/v1", "unix:///run/ollama.sock"])
def test_a_url_that_is_not_http_is_refused_naming_the_setting(url: str) -> None:
    with pytest.raises(ConfigError, match=r"invalid setting distill_url \(MEMORY_DISTILL_URL\): must be an "
                                          r"http:// or https:// URL"):
        load_settings(environ={"MEMORY_DISTILL_URL": url, "MEMORY_DISTILL_MODEL": "m"})


def test_credentials_in_the_url_are_refused_without_showing_them() -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={"MEMORY_DISTILL_URL": "https://me:hunter2@models.internal/v1",
                               "MEMORY_DISTILL_MODEL": "m"})
    assert "distill_url" in str(refused.value) and "distill_key_file" in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_a_url_needs_a_model_name() -> None:
    with pytest.raises(ConfigError, match=r"distill_url needs distill_model \(MEMORY_DISTILL_MODEL\)"):
        load_settings(environ={"MEMORY_DISTILL_URL": URL})


def test_the_key_comes_from_a_private_file_else_the_environment(tmp_path: Path) -> None:
    settings = load_settings(environ={"MEMORY_DISTILL_URL": URL, "MEMORY_DISTILL_MODEL": "m",
                                      "MEMORY_DISTILL_KEY_FILE": _key_file(tmp_path, 0o600),
                                      "MEMORY_DISTILL_KEY": "sk-from-env"})
    assert settings.distill_key == "sk-local-hunter2"  # the file wins
    assert "hunter2" not in repr(settings) and "hunter2" not in repr(local_model(settings))
    from_env = load_settings(environ={"MEMORY_DISTILL_URL": URL, "MEMORY_DISTILL_MODEL": "m",
                                      "MEMORY_DISTILL_KEY": "sk-from-env"})
    assert from_env.distill_key == "sk-from-env" and "sk-from-env" not in repr(from_env)


def test_the_key_is_never_a_flag() -> None:
    from agent_memory.config import flag_settings

    assert "distill_key" not in dict(flag_settings()) and "distill_key_file" in dict(flag_settings())


@pytest.mark.parametrize(("mode", "text", "why"), [
    (0o644, "sk-local-hunter2\n", "may be read by others: chmod 600"),
    (0o640, "sk-local-hunter2\n", "may be read by others: chmod 600"),
    (0o600, "\n", "does not hold one key"),
    (0o600, "two words\n", "does not hold one key"),
])
def test_an_unfit_key_file_is_refused(tmp_path: Path, mode: int, text: str, why: str) -> None:
    path = _key_file(tmp_path, mode, text)
    with pytest.raises(ConfigError) as refused:
        load_settings(environ={"MEMORY_DISTILL_URL": URL, "MEMORY_DISTILL_MODEL": "m", "MEMORY_DISTILL_KEY_FILE": path})
    assert str(refused.value).startswith("invalid setting distill_key_file (MEMORY_DISTILL_KEY_FILE): ")
    assert why in str(refused.value) and "hunter2" not in str(refused.value)


def test_a_missing_key_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"distill_key_file \(--distill-key-file\): the file .* cannot be read"):
        load_settings(environ={}, overrides={"distill_url": URL, "distill_model": "m",
                                             "distill_key_file": str(tmp_path / "absent.key")})


def test_the_server_refuses_to_start_with_a_key_file_others_may_read(tmp_path: Path) -> None:
    path = _key_file(tmp_path, 0o644)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    result = subprocess.run(
        [sys.executable, "-m", "agent_memory", "serve", "--distill-url", URL, "--distill-model", "qwen2.5:7b",
         "--distill-key-file", path, "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)
    assert (result.returncode, result.stdout) == (2, "")
    assert f"invalid setting distill_key_file (--distill-key-file): the file {path} may be read by others: " \
           f"chmod 600 {path}" in result.stderr
    assert "hunter2" not in result.stderr


def test_the_example_config_names_a_local_model() -> None:
    settings = load_settings(config_file=Path(__file__).resolve().parents[1] / "configs" / "local-model.toml",
                             environ={})
    assert (settings.distill_url, settings.distill_model, settings.distill_timeout_seconds) == (
        "http://127.0.0.1:11434/v1", "qwen2.5:7b-instruct", 120.0)
    assert local_model(settings) is not None
