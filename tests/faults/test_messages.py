"""Every remaining edge said plainly, with no traceback: SIGHUP stops a run as SIGTERM does,
an interrupt during start-up, numbers beyond any bound, `list --limit 0`, cache folders a
killed run left, and mentions in Markdown reports."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from perflab.report.escape import markdown, markdown_prose
from tests.support.cli_commands import FAST, perflab
from tests.support.tagged_processes import interrupt_during_command, start

pytestmark = pytest.mark.integration


def test_sighup_stops_a_run_as_sigterm_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGHUP (a closed terminal or SSH session) during a --cmd run: status 130 naming the
    run kept, nothing left running, no perflab-caches-* folder left in TMPDIR"""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    interrupt_during_command(tmp_path, [signal.SIGHUP])
    assert [p.name for p in temporary.iterdir() if p.name.startswith("perflab-caches-")] == []


def test_cache_folders_of_a_killed_run_are_removed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """perflab-caches-* folders left by a run killed with SIGKILL (its pid gone) are removed by
    the next run; one of a perflab still running is left alone"""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    gone = temporary / "perflab-caches-4194999-abcd"  # above any pid_max: no such process
    alive = temporary / f"perflab-caches-{os.getpid()}-efgh"
    for folder in (gone, alive):
        (folder / "XDG_CACHE_HOME").mkdir(parents=True)
    done = perflab("run", "--stmt", "pass", "-v", "A", "-v", "B", "-q", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not gone.exists()
    assert alive.exists()


@pytest.mark.parametrize("delay_s", [0.2, 0.4, 0.7, 1.0])
def test_ctrl_c_during_start_up_prints_no_traceback(tmp_path: Path, delay_s: float) -> None:
    """Ctrl-C while perflab starts (importing, parsing): one line, status 130, no traceback"""
    run = start("run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST, cwd=tmp_path)
    time.sleep(delay_s)
    run.process.send_signal(signal.SIGINT)
    code, _, err = run.finish()
    assert "Traceback" not in err, err
    assert code in (130, 0), err  # 0: it had finished already


@pytest.mark.parametrize(
    "args, said",
    [
        (["show", "99999999999999999999999"], "there is no run 99999999999999999999999"),
        (["show", "-99999999999999999999999"], "there is no run -99999999999999999999999"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--sample-timeout", "1e10"],
         "sample_timeout must be at most"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--build-timeout", "1e10"],
         "build_timeout must be at most"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--sample-ms", "1e18"],
         "sample_ms must be at most"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--budget", "1e10"],
         "budget must be at most"),
        (["list", "--limit", "0"], "must be at least 1"),
    ],
    ids=["show huge", "show huge negative", "sample-timeout 1e10", "build-timeout 1e10",
         "sample-ms 1e18", "budget 1e10", "list --limit 0"],
)  # fmt: skip
def test_numbers_beyond_any_bound_are_refused(tmp_path: Path, args: list[str], said: str) -> None:
    """a run id or a duration too large for any timer, `list --limit 0`: status 2 naming the
    bound, no traceback (they were OverflowError tracebacks, a 121 s run, 'no runs')"""
    if args[0] in ("show", "list"):
        assert perflab("run", "--stmt", "pass", "-v", "A", "-v", "B", "-q", *FAST,
                       cwd=tmp_path).returncode == 0  # fmt: skip
    done = perflab(*args, cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    assert said in " ".join(done.stderr.split())
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", ["@everyone", "@org/team", "hi @here", "@someone-else"])
def test_markdown_never_mentions_anyone(name: str) -> None:
    """Markdown: `@everyone`, `@org/team` in a name or a note cannot notify anyone in a
    pull-request comment (a zero-width space follows the @); the text reads the same"""
    for shown in (markdown(name), markdown_prose(f"variant {name} is slower")):
        assert "@\u200b" in shown
        assert shown.replace("\u200b", "").endswith(name.split("@")[-1]) or "slower" in shown
    assert markdown("a@b.example") == "a@b.example"  # an address is not a mention


def _python2() -> str | None:
    for candidate in sorted(Path("/root/.pyenv/versions").glob("2.7*/bin/python2.7")) + [
        Path(p) for p in ("/usr/bin/python2.7", "/usr/bin/python2") if Path(p).exists()
    ]:
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def test_python_2_is_named_with_its_version(tmp_path: Path) -> None:
    """python= a Python 2.7: refused (status 2) saying it is Python 2.7, older than 3.7 (not
    'did not answer as Python does')"""
    python2 = _python2()
    if python2 is None:
        pytest.skip("no Python 2.7 here")
    done = perflab("run", "--stmt", "pass", "-v", "A", "-v", f"B python={python2}", *FAST,
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "it is Python 2.7" in " ".join(done.stderr.split())


@pytest.mark.parametrize(
    "setup",
    [
        "import os; os.closerange(3, 256)",
        "import os; n = os.open(os.devnull, os.O_RDWR); "
        "[os.dup2(n, fd) for fd in range(3, 64) if fd != n]",
    ],
    ids=["closerange", "dup2 over"],
)
def test_a_set_up_that_clobbers_file_descriptors_is_named(tmp_path: Path, setup: str) -> None:
    """a set-up that closes or replaces the worker's file descriptors: the error says the
    worker lost its connection because the code closed or replaced descriptors (not 'worker
    exited with status 0')"""
    done = perflab("run", "--stmt", "pass", "--setup", setup, "-v", "A", "-v", "B", *FAST,
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode != 0
    assert "closed or replaced file descriptors" in " ".join(done.stderr.split()), done.stderr
