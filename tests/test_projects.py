"""Which project a directory is (`agent_memory.projects`): the git remote, spelled one way, else the
root's path; a configured name as given; and the older directory-name namespace, claimed once."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agent_memory.projects import Project, claim, identify, normal_remote
from tests.hooks.conftest import SHOP_API, checkout


def test_the_segment_of_a_checkout_is_its_repository_name_and_its_remote_hashed(tmp_path: Path) -> None:
    found = identify(checkout(tmp_path / "shop-api") / "src")
    assert found == Project(SHOP_API, legacy="shop-api", origin="remote")


@pytest.mark.parametrize("spelling", [
    "git@example.com:acme/shop-api.git", "https://example.com/acme/shop-api", "https://bob@Example.com/acme/shop-api.git/",
    "ssh://git@example.com/acme/shop-api.git", "ssh://git@example.com:22/acme/shop-api", "git://example.com/acme/shop-api/",
])
def test_every_way_of_writing_the_remote_is_one_project(spelling: str) -> None:
    assert normal_remote(spelling) == "example.com/acme/shop-api"


def test_a_renamed_checkout_and_a_second_checkout_of_the_same_repository_are_the_same_project(tmp_path: Path) -> None:
    first = checkout(tmp_path / "shop-api")
    second = checkout(tmp_path / "elsewhere" / "shop-api-copy", remote="https://example.com/acme/shop-api.git")
    renamed = first.rename(tmp_path / "shop")
    assert identify(renamed).segment == identify(second).segment == SHOP_API


def test_two_repositories_with_the_same_directory_name_are_two_projects(tmp_path: Path) -> None:
    mine = checkout(tmp_path / "a" / "api", remote="git@example.com:acme/api.git")
    theirs = checkout(tmp_path / "b" / "api", remote="git@example.com:other/api.git")
    local_one, local_two = checkout(tmp_path / "c" / "api", remote=None), checkout(tmp_path / "d" / "api", remote=None)
    segments = {identify(p).segment for p in (mine, theirs, local_one, local_two)}
    assert len(segments) == 4 and all(s.startswith("api-") for s in segments)
    assert identify(local_one).origin == "path"


def test_a_worktree_reads_the_remote_of_its_repository(tmp_path: Path) -> None:
    main = checkout(tmp_path / "shop-api")
    linked = tmp_path / "feature"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    (main / ".git" / "worktrees" / "feature" / "commondir").write_text("../..\n")
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    assert identify(linked).segment == SHOP_API


def test_a_configured_name_is_used_as_given_and_the_older_spellings_stay_possible(tmp_path: Path) -> None:
    root = checkout(tmp_path / "shop-api")
    assert identify(root, "billing service").segment == "billing-service"
    assert identify(root, "auto").segment == SHOP_API
    assert identify(root, identity="name") == Project("shop-api", origin="name")
    assert identify(root, identity="path").segment != SHOP_API and identify(root, identity="path").origin == "path"


def test_an_unreadable_git_config_falls_back_to_the_path(tmp_path: Path) -> None:
    root = checkout(tmp_path / "shop-api", remote=None)
    (root / ".git" / "config").write_bytes(b"[remote \"origin\"\n\turl = \xff\xfe broken")
    assert identify(root).origin == "path"


def test_the_older_namespace_goes_to_the_first_project_that_claims_it(tmp_path: Path) -> None:
    claims = tmp_path / "claims"
    first = identify(checkout(tmp_path / "a" / "api", remote="git@example.com:acme/api.git"))
    second = identify(checkout(tmp_path / "b" / "api", remote="git@example.com:other/api.git"))
    assert claim(claims, first).legacy == "api"
    assert claim(claims, second).legacy == ""  # another repository named alike does not read it
    assert claim(claims, first).legacy == "api"  # and the first keeps it
    assert (claims / "api").read_text() == first.segment and oct((claims / "api").stat().st_mode & 0o777) == "0o600"


def test_checkouts_claiming_at_once_leave_one_holder(tmp_path: Path) -> None:
    claims = tmp_path / "claims"
    projects = [Project(f"api-{n:08x}", legacy="api", origin="path") for n in range(8)]
    with ThreadPoolExecutor(8) as pool:
        held = list(pool.map(lambda p: claim(claims, p).legacy, projects))
    assert held.count("api") == 1 and os.listdir(claims) == ["api"]
