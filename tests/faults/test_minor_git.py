"""The minor git edges of issue 36: a ref that git would read as an option, hints that paste a
ref into a shell command, a shallow clone's missing history."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST, flat, perflab, start_perflab
from tests.support.git_repo import data_repo, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return data_repo(tmp_path, ("one", "two", "three"))


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--base=--output=/x", "--cmd", "cat data.txt"],
        ["run", "--cmd", "cat data.txt", "-v", "A git=--output=/x", "-v", "B git=HEAD"],
    ],
    ids=["check --base", "git= variant"],
)
def test_a_ref_that_reads_as_an_option_is_refused(
    repo: Path, tmp_path: Path, args: list[str]
) -> None:
    """a branch named `--output=/x` (no branch can be: git would read it as an option):
    status 2 saying it begins with '-' (it was 'not in this clone')"""
    done = perflab(*args, "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"),
                   *FAST, cwd=repo, timeout_s=120)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "git ref '--output=/x' begins with '-'" in flat(done.stderr)
    assert "Traceback" not in done.stderr
    assert not Path("/x").exists()


@pytest.mark.parametrize(
    ("base", "fetch"),
    [
        ("nonexist;touch${IFS}pwned", "git fetch origin 'nonexist;touch${IFS}pwned'"),
        ("feature/x", "git fetch origin feature/x"),
        ("origin/feature/x", "git fetch origin feature/x"),
    ],
    ids=["shell words", "local branch with /", "origin's branch"],
)
def test_fetch_hints_quote_the_ref(repo: Path, tmp_path: Path, base: str, fetch: str) -> None:
    """`check --base 'nonexist;touch${IFS}pwned'`: the hint's `git fetch` quotes the ref, and
    `feature/x` is not split into a remote `feature` (the hint was a command that ran `touch`)"""
    done = perflab("check", "--base", base, "--cmd", "cat data.txt", "--cache-dir",
                   str(tmp_path / "c"), *FAST, cwd=repo, timeout_s=120)  # fmt: skip
    assert done.returncode == 3, done.stderr
    text = flat(done.stderr)
    assert f"the base ref {base!r} is not in this clone" in text
    assert f"fetch it first: {fetch} (" in text
    hinted = text.split("fetch it first: ", 1)[1].split(" (", 1)[0]
    assert shlex.split(hinted)[-1] in (base, base.removeprefix("origin/"))


def test_bisect_in_a_shallow_clone_says_it_is_shallow(repo: Path, tmp_path: Path) -> None:
    """bisect GOOD BAD in a shallow clone holding both but not the history between: says the
    clone is shallow and `git fetch --unshallow` (it was 'GOOD is not an ancestor of BAD')"""
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    git(clone, "fetch", "-q", "--depth", "1", "origin", "tag", "base")
    done = perflab("bisect", "base", "main", "--cmd", "cat data.txt", "--cache-dir",
                   str(tmp_path / "c"), *FAST, cwd=clone, timeout_s=120)  # fmt: skip
    text = flat(done.stderr)
    assert done.returncode == 3, done.stderr
    assert "is a shallow clone" in text and "git fetch --unshallow" in text
    assert "not an ancestor" not in text


def test_history_with_a_postgresql_store_ignores_its_folder_for_git(
    repo: Path, tmp_path: Path
) -> None:
    """history with a PostgreSQL store leaves the repository's status clean (its index once
    made `.perflab/` without a `.gitignore`; reuse now reads the store, so no index is made)"""
    pytest.importorskip("psycopg", reason="psycopg is not installed (perflab[team])")
    from tests.support import postgres_server

    if postgres_server.binaries() is None:
        pytest.skip("PostgreSQL is not installed")
    with postgres_server.postgresql_server() as server:
        url = postgres_server.new_database(server, "history_folder")
        done = perflab("history", "base..main", "--cmd", "cat data.txt",
                       "--store", url, "--cache-dir", str(tmp_path / "c"), *FAST,
                       cwd=repo, timeout_s=600)  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert not (repo / ".perflab" / "history-index.json").exists()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize(
    "build",
    ['rm -rf "$PWD"', 'rm -rf "$PWD"; false', "rm -f .git", "rm -f .git; false"],
    ids=["folder", "folder, failing", ".git file", ".git file, failing"],
)
def test_a_build_deleting_its_worktree_leaves_no_record(
    repo: Path, tmp_path: Path, build: str
) -> None:
    """a build that deletes its own checkout (or its .git file), succeeding or failing: the
    variant fails with its reason and perflab's clone keeps no 'prunable' worktree record (the
    user's repository has none at all)"""
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", f"A git=HEAD build={shlex.quote(build)}",
        "-v", "B git=HEAD", "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"),
        "-q", *FAST, cwd=repo, timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    (clone,) = (p for p in (tmp_path / "c" / "clones").iterdir() if p.is_dir())
    listed = git(clone, "worktree", "list", "--porcelain")
    assert "prunable" not in listed, listed
    assert listed.count("worktree ") == 2  # the clone and B's checkout


