"""Documentation that runs: every fenced block of README.md and docs/*.md is run or parsed.

A block's fence names its language. `bash` blocks run in `bash -euo pipefail` and `python` blocks in
this Python, one after another in the order of their file, against one scratch store per file
(`MEMORY_DATA_DIR`, `HOME` and the XDG directories in tmp_path; keyword search only, so no block
loads the embedding model) with this venv's `agent-memory` first on `PATH`, in a scratch working
directory that holds links to the clone's `.venv`, `configs/`, `examples/` and `schemas/`. `json` and
`toml` blocks must parse (a call of a tool in docs/tools.md must also be valid arguments of that
tool); `text` blocks (output, layouts, diagrams) are not checked. A block that
cannot run here (it serves until stopped, needs a host's CLI, a PostgreSQL superuser or the
network) says so with `<!-- not-run: why -->` on the line before its fence, and is still parsed
(`bash -n`, `compile`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from agent_memory.cli.main import _parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = {"bash", "python", "json", "toml", "text"}
NOT_RUN = re.compile(r"<!-- not-run: (?P<why>\S.*?) -->")
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.MULTILINE | re.DOTALL)
LINKED = (".venv", "configs", "examples", "schemas")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    body: str
    not_run: str | None

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.language})"


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.fullmatch(before.strip())
        found.append(Block(path, text.count("\n", 0, match.start()) + 1, match["info"].strip(),
                           match["body"], marker["why"] if marker else None))
    return found


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MEMORY_") and k not in ("VIRTUAL_ENV", "AGENT_MEMORY_TOKEN")}
    for name in ("home", "data", "config", "run"):
        (tmp_path / name).mkdir(mode=0o700)
    env.update({
        "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "home" / ".local" / "share"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "MEMORY_DATA_DIR": str(tmp_path / "data"), "MEMORY_VECTOR_BACKEND": "none",
        "MEMORY_LOG_LEVEL": "warning", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    })
    return env


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    venv = Path(sys.prefix)
    for name in LINKED:
        (work / name).symlink_to(venv if name == ".venv" else ROOT / name)
    return work


@pytest.mark.parametrize("path", DOCS, ids=_id)
def test_every_block_names_its_language_and_a_not_run_block_says_why(path: Path) -> None:
    text = path.read_text()
    assert text.count("```") == 2 * len(blocks(path)), f"{_id(path)}: a fence is not closed, or is indented oddly"
    for block in blocks(path):
        assert block.language in LANGUAGES, f"{block}: fence info must be one of {sorted(LANGUAGES)}"
        if block.not_run is not None:
            assert block.language in {"bash", "python"}, f"{block}: only bash and python blocks run"
    markers = len(re.findall(rf"^{NOT_RUN.pattern}$", text, re.MULTILINE))
    assert markers == sum(b.not_run is not None for b in blocks(path)), f"{_id(path)}: a not-run marker is not " \
        "on the line right before a fence"


@pytest.mark.parametrize("path", DOCS, ids=_id)
def test_every_block_runs_or_parses(path: Path, tmp_path: Path) -> None:
    env, work = _environment(tmp_path), _workdir(tmp_path)
    for block in blocks(path):
        if block.language == "json":
            json.loads(block.body)
        elif block.language == "toml":
            tomllib.loads(block.body)
        elif block.language == "python" and block.not_run is not None:
            compile(block.body, str(block), "exec")
        elif block.language == "bash" and block.not_run is not None:
            done = subprocess.run(["bash", "-n"], input=block.body, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, f"{block} does not parse:\n{done.stderr}"
        elif block.language in ("bash", "python"):
            command = ["bash", "-euo", "pipefail", "-c"] if block.language == "bash" else [sys.executable, "-c"]
            done = subprocess.run([*command, block.body], cwd=work, env=env, capture_output=True, text=True,
                                  timeout=120, stdin=subprocess.DEVNULL)
            assert done.returncode == 0, (f"{block} failed (exit {done.returncode}):\n{block.body}\n"
                                          f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")


def test_the_readme_stays_short_and_links_only_to_what_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for path in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            assert linked.exists(), f"{_id(path)} links to {target}, which does not exist"
            if anchor and linked.suffix == ".md":
                assert anchor in _anchors(linked), f"{_id(path)} links to {target}: no such heading"


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    headings = re.findall(r"^#{1,6} (.+)$", FENCE.sub("", path.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_tool_call_examples_are_valid_arguments_of_their_tool() -> None:
    """A JSON example under a tool's heading in docs/tools.md is a call (checked against the tool's
    published input schema in schemas/) or an answer (it carries `errors`)."""
    tools_doc = ROOT / "docs" / "tools.md"
    headings = [(m.start(), m["tool"]) for m in re.finditer(r"^## Tool: `(?P<tool>memory_\w+)`$",
                                                            tools_doc.read_text(), re.MULTILINE)]
    offsets = [0, *(m.end() for m in re.finditer("\n", tools_doc.read_text()))]
    calls = 0
    for block in blocks(tools_doc):
        owner = [tool for start, tool in headings if start < offsets[block.line - 1]]
        example = json.loads(block.body) if block.language == "json" else None
        if not owner or not isinstance(example, dict) or "errors" in example:
            continue
        schema = json.loads((ROOT / "schemas" / f"{owner[-1]}.input.json").read_text())
        jsonschema.validate(example, schema)
        calls += 1
    assert calls >= 4


def _agent_memory_commands(script: str) -> list[list[str]]:
    """The `agent-memory ...` command lines of a shell script, as argument lists (none using a variable)."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        for word in [*lexer, ";"]:
            if word.strip("&|;()") and not word.startswith("#"):
                words.append(word)
                continue
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]  # VAR=value before the command
            redirect = [i for i, w in enumerate(words) if re.fullmatch(r"\d?[<>]{1,2}(&\d)?", w)]
            words = words[:redirect[0]] if redirect else words
            if words and words[0].endswith("agent-memory") and not any("$" in w for w in words):
                commands.append(words[1:])
            words = []
    return commands


def test_the_commands_of_blocks_that_do_not_run_exist_with_those_flags() -> None:
    parser = _parser()
    checked = 0
    for path in DOCS:
        for block in blocks(path):
            if block.language == "bash" and block.not_run is not None:
                for arguments in _agent_memory_commands(block.body):
                    try:
                        parser.parse_args(arguments)
                    except SystemExit as exc:
                        pytest.fail(f"{block}: agent-memory {shlex.join(arguments)} does not parse ({exc})")
                    checked += 1
    assert checked >= 10
