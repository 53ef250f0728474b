"""Bounded whatever the benchmark writes or leaves: perflab's memory for output without
newlines, nothing spilled to the temporary directory for a command's stderr, and a build's
background processes stopped when the build ends (not waited on until the build timeout)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST

pytestmark = pytest.mark.integration

# perflab's own peak resident memory, whatever the benchmark writes (it is ~80 MiB idle)
RSS_BOUND_KIB = 200 * 1024


def _peak_rss_kib(argv: list[str], cwd: Path) -> tuple[int, int, str]:
    """Run argv; its exit status, its own peak RSS (VmHWM, read until it exits), stderr."""
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    while process.poll() is None:
        try:
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    assert process.stderr is not None
    return process.returncode, peak, process.stderr.read()


def test_output_without_newlines_keeps_perflab_small(tmp_path: Path) -> None:
    """a statement writing 30 MB without a newline in every sample (a progress bar redrawn
    with \\r is one such line): perflab's own memory stays under the stated bound"""
    code, peak, err = _peak_rss_kib(
        [sys.executable, "-m", "perflab.cli.main", "run", "--stmt",
         "import sys; sys.stdout.write('\\r' + 'x' * 30_000_000)", "-v", "A", "-v", "B",
         "-q", *FAST],
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert 0 < peak < RSS_BOUND_KIB, f"perflab peaked at {peak} KiB"


def _tmpfs_works(folder: Path) -> bool:
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {folder}"],
        capture_output=True,
    )
    return probe.returncode == 0


def test_a_commands_stderr_is_not_spilled_to_the_temporary_directory(tmp_path: Path) -> None:
    """--cmd writing 30 MB to stderr per run with TMPDIR on a 1 MiB filesystem: the run
    completes (the stderr is read through a pipe, its tail kept), TMPDIR stays empty"""
    if shutil.which("unshare") is None or not _tmpfs_works(tmp_path):
        pytest.skip("cannot mount a filesystem here (no user namespaces)")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    script = 'mount -t tmpfs -o size=1m tmpfs "$0" && TMPDIR="$0" && export TMPDIR && exec "$@"'
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, str(temporary), sys.executable, "-m",
         "perflab.cli.main", "run", "--cmd", "head -c 30000000 /dev/zero >&2", "-v", "A",
         "-v", "B", "-q", *FAST],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_build_that_leaves_a_background_process_is_not_waited_for(tmp_path: Path) -> None:
    """a build that starts a background process (`sleep 300 &`) and ends: the process is
    stopped when the build ends, a note names how many, and the run measures (not a build
    'timed out' after --build-timeout)"""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "data.txt").write_text("one\n")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one")
    build = "sleep 300 & true"
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--cmd", "cat data.txt",
         "-v", f"A git=HEAD build={build!r}", "-v", f"B git=HEAD build={'(sleep 301 &); true'!r}",
         "--build-timeout", "30", "--cache-dir", str(tmp_path / "cache"),
         "--store", str(tmp_path / "p.db"), *FAST],
        cwd=repo, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = " ".join((done.stdout + done.stderr).split())
    assert "left 1 process(es) running when it ended" in text
