"""Cached checkouts and builds (git= variants) under hostile builds and concurrency: a build
that moves its checkout or the user's refs, two runs on one cache, prune during a build, a
cached output changed on disk, a cache folder removed under git's records."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST, perflab, start_perflab
from tests.support.git_repo import data_repo, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]

# a program whose cut-off copy is a shell syntax error (so a truncated build fails, not passes)
PROGRAM = "#!/bin/sh\\nif true; then\\n  echo ok\\nfi\\n"
BUILD = f"printf '{PROGRAM}' > prog && chmod +x prog"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return data_repo(tmp_path, ("one", "two"))


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(objectname) %(refname)")


def run(repo: Path, cache: Path, build: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return perflab(
        "run", "--cmd", "./prog", "-v", f"A git=base build={build!r}",
        "-v", f"B git=main build={build!r}", "--cache-dir", str(cache),
        "--store", str(repo.parent / "perflab.db"), *FAST, *extra, cwd=repo,
    )  # fmt: skip


@pytest.mark.parametrize(
    "move",
    ["git checkout -q -b evil base", "git checkout -q base", "echo changed > data.txt"],
    ids=["new branch", "detached checkout", "tracked file"],
)
def test_a_build_that_moves_its_checkout_fails_and_leaves_the_refs_alone(
    repo: Path, tmp_path: Path, move: str
) -> None:
    """A build that checks out another commit, makes a branch or edits a tracked file: that
    variant fails saying its checkout moved (not measured under the commit asked for), and
    the user's repository keeps exactly its refs (no branch appears)."""
    before = refs(repo)
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", "A git=base",
        "-v", f"B git=main build={move + ' && true'!r}", "--cache-dir", str(tmp_path / "c"),
        "--store", str(tmp_path / "p.db"), *FAST, cwd=repo,
    )  # fmt: skip
    assert done.returncode != 0
    text = " ".join(done.stderr.split())
    assert "changed what it was asked to build" in text, done.stderr
    assert "is not measured" in text
    assert refs(repo) == before
    assert "evil" not in git(repo, "branch", "--list")


def test_two_runs_on_one_cache_build_once(repo: Path, tmp_path: Path) -> None:
    """Two perflab runs started at once on one cache folder: each entry is built once (the
    second run waits for the first's build and reuses it), never twice in one place at once."""
    log = tmp_path / "builds.log"
    build = f"echo start >> {log} && sleep 1 && echo end >> {log} && {BUILD}"
    cache = tmp_path / "c"
    argv = (
        "run", "--cmd", "./prog", "-v", f"A git=base build={build!r}",
        "-v", f"B git=main build={build!r}", "--cache-dir", str(cache), *FAST,
    )  # fmt: skip
    first = start_perflab(*argv, "--store", str(tmp_path / "1.db"), cwd=repo,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    second = start_perflab(*argv, "--store", str(tmp_path / "2.db"), cwd=repo,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    for process in (first, second):
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    # two entries (base, main), each built once, one build at a time per entry
    assert log.read_text().split() == ["start", "end", "start", "end"]


def test_prune_skips_an_entry_a_run_is_building(repo: Path, tmp_path: Path) -> None:
    """`perflab cache prune` while a run builds in a cached checkout: the checkout in use is
    left (and said), the run finishes normally."""
    started = tmp_path / "started"
    build = f"touch {started} && sleep 2 && {BUILD}"
    cache = tmp_path / "c"
    process = start_perflab(
        "run", "--cmd", "./prog", "-v", f"A git=base build={build!r}",
        "-v", f"B git=main build={build!r}", "--cache-dir", str(cache),
        "--store", str(tmp_path / "p.db"), *FAST,
        cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    pruned = perflab("cache", "prune", "--cache-dir", str(cache), cwd=repo)
    _, err = process.communicate(timeout=300)
    assert pruned.returncode == 0, pruned.stderr
    assert "in use by a running perflab run" in " ".join(pruned.stdout.split())
    assert process.returncode == 0, err
    assert "getcwd" not in err


def test_a_truncated_cached_build_output_is_rebuilt(repo: Path, tmp_path: Path) -> None:
    """A cached program cut in half on disk after its build: the next run finds the entry
    changed, says so, checks it out and builds it again, and measures (not 'built' forever)."""
    cache = tmp_path / "c"
    assert run(repo, cache, BUILD).returncode == 0
    programs = sorted(cache.glob("*/prog"))
    assert len(programs) == 2
    for program in programs:
        program.write_bytes(program.read_bytes()[:20])
    again = run(repo, cache, BUILD)
    assert again.returncode == 0, again.stderr
    assert "changed since it was built" in " ".join((again.stdout + again.stderr).split())
    assert all(p.read_text().endswith("fi\n") for p in programs)


def test_a_removed_cache_folder_is_built_again(repo: Path, tmp_path: Path) -> None:
    """The cache folder removed by hand (git still lists its worktrees): the next run checks
    out and builds again rather than failing with 'missing but already registered worktree'."""
    cache = tmp_path / "c"
    assert run(repo, cache, BUILD).returncode == 0
    shutil.rmtree(cache)
    again = run(repo, cache, BUILD)
    assert again.returncode == 0, again.stderr
    assert "registered worktree" not in again.stderr


def test_a_shallow_clone_says_the_history_is_missing(repo: Path, tmp_path: Path) -> None:
    """a ref older than a shallow clone's history: the error says the clone is shallow and
    how to fetch the history (not only 'ref does not exist')"""
    first = git(repo, "rev-parse", "base")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
                   check=True, capture_output=True)  # fmt: skip
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", f"A git={first}", "-v", "B git=HEAD",
        "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"), *FAST,
        cwd=clone,
    )  # fmt: skip
    assert done.returncode != 0
    text = " ".join(done.stderr.split())
    assert "a shallow clone" in text and "git fetch --unshallow" in text, done.stderr


def test_a_bare_repository_is_named_so(repo: Path, tmp_path: Path) -> None:
    """perflab run with git= variants inside a bare repository: it says the repository is
    bare and to run in a clone (not 'is not inside a git repository'), status 2"""
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)],
                   check=True, capture_output=True)  # fmt: skip
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", "A git=base", "-v", "B git=main",
        "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"), *FAST, cwd=bare,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "is a bare git repository" in " ".join(done.stderr.split())
