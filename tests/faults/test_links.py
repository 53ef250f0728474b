"""No write follows a link perflab did not make: reports, exports and the history index are
written to a temporary file beside the target and renamed over it; a target that is a link, or
another user's file in a sticky folder (`/tmp`), is refused and left as it was."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from perflab.store.sqlite_file import _copy_with_wal
from perflab.store.sqlite_watch import _recovery_path
from tests.support.cli_commands import FAST, perflab
from tests.support.git_repo import commit, git

pytestmark = pytest.mark.integration

REPORTS = ("--json", "--markdown", "--html", "--export-csv", "--export-hyperfine-json")
SECRET = "only the owner may read this\n"


def _run(cwd: Path, *extra: str) -> list[str]:
    return ["run", "--cmd", "true", "-q", *FAST, "--store", str(cwd / "p.db"), *extra]


@pytest.mark.parametrize("option", REPORTS)
def test_a_report_path_that_is_a_planted_link_is_refused_and_its_target_unchanged(
    tmp_path: Path, option: str
) -> None:
    """a report or export (--json, --markdown, --html, --export-csv, --export-hyperfine-json)
    to a path where a symbolic link to another file was planted: refused before measuring
    (status 2, "symbolic link"), the link's target byte for byte unchanged"""
    target = tmp_path / "private"
    target.write_text(SECRET)
    target.chmod(0o600)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "r.out"
    link.symlink_to(target)
    done = perflab(*_run(tmp_path, option, str(link)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert target.read_text() == SECRET
    assert link.is_symlink()
    assert not (tmp_path / "p.db").exists()  # refused before measuring


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_another_users_file_in_a_sticky_folder_is_not_replaced(tmp_path: Path) -> None:
    """--export-csv to a file another user owns in a sticky (1777) folder: refused (status 2,
    "another user"), the file unchanged"""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    theirs = shared / "r.csv"
    theirs.write_text(SECRET)
    os.chown(theirs, 65534, 65534)
    done = perflab(*_run(tmp_path, "--export-csv", str(theirs)), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "another user" in done.stderr and "Traceback" not in done.stderr
    assert theirs.read_text() == SECRET and theirs.stat().st_uid == 65534


def test_reports_are_written_whole_with_a_plain_files_mode(tmp_path: Path) -> None:
    """a report to a new path, over an old report of one's own, and to /dev/null: written
    (status 0), with the mode a new file gets (umask), no temporary left beside it"""
    old = tmp_path / "r.json"
    old.write_text("old\n")
    done = perflab(
        *_run(tmp_path, "--json", str(old), "--export-csv", str(tmp_path / "r.csv")),
        "--markdown", "/dev/null", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert old.read_text().startswith("{")
    assert stat.S_IMODE((tmp_path / "r.csv").stat().st_mode) == 0o666 & ~_umask()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_planted_history_index_tmp_link_is_never_written_through(tmp_path: Path) -> None:
    """a symbolic link `history-index.tmp` planted beside the store (a shared folder): history
    never opens it (reuse reads the store; no index file is kept); its target stays unchanged,
    run after run"""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "one", {"a.txt": "1\n"})
    commit(repo, "two", {"a.txt": "2\n"})
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    target = tmp_path / "private"
    target.write_text(SECRET)
    (shared / "history-index.tmp").symlink_to(target)
    for _ in range(2):
        done = perflab(
            "history", "main~1..main", "--cmd", "true", "-q", *FAST,
            "--store", str(shared / "p.db"), cwd=repo,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert target.read_text() == SECRET
    assert not (shared / "history-index.json").exists()
    assert (shared / "history-index.tmp").is_symlink()


def test_a_dangling_link_planted_as_the_stores_gitignore_is_not_followed(tmp_path: Path) -> None:
    """a dangling symbolic link planted as `.perflab/.gitignore`: the run writes its store and
    creates nothing through the link (the file it points to still does not exist)"""
    folder = tmp_path / ".perflab"
    folder.mkdir()
    planted = tmp_path / "made-through-the-link"
    (folder / ".gitignore").symlink_to(planted)
    done = perflab("run", "--cmd", "true", "-q", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (folder / "perflab.db").is_file()
    assert not planted.exists() and (folder / ".gitignore").is_symlink()


def test_a_report_to_a_pipe_nobody_reads_is_refused_at_once(tmp_path: Path) -> None:
    """--markdown to a FIFO planted in a shared folder with no reader: refused (status 2,
    "nobody is reading"), where writing to it waited forever"""
    fifo = tmp_path / "r.md"
    os.mkfifo(fifo)
    done = perflab(*_run(tmp_path, "--markdown", str(fifo)), cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    assert "nobody is reading" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("command", "suffix"),
    [("run", "-wal"), ("run", "-journal"), ("run", "-shm"), ("list", "-shm")],
    ids=lambda value: value.strip("-"),
)
def test_a_link_planted_where_sqlite_keeps_its_journal_is_refused(
    tmp_path: Path, command: str, suffix: str
) -> None:
    """a symbolic link planted beside a store (a shared folder) under the name of its WAL,
    rollback journal or shared memory, for a run on a new store or a listing of an existing
    one: refused (status 2) naming the link; the link's target unchanged"""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    store = shared / "p.db"
    if command == "list":
        assert perflab(*_run(shared), cwd=tmp_path).returncode == 0
    target = tmp_path / "private"
    target.write_text(SECRET)
    (shared / f"p.db{suffix}").symlink_to(target)
    args = _run(shared) if command == "run" else ["list", "--store", str(store)]
    done = perflab(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"p.db{suffix}" in done.stderr and "symbolic link" in done.stderr
    assert "Traceback" not in done.stderr
    assert target.read_text() == SECRET and (shared / f"p.db{suffix}").is_symlink()


def test_a_recovery_file_is_created_exclusively_never_through_a_planted_name(
    tmp_path: Path,
) -> None:
    """the file a lost store's runs are saved to, where a dangling link was planted under its
    first name: the next name is taken, made at once as a new file of perflab's (so a link
    planted between the choice and the save is never followed); the link's target not made"""
    planted = tmp_path / "made-through-the-link"
    (tmp_path / "perflab-recovered-run7.db").symlink_to(planted)
    chosen = _recovery_path(tmp_path / "p.db", 7)
    assert chosen == tmp_path / "perflab-recovered-run7-2.db"
    found = os.lstat(chosen)
    assert stat.S_ISREG(found.st_mode) and found.st_size == 0
    assert not planted.exists()


def test_a_stores_read_only_copy_is_a_private_folder_the_next_run_sweeps(tmp_path: Path) -> None:
    """the copy of a store and its WAL made to read it on a read-only filesystem: in a private
    (0700) `perflab-store-copy-PID-*` folder, which the next run removes when a reader killed
    while reading left it (a copy of the user's runs stayed in the temporary directory)"""
    store = tmp_path / "p.db"
    store.write_bytes(b"runs")
    Path(f"{store}-wal").write_bytes(b"writes")
    folder = Path(str(_copy_with_wal(store)))
    try:
        assert folder.name.startswith(f"perflab-store-copy-{os.getpid()}-")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert (folder / "p.db-wal").read_bytes() == b"writes"
    finally:
        shutil.rmtree(folder)
