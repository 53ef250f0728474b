"""Whether a cached checkout is still what its entry records (git/cache_check.py): `changed`'s
reason for each difference, the digest of the build's outputs, and what counts as a worktree of
another repository than perflab's clone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perflab.git.cache_check import OLDER_CHECKOUT, changed, outputs_digest, outside_clone
from perflab.git.cache_entry import CacheEntry, CacheStatus
from perflab.git.clone import clone_folder
from perflab.machine.fake_processes import FakeRunner

COMMIT = "c" * 40
TREE = "e" * 40
REPOSITORY = "/repo"


def checkout(root: Path, *, gitdir: Path | None = None) -> Path:
    """A checkout folder of the cache at `root` whose .git names `gitdir` (perflab's clone's
    worktrees by default)."""
    path = root / "0123456789abcdef0123"
    path.mkdir(parents=True)
    clone = clone_folder(root, REPOSITORY)
    (path / ".git").write_text(f"gitdir: {gitdir or clone / 'worktrees' / path.name}\n")
    return path


def entry(path: Path, **fields: object) -> CacheEntry:
    recorded: dict[str, object] = {
        "key": path.name,
        "path": path,
        "repository": REPOSITORY,
        "ref": "main",
        "commit": COMMIT,
        "tree": TREE,
        "build": None,
        "status": CacheStatus.CHECKED_OUT,
    }
    return CacheEntry(**{**recorded, **fields})  # type: ignore[arg-type]


def git(
    *, head: str = COMMIT, diff: str = "", diff_status: int = 0, untracked: str = ""
) -> FakeRunner:
    return (
        FakeRunner()
        .on_run(
            r"^git rev-parse --verify -q HEAD$", stdout=head + "\n", returncode=0 if head else 1
        )
        .on_run(r"^git diff ", stdout=diff, stderr="fatal: bad tree", returncode=diff_status)
        .on_run(r"^git ls-files -z --others$", stdout=untracked)
    )


def test_a_checkout_as_recorded_has_not_changed(tmp_path: Path) -> None:
    path = checkout(tmp_path)
    runner = git()
    assert changed(runner, tmp_path, entry(path)) is None
    diff = next(spec.argv for spec, _ in runner.calls if spec.argv[1] == "diff")
    assert diff == ("git", "diff", "--no-ext-diff", "--name-only", TREE, "--")


def test_a_deleted_folder_or_git_file_has_changed(tmp_path: Path) -> None:
    path = checkout(tmp_path)
    (path / ".git").unlink()
    assert changed(git(), tmp_path, entry(path)) == "its folder or its .git file was deleted"
    assert changed(git(), tmp_path, entry(tmp_path / "gone")) is not None


def test_a_worktree_of_the_users_repository_is_an_older_perflabs(tmp_path: Path) -> None:
    path = checkout(tmp_path, gitdir=Path(REPOSITORY) / ".git" / "worktrees" / "x")
    runner = git()
    assert changed(runner, tmp_path, entry(path)) == OLDER_CHECKOUT
    assert runner.calls == []  # decided before asking git anything


@pytest.mark.parametrize(("head", "said"), [("d" * 40, "dddddddddd"), ("", "no commit")])
def test_a_checkout_at_another_head_has_changed(tmp_path: Path, head: str, said: str) -> None:
    reason = changed(git(head=head), tmp_path, entry(checkout(tmp_path)))
    assert reason == f"its HEAD is at {said}, not at {COMMIT[:10]}"


def test_tracked_files_that_differ_are_named_five_at_most(tmp_path: Path) -> None:
    files = "".join(f"src/f{i}.c\n" for i in range(7))
    reason = changed(git(diff=files), tmp_path, entry(checkout(tmp_path)))
    assert reason is not None and reason.startswith(
        f"tracked files differ from the tree {TREE[:10]}"
    )
    assert reason.endswith("src/f0.c, src/f1.c, src/f2.c, src/f3.c, src/f4.c and 2 more")


def test_a_tree_git_cannot_compare_with_is_a_change(tmp_path: Path) -> None:
    reason = changed(git(diff_status=128), tmp_path, entry(checkout(tmp_path)))
    assert reason == "git cannot compare it with its tree: fatal: bad tree"


def test_a_built_entry_is_checked_against_the_digest_of_its_outputs(tmp_path: Path) -> None:
    path = checkout(tmp_path)
    (path / "out.so").write_text("built")
    runner = git(untracked="out.so\0")
    built = entry(path, build="make", status=CacheStatus.BUILT)
    recorded = entry(
        path, build="make", status=CacheStatus.BUILT, outputs_digest=outputs_digest(runner, path)
    )
    assert changed(runner, tmp_path, recorded) is None
    assert changed(runner, tmp_path, built) == "it records no digest of its build's outputs"
    (path / "out.so").write_text("built again")
    assert "outputs changed since the build" in (changed(runner, tmp_path, recorded) or "")
    # not built yet (or failed), or with nothing to build: no outputs to check
    for unbuilt in (
        entry(path, build="make"),
        entry(path, build="make", status=CacheStatus.FAILED),
    ):
        assert changed(runner, tmp_path, unbuilt) is None


def test_the_outputs_digest_covers_names_contents_and_link_targets(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("one")
    (tmp_path / "b").write_text("two")
    os.symlink("a", tmp_path / "link")
    runner = FakeRunner().on_run(r"^git ls-files", stdout="b\0a\0link\0")
    first = outputs_digest(runner, tmp_path)
    assert outputs_digest(runner, tmp_path) == first  # the listing's order does not matter
    (tmp_path / "b").write_text("tw0")
    changed_content = outputs_digest(runner, tmp_path)
    (tmp_path / "link").unlink()
    os.symlink("b", tmp_path / "link")
    changed_link = outputs_digest(runner, tmp_path)
    renamed = FakeRunner().on_run(r"^git ls-files", stdout="b\0a2\0link\0")
    (tmp_path / "a").rename(tmp_path / "a2")
    changed_name = outputs_digest(renamed, tmp_path)
    assert len({first, changed_content, changed_link, changed_name}) == 4


def test_an_output_that_cannot_be_read_is_part_of_the_digest_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "gone").mkdir()  # listed, but a folder: reading it fails
    runner = FakeRunner().on_run(r"^git ls-files", stdout="gone\0")
    assert outputs_digest(runner, tmp_path) != outputs_digest(
        FakeRunner().on_run("", stdout=""), tmp_path
    )


def test_outside_clone(tmp_path: Path) -> None:
    clone = clone_folder(tmp_path, REPOSITORY)
    assert not outside_clone(tmp_path / "none", clone)  # no checkout: nothing outside
    inside = checkout(tmp_path)
    assert not outside_clone(inside, clone)
    relative = f"gitdir: ../clones/{clone.name}/worktrees/y\n"  # relative to the checkout
    (inside / ".git").write_text(relative)
    assert not outside_clone(inside, clone)
    (inside / ".git").write_text("gitdir: /elsewhere/.git/worktrees/y\n")
    assert outside_clone(inside, clone)
    (inside / ".git").unlink()
    assert outside_clone(inside, clone)
