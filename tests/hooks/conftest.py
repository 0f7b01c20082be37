"""What the hook tests share: a project checkout (a git root with a source folder)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    return root
