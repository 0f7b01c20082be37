"""Settings: code defaults, then a TOML file, then `MEMORY_*` environment variables, then
command-line flags. The only module that reads configuration files and `MEMORY_*` variables; the
settings themselves (fields, defaults, derived paths, the launch identity) are `agent_memory.settings`.

`configs/default.toml` lists every setting with the default defined here (a test keeps them equal).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from agent_memory.setting_values import ENV_PREFIX, ConfigError, env_name, private_file_text
from agent_memory.settings import Settings

__all__ = ["ConfigError", "Settings", "env_name", "flag_name", "flag_settings", "load_settings", "setting_help",
           "setting_names"]


def flag_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def setting_names() -> list[str]:
    return [f.name for f in fields(Settings)]


def setting_help(name: str) -> str:
    return next(f.metadata["help"] for f in fields(Settings) if f.name == name)


def flag_settings() -> list[tuple[str, tuple[str, ...]]]:
    """(setting name, its flags) for every setting that may be given on the command line."""
    return [
        (f.name, (flag_name(f.name), *f.metadata["aliases"])) for f in fields(Settings) if f.metadata["flag"]
    ]


def load_settings(
    *,
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Settings:
    """Build validated `Settings`.

    Args:
        config_file: a TOML file of settings (else `MEMORY_CONFIG`, else none).
        environ: environment to read `MEMORY_*` from (default `os.environ`).
        overrides: values from command-line flags, by setting name; None values are ignored.

    Raises:
        ConfigError: an unknown key or an invalid value; the message names the setting.
    """
    env = os.environ if environ is None else environ
    raw: dict[str, tuple[object, str]] = {}
    path = config_file or env.get(ENV_PREFIX + "CONFIG")
    if path:
        for key, value in _read_toml(Path(path)).items():
            raw[key] = (value, f"{key} in {path}")
    for name in setting_names():
        if env_name(name) in env:
            raw[name] = (env[env_name(name)], env_name(name))
    for name, value in (overrides or {}).items():
        if value is not None:
            raw[name] = (value, flag_name(name))
    values: dict[str, object] = {}
    by_name = {f.name: f for f in fields(Settings)}
    for name, (value, origin) in raw.items():
        spec = by_name.get(name)
        if spec is None:
            raise ConfigError(f"unknown setting {name} ({origin})")
        try:
            values[name] = spec.metadata["parse"](value)
        except ValueError as exc:
            got = "" if not spec.repr else f"; got {value!r}"  # a secret's value is never shown
            raise ConfigError(f"invalid setting {name} ({origin}): {exc}{got}") from None
    if values.get("distill_url") and values.get("distill_key_file"):
        try:  # the key, read once here: only a file its owner alone may read
            values["distill_key"] = private_file_text(str(values["distill_key_file"]))
        except ValueError as exc:
            raise ConfigError(f"invalid setting distill_key_file ({raw['distill_key_file'][1]}): {exc}") from None
    settings = Settings(**values)  # type: ignore[arg-type]
    if settings.distill_url and not settings.distill_model:
        raise ConfigError(f"distill_url needs distill_model ({env_name('distill_model')}), the name of the model "
                          "the endpoint serves")
    if settings.backend == "postgres" and not settings.postgres_url:
        raise ConfigError(f"backend postgres needs postgres_url ({env_name('postgres_url')}), a postgresql:// URL")
    settings.launch_caller({name: origin for name, (_, origin) in raw.items()})
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
