"""The git operations that make and remove a cached checkout (git/cache_worktree.py): what each
asks git, and the error a failure becomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.git.cache_entry import Change
from perflab.git.cache_lock import EntryLocks
from perflab.git.cache_worktree import (
    add_worktree,
    apply_changes,
    remove_worktree,
    update_submodules,
)
from perflab.git.clone import clone_folder
from perflab.git.repo import GitError, ResolvedRef
from perflab.machine.fake_processes import FakeRunner

BASE = ResolvedRef("v1.0", "c" * 40, "e" * 40)
PATCH = Change("fix", "f" * 40, "commit", "diff --git a/x b/x\n")


def argv(runner: FakeRunner) -> list[tuple[str, ...]]:
    return [spec.argv for spec, _ in runner.calls]


def test_a_worktree_is_added_detached_at_the_commit(tmp_path: Path) -> None:
    runner = FakeRunner().on_run(r"^git worktree add")
    add_worktree(runner, tmp_path / "clone", tmp_path / "tmp-1", BASE)
    assert argv(runner) == [
        ("git", "worktree", "add", "--detach", "--force", str(tmp_path / "tmp-1"), BASE.commit)
    ]
    failing = FakeRunner().on_run(r"^git worktree add", returncode=128, stderr="fatal: no")
    with pytest.raises(GitError, match=r"cannot check out v1.0 \(cccccccccc\)") as raised:
        add_worktree(failing, tmp_path / "clone", tmp_path / "tmp-1", BASE)
    assert raised.value.detail == "fatal: no"


def test_changes_are_applied_in_order_and_their_tree_returned(tmp_path: Path) -> None:
    runner = FakeRunner().on_run(r"^git apply").on_run(r"^git write-tree", stdout="a" * 40 + "\n")
    second = Change("more", "p.diff", "patch", "diff --git a/y b/y\n")
    assert apply_changes(runner, tmp_path, BASE, [PATCH, second]) == "a" * 40
    stdin = [text for spec, text in runner.calls if spec.argv[1] == "apply"]
    assert stdin == [PATCH.patch, second.patch]


def test_a_change_that_does_not_apply_is_named_with_a_hint(tmp_path: Path) -> None:
    runner = FakeRunner().on_run(r"^git apply", returncode=1, stderr="error: patch failed")
    with pytest.raises(GitError, match=r"change fix does not apply to v1.0") as raised:
        apply_changes(runner, tmp_path, BASE, [PATCH])
    assert raised.value.detail == "error: patch failed" and "rebase" in (raised.value.hint or "")
    assert not any(spec.argv[1] == "write-tree" for spec, _ in runner.calls)


def test_submodules_are_checked_out_only_where_the_commit_has_them(tmp_path: Path) -> None:
    (tmp_path / "cache" / "clones").mkdir(parents=True)  # where the clone and its locks are
    locks = EntryLocks(tmp_path / "cache", wait_s=0.0)
    runner = FakeRunner()
    update_submodules(runner, locks, tmp_path, BASE, tmp_path / "clone")
    assert runner.calls == []  # no .gitmodules: git is not asked
    (tmp_path / ".gitmodules").write_text("")
    runner.on_run(r"^git submodule update --init --recursive --quiet$")
    update_submodules(runner, locks, tmp_path, BASE, tmp_path / "clone")
    assert len(runner.calls) == 1
    failing = FakeRunner().on_run(r"^git submodule", returncode=1, stderr="cannot fetch")
    with pytest.raises(GitError, match="cannot check out the submodules of v1.0") as raised:
        update_submodules(failing, locks, tmp_path, BASE, tmp_path / "clone")
    assert raised.value.detail == "cannot fetch"
    # the clone's config lock is let go whatever happened
    assert EntryLocks(tmp_path / "cache").hold("clones/clone-update", exclusive=True, wait=False)


def test_a_checkout_is_removed_with_gits_record_of_it_in_the_clone(tmp_path: Path) -> None:
    repository = str(tmp_path / "repo")
    clone = clone_folder(tmp_path, repository)
    clone.mkdir(parents=True)
    checkout = tmp_path / "0123456789abcdef0123"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {clone}/worktrees/x\n")
    runner = FakeRunner().on_run(r"^git worktree remove --force")
    remove_worktree(runner, tmp_path, repository, checkout)
    assert not checkout.exists()
    assert [(spec.cwd, spec.argv[-1]) for spec, _ in runner.calls] == [(str(clone), str(checkout))]


def test_an_older_perflabs_checkout_is_removed_from_the_users_repository_too(
    tmp_path: Path,
) -> None:
    repository = tmp_path / "repo"
    repository.mkdir()
    checkout = tmp_path / "0123456789abcdef0123"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {repository}/.git/worktrees/x\n")
    runner = FakeRunner().on_run(r"^git worktree remove --force")
    remove_worktree(runner, tmp_path, str(repository), checkout)
    # perflab's clone does not exist: only the user's repository is asked
    assert [spec.cwd for spec, _ in runner.calls] == [str(repository)]


def test_a_link_where_a_checkout_was_goes_as_a_link_and_git_is_not_asked(tmp_path: Path) -> None:
    target = tmp_path / "users-folder"
    target.mkdir()
    (target / "keep").write_text("mine")
    link = tmp_path / "0123456789abcdef0123"
    link.symlink_to(target)
    runner = FakeRunner()
    remove_worktree(runner, tmp_path, str(tmp_path / "repo"), link)
    assert not link.exists() and (target / "keep").read_text() == "mine"
    assert runner.calls == []
