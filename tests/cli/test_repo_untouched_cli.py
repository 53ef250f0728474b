"""The user's repository stays as it was: `perflab run` with git= variants (one with a patch
applied, one built) checks them out in perflab's own clone in the cache, so the repository's
worktrees, refs, index, stash, HEAD and config are the same after the run and after
`cache prune`; an older perflab's checkout (a worktree of the user's repository) is moved
out of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab  # sys.executable -m perflab.cli.main, in cwd
from tests.support.git_repo import data_repo, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("git")), reason="needs valgrind and git"
    ),
]


def snapshot(repo: Path) -> dict[str, str]:
    """Everything of the repository a run could change."""
    return {
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "refs": git(repo, "for-each-ref", "--format=%(objectname) %(refname)"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
        "stash": git(repo, "stash", "list"),
        "head": (repo / ".git" / "HEAD").read_text(),
        "config": (repo / ".git" / "config").read_text(),
        "index": (repo / ".git" / "index").read_bytes().hex(),
        "objects": git(repo, "count-objects", "-v"),
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Three commits, a stash entry, an unstaged change and an untracked file."""
    repo = data_repo(tmp_path, ("one", "two", "three"))
    (repo / "data.txt").write_text("stashed\n")
    git(repo, "stash", "-q")
    (repo / "data.txt").write_text("uncommitted\n")
    (repo / "notes.txt").write_text("untracked\n")
    return repo


def test_runs_of_git_variants_leave_the_repository_as_it_was(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "change.patch").write_text(
        git(repo, "diff", "main~1", "main", "--", "data.txt") + "\n"
    )
    before = snapshot(repo)
    cache = tmp_path / "cache"
    argv = (
        "run", "--cmd", "cat data.txt", "--metric", "instructions",
        "-v", "A git=base", "-v", f"B git=main~1 apply={tmp_path / 'change.patch'}",
        "-v", "C git=main build='cp data.txt copy.txt'",
        "--cache-dir", str(cache), "--store", str(tmp_path / "p.db"),
    )  # fmt: skip
    done = perflab(*argv, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert snapshot(repo) == before
    assert git(repo, "worktree", "list").count("\n") == 0  # only the user's own tree
    (clone,) = (p for p in (cache / "clones").iterdir() if p.is_dir())
    assert len(git(clone, "worktree", "list").splitlines()) == 4  # the clone and 3 checkouts

    # an entry as an older perflab made it, a worktree of the user's repository: the next run
    # removes it (and git's record of it) and checks it out again in perflab's clone
    described = next(p for p in cache.iterdir() if p.suffix == ".json")
    shutil.rmtree(described.with_suffix(""))
    commit = json.loads(described.read_text())["commit"]
    git(repo, "worktree", "add", "-q", "--detach", str(described.with_suffix("")), commit)
    again = perflab(*argv, cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "made by an older perflab" in " ".join((again.stdout + again.stderr).split())
    assert snapshot(repo) == before

    pruned = perflab("cache", "prune", "--cache-dir", str(cache), cwd=repo)
    assert pruned.returncode == 0, pruned.stderr
    assert "removed 3" in pruned.stdout
    assert snapshot(repo) == before
    assert not clone.exists()  # no entry uses it any more