def test_a_killed_checks_patch_is_private_and_removed_by_the_next_run(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL during `check` of a dirty working tree: its folder in $TMPDIR (the user's
    uncommitted diff) is private (0700), and the next run removes it; a folder of a live
    process, and a link named like one, are left alone (it stayed forever)"""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    (repo / "data.txt").write_text("uncommitted\n")
    check = start_perflab(
        "check", "--base", "base", "--cmd", "sleep 0.05; cat data.txt", "--cache-dir",
        str(tmp_path / "c"), "--store", str(tmp_path / "p.db"), "--budget", "60", cwd=repo,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(temporary.glob("perflab-check-*/working-tree.patch")):
        assert time.monotonic() < deadline and check.poll() is None, "check made no patch"
        time.sleep(0.05)
    os.killpg(check.pid, signal.SIGKILL)
    check.wait()
    (left,) = temporary.glob("perflab-check-*")
    assert stat.S_IMODE(left.stat().st_mode) == 0o700
    alive = temporary / f"perflab-check-{os.getpid()}-live"
    alive.mkdir()
    (tmp_path / "elsewhere").mkdir()
    link = temporary / "perflab-check-4194999-link"
    link.symlink_to(tmp_path / "elsewhere")
    done = perflab("run", "--stmt", "pass", "-v", "A", "-v", "B", "-q", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not left.exists()
    assert alive.is_dir() and link.is_symlink() and (tmp_path / "elsewhere").is_dir()


def test_submodules_are_checked_out_in_a_git_variants_worktree(repo: Path, tmp_path: Path) -> None:
    """a repository with a submodule: a git= variant's checkout has it checked out, as a clone
    after `git submodule update --init --recursive` has (its folder was empty, and the build
    failed with 'fix the build at that ref')"""
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "value.txt").write_text("from the submodule\n")
    git(library, "add", ".")
    git(library, "commit", "-qm", "library")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(repo, "commit", "-qm", "with the library")
    home = tmp_path / "home"  # a local submodule's clone needs file:// allowed, for the test
    home.mkdir()
    (home / ".gitconfig").write_text('[protocol "file"]\n\tallow = always\n')
    done = perflab(
        "run", "--cmd", "cat lib/value.txt", "-v", "A git=HEAD build='test -s lib/value.txt'",
        "-v", "B git=HEAD", "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"),
        "-q", *FAST, cwd=repo, timeout_s=300, env={**os.environ, "HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "prunable" not in git(repo, "worktree", "list", "--porcelain")
    pruned = perflab("cache", "prune", "--cache-dir", str(tmp_path / "c"), cwd=repo)
    assert pruned.returncode == 0, pruned.stderr
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_partial_clones_missing_blobs_are_fetched_into_perflabs_clone(
    repo: Path, tmp_path: Path
) -> None:
    """a partial clone (`--filter=blob:none`) and a git= ref whose files it never fetched: the
    checkout fetches them from its promisor remote into perflab's clone (it failed: 'unable
    to read sha1 file'), and the user's repository gains no object"""
    git(repo, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{repo}", str(partial))
    objects = git(partial, "count-objects", "-v")
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", "A git=HEAD~2", "-v", "B git=HEAD",
        "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"), "-q", *FAST,
        cwd=partial, timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(partial, "count-objects", "-v") == objects


def test_a_build_daemon_that_clears_its_environment_is_stopped_with_the_build(
    repo: Path, tmp_path: Path
) -> None:
    """a build that starts a daemon leaving its session and clearing its environment
    (`setsid -f env -i sleep 3017`): stopped when the build ends and said as the build's, not
    left into the measurement and reported as the benchmark's"""
    build = "setsid -f env -i sleep 3017; true"
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", f"A git=HEAD build={shlex.quote(build)}",
        "-v", "B git=HEAD", "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "p.db"),
        *FAST, cwd=repo, timeout_s=300,
    )  # fmt: skip
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _runs(p, b"sleep\0003017")]
    for process in left:
        os.kill(int(process.name), signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    text = flat(done.stdout + done.stderr)
    assert "left 1 process(es) running when it ended" in text
    assert "the benchmark left" not in text
    assert left == []


def _runs(process: Path, command: bytes) -> bool:
    try:
        return (process / "cmdline").read_bytes().startswith(command)
    except OSError:
        return False
