"""Folder imports (markdown, basic-memory) of a folder someone else wrote: nothing outside the
folder is read through a link, an oversized file or a YAML alias bomb is one bad item (not a
hang or a crash), bad encodings are reported by file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_memory.importers import read_folder
from agent_memory.importers.drafts import Bad, Draft
from agent_memory.importers.markdown import MAX_FILE_BYTES

FORMATS = ("markdown", "basic-memory")


def read(fmt: str, root: Path, max_chars: int = 2000) -> tuple[dict[str, str], dict[str, str]]:
    items = list(read_folder(fmt, root, max_chars))
    return ({i.where: i.content for i in items if isinstance(i, Draft)},
            {i.where: i.why for i in items if isinstance(i, Bad)})


@pytest.mark.parametrize("fmt", FORMATS)
def test_links_leading_outside_the_folder_are_not_followed(tmp_path: Path, fmt: str) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.md").write_text("# secret\n\nthe private key\n")
    (outside / "deep" / "more.md").write_text("# more\n\nanother secret\n")
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "ok.md").write_text("# ok\n\nfine\n")
    (root / "sub" / "inner.md").write_text("# inner\n\nalso fine\n")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "passwd.md").symlink_to("/etc/passwd")
    (root / "dir-link").symlink_to(outside)
    (root / "loop").symlink_to(root)
    (root / "inside-link.md").symlink_to(root / "ok.md")
    drafts, bad = read(fmt, root)
    assert sorted(drafts) == ["ok.md", "sub/inner.md"]
    assert not any("secret" in text or "root:" in text for text in drafts.values())
    assert set(bad) == {"leak.md", "passwd.md", "inside-link.md"}
    assert all("link" in why for why in bad.values())


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_giant_file_is_one_bad_item_and_is_not_read(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "ok.md").write_text("# ok\n\nfine\n")
    with (root / "giant.md").open("wb") as out:  # sparse: nothing is written but its size
        out.truncate(MAX_FILE_BYTES + 1)
    drafts, bad = read(fmt, root)
    assert list(drafts) == ["ok.md"]
    assert "larger than" in bad["giant.md"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_encodings_and_yaml_alias_bombs_are_reported_by_file(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "latin1.md").write_bytes("# caf\xe9\n".encode("latin-1"))
    (root / "bom.md").write_bytes(b"\xef\xbb\xbf---\ntitle: With BOM\n---\nbody text\n")
    (root / "nul.md").write_bytes(b"# nul\n\nbefore\x00after\n")
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8)]
    bomb = "---\n" + "\n".join(levels) + "\ntitle: *i\ndate: *i\ntags: *i\npermalink: *i\ntype: *i\n---\nbody\n"
    (root / "bomb.md").write_text(bomb)
    started = time.monotonic()
    drafts, bad = read(fmt, root)
    assert time.monotonic() - started < 5
    assert "UTF-8" in bad["latin1.md"]
    assert "alias" in bad["bomb.md"]
    assert drafts["bom.md"].startswith("# With BOM")
    assert "\x00" not in "".join(drafts.values())
    assert "NUL" in bad["nul.md"]


def test_a_fifo_named_like_a_note_does_not_hang_the_import(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "ok.md").write_text("# ok\n\nfine\n")
    os.mkfifo(root / "pipe.md")
    drafts, _ = read("markdown", root)
    assert list(drafts) == ["ok.md"]
