"""Whether a cached checkout is still what its entry records: its HEAD, its tracked files and
its build's outputs (a digest of the untracked files), so a changed entry is never measured."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from perflab.git.cache_entry import CacheEntry, CacheStatus, is_real_folder
from perflab.git.clone import clone_folder
from perflab.git.repo import run_git
from perflab.machine.proc import ProcessRunner

# changed's reason for an entry an older perflab made as a worktree of the user's repository
OLDER_CHECKOUT = "it is a worktree of your repository"


def changed(runner: ProcessRunner, root: Path, entry: CacheEntry) -> str | None:
    """What differs in the checkout from what the entry records, or None."""
    if not (entry.path / ".git").exists():
        return "its folder or its .git file was deleted"
    if outside_clone(entry.path, clone_folder(root, entry.repository)):
        return OLDER_CHECKOUT
    head = run_git(runner, entry.path, "rev-parse", "--verify", "-q", "HEAD")
    if not head.ok or head.stdout.strip() != entry.commit:
        now = head.stdout.strip()[:10] or "no commit"
        return f"its HEAD is at {now}, not at {entry.commit[:10]}"
    diff = run_git(runner, entry.path, "diff", "--no-ext-diff", "--name-only", entry.tree, "--")
    if not diff.ok:
        return "git cannot compare it with its tree: " + diff.stderr.strip()[-300:]
    files = diff.stdout.split()
    if files:
        return (
            f"tracked files differ from the tree {entry.tree[:10]}: "
            + ", ".join(files[:5])
            + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        )
    if entry.status is CacheStatus.BUILT and entry.build is not None:
        digest = outputs_digest(runner, entry.path)
        if entry.outputs_digest is None:
            return "it records no digest of its build's outputs"
        if digest != entry.outputs_digest:
            return (
                "its build's outputs changed since the build (a file was changed, "
                "truncated, added or removed)"
            )
    return None


def outputs_digest(runner: ProcessRunner, path: Path) -> str:
    """sha256 over the names and contents of the untracked files (the build's outputs)."""
    listed = run_git(runner, path, "ls-files", "-z", "--others")
    digest = hashlib.sha256()
    for name in sorted(n for n in listed.stdout.split("\0") if n):
        file = path / name
        digest.update(name.encode(errors="surrogateescape") + b"\0")
        try:
            if file.is_symlink():
                digest.update(b"link:" + os.readlink(file).encode(errors="surrogateescape"))
            else:
                with file.open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
        except OSError as error:
            digest.update(f"unreadable:{error.errno}".encode())
        digest.update(b"\0")
    return digest.hexdigest()


def outside_clone(checkout: Path, clone: Path) -> bool:
    """Whether the checkout is a worktree of another repository than perflab's clone: its
    .git file names a git folder elsewhere (an older perflab's worktree of the user's
    repository), or is gone (either). False when there is no checkout."""
    if not is_real_folder(checkout):
        return False
    try:
        text = (checkout / ".git").read_text(errors="replace")
    except OSError:
        return True
    named = text.partition("gitdir:")[2].strip()  # relative to the checkout, when relative
    gitdir = Path(os.path.realpath(os.path.join(checkout, named)))
    return not gitdir.is_relative_to(os.path.realpath(clone))
