"""Which project a host works in, as the namespace segment its memory lives under
(`<agent_id>/<project>`, `<team>/<project>`): the same answer for the hook helper and for the MCP
server the host launched, so what the model writes and what the hooks recall meet.

A project is a git repository: its identity is its remote (`origin`, else the first remote), so it
survives a rename, a move and a second checkout of the same repository, while two repositories
that happen to share a directory name stay apart. Without a remote it is the root's path. The
segment is readable and unique: `<name>-<8 hex of the identity>`.

Until now a project was its git root's directory name alone. That older segment is read (never
written) by the first project that claims it on this machine, so memory saved before the upgrade
is still recalled there and nowhere else (`claim`).
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

IDENTITIES = ("remote", "path", "name")  # remote: the git remote, else the root's path
AUTO = "auto"
_SEGMENT = re.compile(r"[^A-Za-z0-9._-]+")
_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@host:org/repo
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?", re.IGNORECASE)
MAX_NAME = 64


@dataclass(frozen=True, slots=True)
class Project:
    segment: str  # the namespace segment this project writes under
    legacy: str = ""  # the older segment (the root's directory name) this project also reads, when it claimed it
    origin: str = ""  # what the identity was taken from: configured, remote, path or name


def slug(name: str) -> str:
    """`name` as a namespace segment: letters, digits and `._-`."""
    return _SEGMENT.sub("-", name).strip("-.")[:MAX_NAME] or "project"


def git_root(directory: str | Path) -> Path:
    """The git root at or above `directory` (else `directory` itself), resolved."""
    path = Path(directory or ".").expanduser().resolve()
    return next((p for p in (path, *path.parents) if (p / ".git").exists()), path)


def _git_dir(root: Path) -> Path | None:
    """The repository's own directory: `.git`, or where a worktree's or submodule's `.git` file points
    (a linked worktree's remotes are in the common directory it names)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        line = dot_git.read_text(errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    found = (root / line[7:].strip()).resolve()
    try:
        common = (found / "commondir").read_text().strip()
        return (found / common).resolve()
    except OSError:
        return found


def remote_url(root: Path) -> str:
    """The repository's `origin` URL, else its first remote's; empty when it has none."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return ""
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(git_dir / "config", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return ""
    remotes = [s for s in parser.sections() if s.startswith('remote "')]
    remotes.sort(key=lambda s: s != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="").strip()
        if url:
            return url
    return ""


def normal_remote(url: str) -> str:
    """One spelling for the ways a remote is written: `git@github.com:org/repo.git`,
    `https://user@github.com/org/repo` and `ssh://git@github.com/org/repo/` are all `github.com/org/repo`."""
    text = url.strip()
    if not _SCHEME.match(text) and (found := _SCP.match(text)) and not text.startswith("/"):
        text = f"{found.group(1)}/{found.group(2)}"
    text = _SCHEME.sub("", text).rstrip("/")
    text = text.removesuffix(".git").rstrip("/")
    host, _, rest = text.partition("/")
    return f"{host.lower().split(':')[0]}/{rest}" if rest else host.lower()


def _hashed(name: str, identity: str) -> str:
    return f"{slug(name)[:MAX_NAME - 9]}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"


def identify(directory: str | Path, configured: str = "", identity: str = "remote") -> Project:
    """The project `directory` belongs to. `configured`: a name the user chose (used as is);
    `identity`: remote (the git remote, else the root's path), path, or name (the root's directory
    name alone, as before)."""
    if configured and configured != AUTO:
        return Project(slug(configured), origin="configured")
    root = git_root(directory)
    name = root.name or "root"
    if identity == "name":
        return Project(slug(name), origin="name")
    url = remote_url(root) if identity == "remote" else ""
    if url:
        remote = normal_remote(url)
        return Project(_hashed(remote.rsplit("/", 1)[-1] or name, remote), legacy=slug(name), origin="remote")
    return Project(_hashed(name, str(root)), legacy=slug(name), origin="path")


def claim(claims: Path, project: Project) -> Project:
    """`project`, reading its older segment only when this project is the one that holds it on this
    machine: the first project to ask for an older segment holds it for good (one small file each
    under `claims`, created exclusively, so two checkouts asking at once cannot both win)."""
    if not project.legacy:
        return project
    record = claims / project.legacy
    try:
        claims.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            holder = record.read_text(errors="replace").strip()
        else:
            with os.fdopen(fd, "w") as out:
                out.write(project.segment)
            holder = project.segment
    except OSError:
        holder = ""
    return project if holder == project.segment else Project(project.segment, origin=project.origin)


def host_directory(env: dict[str, str] | os._Environ[str], cwd: str) -> str:
    """The project directory a host names (Claude Code's and Gemini CLI's variables), else `cwd`."""
    return str(env.get("CLAUDE_PROJECT_DIR") or env.get("GEMINI_PROJECT_DIR") or cwd)
