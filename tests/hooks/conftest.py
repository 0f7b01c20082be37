"""What the hook tests share: a project checkout (a git root with a source folder and a remote),
and the namespace its memory lives in."""

from __future__ import annotations

from pathlib import Path

import pytest

REMOTE = "git@example.com:acme/shop-api.git"
# The project's namespace segment: its name and 8 hex of sha256("example.com/acme/shop-api") (the
# remote, spelled one way). Written out so that a change to how projects are told apart, which would
# orphan every user's project memory, fails here (tests/test_projects.py checks it too).
SHOP_API = "shop-api-19c51d42"
HOME = f"dev/{SHOP_API}"  # the hook identity's namespace in the project


def checkout(root: Path, remote: str | None = REMOTE) -> Path:
    """A git checkout at `root` (with `remote` as its origin, if any) holding a `src` folder."""
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    if remote:
        (root / ".git" / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n'
                                              '\tfetch = +refs/heads/*:refs/remotes/origin/*\n')
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return checkout(tmp_path / "shop-api")
