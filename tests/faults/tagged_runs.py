"""What the fault tests run perflab with, as a user would (a real store, real processes), and how
they find what it left: every process a test starts carries the test's tag in its environment
(tests/faults/conftest.py sets it), so what still carries it afterwards was left behind."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

TAG_VARIABLE = "PERFLAB_FAULT_TAG"


# short runs: the faults are the subject, not the precision
FAST = (
    "--budget", "0.3",
    "--min-generations", "2", "--sample-ms", "1", "--seed", "3",
)  # fmt: skip


@dataclass
class Fault:
    """What a test tells the record beyond pass/fail."""

    tag: str
    samples_kept: int | None = None


def tagged_processes(tag: str) -> list[int]:
    """Processes (other than this one) whose environment carries the tag."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def processes_left(tag: str, grace_s: float = 3.0) -> list[int]:
    """The tagged processes still alive after a grace period (exits are asynchronous)."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = [pid for pid in tagged_processes(tag) if not _is_zombie(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def samples_in_stores(folder: Path) -> int | None:
    """Samples held by the perflab stores under folder, read-only; None when there is none."""
    total: int | None = None
    for path in folder.rglob("*.db"):
        try:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                count = connection.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            finally:
                connection.close()
        except sqlite3.Error:
            continue
        total = (total or 0) + int(count)
    return total


def perflab(
    *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line, run as a user runs it (the test's tag is in os.environ)."""
    return subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def git(repo: Path, *args: str) -> str:
    """git in `repo` as a fixed user; what it printed."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def data_repo(folder: Path, texts: tuple[str, ...] = ("one",)) -> Path:
    """`folder/repo`: a git repository on main with one commit of data.txt per text, the
    first tagged `base`."""
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for text in texts:
        (repo / "data.txt").write_text(text + "\n")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", text)
        if text == texts[0]:
            git(repo, "tag", "base")
    return repo


def start_perflab(*args: str, cwd: Path, **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "perflab.cli.main", *args],
        cwd=cwd,
        text=True,
        **popen,
    )
