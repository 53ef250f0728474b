"""The git operations that make and remove a cached checkout: a worktree of perflab's clone at
the base commit, the changes applied, moved to its entry's folder, its submodules checked out."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from perflab.git.cache_check import outside_clone
from perflab.git.cache_entry import Change, is_real_folder
from perflab.git.cache_lock import EntryLocks
from perflab.git.clone import CLONES, clone_folder
from perflab.git.repo import GitError, ResolvedRef, git_environment, run_git
from perflab.machine.own_files import remove_tree
from perflab.machine.proc import LaunchSpec, ProcessRunner

# git's output kept in an error: its last lines say what failed; a clone's whole progress does not
# fit an error
OUTPUT_TAIL_CHARS = 4000
# cloning submodules can fetch from their remotes
SUBMODULE_TIMEOUT_S = 600.0


def add_worktree(runner: ProcessRunner, clone: Path, scratch: Path, base: ResolvedRef) -> None:
    """Checks `base`'s commit out at `scratch` as a detached worktree of perflab's clone."""
    # the commit is the user's, read through the clone's alternates
    added = run_git(
        runner,
        clone,
        "worktree",
        "add",
        "--detach",
        "--force",
        str(scratch),
        base.commit,
    )
    if not added.ok:
        raise GitError(
            f"cannot check out {base.ref} ({base.short}) into a worktree",
            detail=(added.stdout + added.stderr).strip() or None,
            hint="git worktree add failed; see its output above",
        )


def apply_changes(
    runner: ProcessRunner, scratch: Path, base: ResolvedRef, changes: Sequence[Change]
) -> str:
    """Applies the changes in order to the checkout at `scratch`; the tree they make."""
    for change in changes:
        applied = runner.run(
            LaunchSpec(
                argv=("git", "apply", "--index", "--whitespace=nowarn", "-"),
                cwd=str(scratch),
                env=git_environment(),
            ),
            timeout_s=120.0,
            stdin_text=change.patch,
        )
        if not applied.ok:
            raise GitError(
                f"change {change.name} does not apply to {base.ref} ({base.short})",
                detail=(applied.stdout + applied.stderr).strip()[-OUTPUT_TAIL_CHARS:] or None,
                hint="rebase the change onto that base, or leave the base out",
            )
    return run_git(runner, scratch, "write-tree").stdout.strip()


def move_into_place(
    runner: ProcessRunner, root: Path, repository: str, scratch: Path, key: str, label: str
) -> Path:
    """The scratch worktree moved to the entry's own folder, `<root>/<key>`."""
    final = root / key
    # left behind without its description, or registered in git but gone (the cache
    # folder was removed): cleared, or git refuses to move a worktree there
    remove_worktree(runner, root, repository, final)
    clone = clone_folder(root, repository)
    moved = run_git(runner, clone, "worktree", "move", str(scratch), str(final))
    if not moved.ok:
        raise GitError(
            f"cannot move the worktree of {label}",
            detail=moved.stderr.strip() or None,
        )
    return final


def update_submodules(
    runner: ProcessRunner, locks: EntryLocks, scratch: Path, base: ResolvedRef, clone: Path
) -> None:
    """The submodules checked out as the commit records them, as a clone has them after
    `git submodule update --init --recursive` (a worktree starts with empty folders)."""
    if not (scratch / ".gitmodules").is_file():
        return
    # one run at a time: `submodule init` writes the clone's config, which git locks
    update = f"{CLONES}/{clone.name}-update"
    locks.hold(update, exclusive=True)
    try:
        done = run_git(
            runner,
            scratch,
            "submodule",
            "update",
            "--init",
            "--recursive",
            "--quiet",
            timeout_s=SUBMODULE_TIMEOUT_S,
        )
    finally:
        locks.release(update)
    if not done.ok:
        raise GitError(
            f"cannot check out the submodules of {base.ref} ({base.short}): git submodule "
            f"update {done.describe_failure()}",
            detail=(done.stdout + done.stderr).strip()[-OUTPUT_TAIL_CHARS:] or None,
            hint="`git submodule update --init --recursive` must work in your clone "
            "(perflab runs it in each checkout: the submodules' URLs must be reachable)",
        )


def discard_entry(
    runner: ProcessRunner, root: Path, repository: str, key: str, *, everywhere: bool = False
) -> None:
    """The cache entry `key` removed: its checkout (as `remove_worktree`), then its record."""
    remove_worktree(runner, root, repository, root / key, everywhere=everywhere)
    (root / f"{key}.json").unlink(missing_ok=True)


def remove_worktree(
    runner: ProcessRunner, root: Path, repository: str, path: Path, *, everywhere: bool = False
) -> None:
    """The checkout at `path` removed with git's record of it, in perflab's clone and, for
    an older perflab's worktree of the user's repository, there (by path). `everywhere`:
    in both, whatever its .git file says."""
    clone = clone_folder(root, repository)
    linked = os.path.islink(path)
    older = everywhere or outside_clone(path, clone)
    # the folder first: git then clears its record of a worktree whose folder is gone,
    # where it refuses one whose .git file a build deleted (leaving a 'prunable' record)
    remove_tree(path)  # a link goes as a link: what it points to is not perflab's
    if linked:
        return
    if is_real_folder(clone):
        run_git(runner, clone, "worktree", "remove", "--force", str(path))
    if older and os.path.isdir(repository):
        run_git(runner, repository, "worktree", "remove", "--force", str(path))
