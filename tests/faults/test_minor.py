"""The minor edges of issue 36, each said plainly with no traceback and the right status: numbers
past any bound, thresholds that mean nothing, NUL bytes, options before a misspelt command,
spreadsheet formulas in CSV exports."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST, flat, perflab
from tests.support.store_rows import runs

pytestmark = pytest.mark.integration


def test_list_limit_past_the_largest_integer_lists_every_run(tmp_path: Path) -> None:
    """`list --limit 9223372036854775808` (past SQLite's largest integer): every run listed,
    status 0 (it was an OverflowError traceback)"""
    made = perflab("run", "--stmt", "pass", "-v", "A", "-v", "B", "-q", *FAST, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    done = perflab("list", "--limit", "9223372036854775808", cwd=tmp_path, timeout_s=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stdout.strip().splitlines()) >= 2  # the heading and the run


@pytest.mark.parametrize(
    ("threshold", "said"),
    [
        ("-5%", "the threshold '-5%' is negative"),
        ("-0.05", "the threshold '-0.05' is negative"),
        ("1e-300", "the threshold '1e-300' is too small: below 0.01%"),
        ("1e-300%", "is too small: below 0.01%"),
        ("inf%", "the threshold 'inf%' is not a number"),
    ],
)
def test_meaningless_thresholds_say_what_is_wrong(
    tmp_path: Path, threshold: str, said: str
) -> None:
    """`check --threshold -5%`, `-0.05`, `1e-300`: status 2 saying it is negative or too
    small and what is accepted (they were all 'not a number')"""
    done = perflab("check", "--cmd", "true", f"--threshold={threshold}", cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    text = flat(done.stderr)
    assert said in text
    assert "a percentage from 0.01% (--threshold 2%) or a fraction below 1" in text
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ('env = {X = "a\\u0000b"}', "variant 'A': env.X holds a NUL byte"),
        ('cwd = "a\\u0000b"', "variant 'A': cwd holds a NUL byte"),
    ],
    ids=["env value", "cwd"],
)
def test_a_nul_byte_is_refused_before_anything_starts(
    tmp_path: Path, where: str, said: str
) -> None:
    """a NUL byte in a variant's environment value (an experiment file's "a\\u0000b"): status
    2 naming the variable, nothing measured (it was 'the command launcher stopped answering')"""
    (tmp_path / "e.toml").write_text(
        f'[[variant]]\nname = "A"\n{where}\n[[variant]]\nname = "B"\n'
        '[[benchmark]]\nname = "b"\nstmt = "pass"\n'
    )
    done = perflab("run", "e.toml", cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    assert said in flat(done.stderr)
    assert "Traceback" not in done.stderr
    assert runs(tmp_path) == []


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--runs", "2", "sho"], "unknown command 'sho': did you mean show?"),
        (["--runs", "2", "-q", "lsit"], "unknown command 'lsit': did you mean list?"),
        (["--runs", "2", "show"], "'show' is a perflab command: its options go after it"),
    ],
    ids=["sho", "lsit", "show"],
)
def test_options_before_a_misspelt_command_are_caught(
    tmp_path: Path, words: list[str], said: str
) -> None:
    """`perflab --runs 2 sho`: refused as a misspelt command, status 2, no run (options first
    escaped the 'did you mean show?' guard and made a failed run)"""
    done = perflab(*words, cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    assert said in flat(done.stderr)
    assert runs(tmp_path) == []


def test_csv_cells_a_spreadsheet_would_run_are_neutralised(tmp_path: Path) -> None:
    """`--export-csv` with a parameter `=HYPERLINK(...)` and one with a raw ESC byte: the
    formula cell starts with `'`, the ESC is written as \\x1b (a spreadsheet ran the first,
    a terminal the second)"""
    done = perflab(
        "run", "--cmd", 'echo "$u" >/dev/null', "--param", 'u==HYPERLINK("http://e"),\x1b[31mred',
        "-v", "A", "--runs", "2", "-q", "--export-csv", "r.csv", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "r.csv").read_text()
    assert "\x1b" not in text
    cells = [row[-1] for row in csv.reader(text.splitlines())]
    assert cells == ["parameter_u", '\'=HYPERLINK("http://e")', "\\x1b[31mred"]
    for row in csv.reader(text.splitlines()):
        assert not any(cell.startswith(("=", "+", "@", "\t", "\r")) for cell in row)


@pytest.mark.parametrize("lines", ["one stream", "two streams"])
def test_each_failure_is_printed_once(tmp_path: Path, lines: str) -> None:
    """every variant fails (`--cmd false`) with stdout and stderr into one log (`2>&1`, a CI
    log) or apart: each failure's reason appears once (it was printed twice into one log)"""
    argv = [sys.executable, "-m", "perflab.cli.main", "run", "--cmd", "false", "-v", "A",
            "-v", "B", *FAST]  # fmt: skip
    together = lines == "one stream"
    done = subprocess.run(
        argv, cwd=tmp_path, stdout=subprocess.PIPE, text=True, timeout=120,
        stderr=subprocess.STDOUT if together else subprocess.PIPE,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout
    log = done.stdout if together else done.stderr
    assert log.count("the command exited with status 1") == 1, log
    assert "is incomplete" in log


@pytest.mark.parametrize("where", ["command line", "experiment file"])
def test_an_absurd_warmup_is_refused_before_anything_starts(tmp_path: Path, where: str) -> None:
    """`--warmup 1000000000` (2.5 years of discarded samples): status 2 naming the bound, no
    run (it started silently); a warm-up within the bound still runs"""
    if where == "command line":
        argv = ["run", "--cmd", "true", "-v", "A", "--warmup", "1000000000"]
    else:
        (tmp_path / "e.toml").write_text(
            '[settings]\nwarmup_blocks = 1000000000\n[[variant]]\nname = "A"\n'
            '[[benchmark]]\nname = "b"\nstmt = "pass"\n'
        )
        argv = ["run", "e.toml"]
    done = perflab(*argv, cwd=tmp_path, timeout_s=60)
    assert done.returncode == 2, done.stderr
    assert "(--warmup) must be at most 10,000, not 1,000,000,000" in flat(done.stderr)
    assert runs(tmp_path) == []
    within = perflab("run", "--cmd", "true", "-v", "A", "--warmup", "20", "--runs", "2", "-q",
                     *FAST, cwd=tmp_path)  # fmt: skip
    assert within.returncode == 0, within.stderr


def test_a_local_ray_run_leaves_no_session_in_the_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--ray` with a local cluster: Ray's session lives in a private folder of perflab's,
    removed at the end; $TMPDIR is left empty (every run left a session under a shared,
    world-writable $TMPDIR/ray)"""
    pytest.importorskip("ray", reason="Ray is not installed (perflab[cluster])")
    # short: Ray's sockets live under it, and a socket's path holds 107 bytes
    temporary = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    try:
        done = perflab("run", "--ray", "--stmt", "pass", "-v", "A", "-v", "B", "-q", *FAST,
                       cwd=tmp_path, timeout_s=600)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in temporary.iterdir()) == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


@pytest.mark.parametrize(
    ("setup", "stmt", "said"),
    [
        ("import os", "os.fork()", "the statement forked a copy of the worker"),
        ("import os; os.fork()", "pass", "the set-up forked a copy of the worker"),
    ],
    ids=["statement", "set-up"],
)
def test_a_statement_that_forks_is_named_at_once(
    tmp_path: Path, setup: str, stmt: str, said: str
) -> None:
    """a statement (or set-up) that forks and whose child returns (`os.fork()`): status 3 in
    seconds saying it forked a copy of the worker, with the fix (it took 50 s and ended in a
    KeyError 'loops' traceback)"""
    started = time.monotonic()
    done = perflab("run", "--stmt", stmt, "--setup", setup, "-v", "A", "-v", "B", *FAST,
                   cwd=tmp_path, timeout_s=120)  # fmt: skip
    assert done.returncode == 3, done.stderr
    text = flat(done.stderr)
    assert said in text and "os._exit()" in text
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 40


def test_a_statement_whose_fork_exits_is_measured(tmp_path: Path) -> None:
    """a statement that forks a child which ends with os._exit() and is waited for: measured
    as any statement (a fork is not refused, a copy coming back is)"""
    stmt = "pid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)"
    done = perflab("run", "--stmt", stmt, "--setup", "import os", "-v", "A", "-v", "B", "-q",
                   *FAST, cwd=tmp_path, timeout_s=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
