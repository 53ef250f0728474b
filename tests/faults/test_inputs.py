"""Budgets and inputs that cannot run away: slow variants are measured within the budget,
non-finite numbers are refused, experiment files get the command line's checks, and failures
say what failed (the setup, a segfault, a non-Python interpreter)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.cli_commands import QUICK
from tests.support.store_rows import runs, samples
from tests.support.tagged_processes import contained_by_this_process, processes_left, run

pytestmark = pytest.mark.integration


def test_variant_thousands_of_times_slower(tmp_path: Path) -> None:
    """A variant thousands of times slower than the baseline, with a short sample timeout"""
    started = time.monotonic()
    code, _, err, perflab = run(
        "run", "--stmt", "d and time.sleep(d)",
        "--setup", "import os, time; d = float(os.environ['D'])",
        "-v", "fast env.D=0", "-v", "slow env.D=0.005", "--budget", "1", "--sample-timeout", "2",
        *QUICK, "--json", "out.json", "-q", cwd=tmp_path,
    )  # fmt: skip
    elapsed_s = time.monotonic() - started
    assert code == 0, err
    (comparison,) = json.loads((tmp_path / "out.json").read_text())["comparisons"]
    assert comparison["ratio"] > 100
    # on a busy machine a side whose preemption cost could not be measured leaves the verdict
    # inconclusive whatever the interval (stats/overload.py, ASSUMED_COST): this test is about
    # a slow variant measured within the budget, not about the load
    assert comparison["verdict"] in ("slower", "inconclusive")
    ((run_id, status),) = runs(tmp_path)
    assert status == "complete" and samples(tmp_path, run_id) > 0
    # with the baseline's loop count one sample of the slow variant would take minutes
    assert elapsed_s < 120
    assert processes_left(perflab.tag) == []


@pytest.mark.parametrize(
    "option", ["--budget", "--sample-timeout", "--sample-ms", "--precision", "--confidence"]
)
def test_non_finite_number_on_the_command_line(tmp_path: Path, option: str) -> None:
    """NaN given to a numeric option on the command line (--budget nan ...)"""
    code, _, err, perflab = run("run", "--stmt", "pass", "-v", "A", "-v", "B", option, "nan",
                                cwd=tmp_path)  # fmt: skip
    assert code == 2, err
    assert "must be a finite number, not nan" in err
    assert runs(tmp_path) == []
    assert processes_left(perflab.tag) == []


VARIANTS = '[[variant]]\nname = "A"\n[[variant]]\nname = "B"\n'
BENCHMARK = '[[benchmark]]\nname = "b"\nstmt = "pass"\n'


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[settings]\nbudget = nan\n" + VARIANTS + BENCHMARK, "budget must be a finite number"),
        ("[settings]\nsample_timeout = inf\n" + VARIANTS + BENCHMARK, "must be a finite number"),
        (
            '[[variant]]\nname = "<script>alert(1)</script>"\n[[variant]]\nname = "B"\n'
            + BENCHMARK,
            "variant name '<script>alert(1)</script>' cannot contain '(' ')' '/' '<' '>'",
        ),
        (
            '[[variant]]\nname = "A"\n[[variant]]\nname = "B|pipe"\n' + BENCHMARK,
            "variant name 'B|pipe' cannot contain '|'",
        ),
        (VARIANTS + '[[benchmark]]\nname = "b"\nstmt = ["pass"]\n', "stmt must be a string"),
        (
            '[[variant]]\nname = "A"\nenv = {X = 1}\n[[variant]]\nname = "B"\n' + BENCHMARK,
            'env.X must be a string, not 1 hint: environment values are text: write X = "1"',
        ),
        (
            '[[variant]]\nname = 5\n[[variant]]\nname = "B"\n' + BENCHMARK,
            "the variant name must be a string, not 5",
        ),
        (VARIANTS + '[[benchmark]]\nname = 5\nstmt = "pass"\n', "name must be a string, not 5"),
    ],
    ids=["nan budget", "inf timeout", "script name", "pipe name", "stmt list", "env number",
         "variant name number", "benchmark name number"],
)  # fmt: skip
def test_experiment_file_gets_the_command_line_checks(
    tmp_path: Path, toml: str, message: str
) -> None:
    """An experiment file with a value the command line would refuse"""
    (tmp_path / "e.toml").write_text(toml)
    code, _, err, perflab = run("run", "e.toml", cwd=tmp_path)
    assert code == 2, err
    assert message in err
    assert runs(tmp_path) == []
    assert processes_left(perflab.tag) == []


def test_unicode_variant_names(tmp_path: Path) -> None:
    """Variant names in other scripts (schnell, langsam-ü, 速い)"""
    code, out, err, perflab = run(
        "run", "--stmt", "pass", "-v", "schnell", "-v", "langsam-ü env.X=1", "-v", "速い",
        "--budget", "0.3", *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert "langsam-ü vs schnell" in out and "速い vs schnell" in out
    ((run_id, status),) = runs(tmp_path)
    assert status == "complete" and samples(tmp_path, run_id) > 0
    assert processes_left(perflab.tag) == []


def test_hanging_setup_is_reported_as_the_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    """A setup that hangs (time.sleep(1000) in --setup)"""
    from perflab import api
    from perflab.measure import worker_client
    from perflab.records.errors import BenchmarkFailedError

    monkeypatch.setattr(worker_client, "STARTUP_TIMEOUT_S", 2.0)
    experiment = api.make_experiment(
        stmt="pass", setup="import time; time.sleep(1000)", variants=["A", "B"],
        sample_timeout_s=1.0, min_generations=2, sample_target_ms=1.0,
    )  # fmt: skip
    result = api.run(experiment, store_path=None)
    assert result.status.value == "incomplete"
    (failure,) = result.failures
    assert isinstance(failure, BenchmarkFailedError)
    assert "the setup did not finish within 2 s" in failure.message
    assert failure.hint is not None and "the setup hangs" in failure.hint
    assert contained_by_this_process() == []


def test_segfaulting_statement_has_a_hint(tmp_path: Path) -> None:
    """A statement that segfaults (ctypes.string_at(0))"""
    code, _, err, perflab = run(
        "run", "--stmt", "ctypes.string_at(0)", "--setup", "import ctypes", "-v", "A", "-v", "B",
        *QUICK, cwd=tmp_path,
    )  # fmt: skip
    assert code == 3, err
    assert "killed by signal 11 (SIGSEGV)" in err
    assert "Fatal Python error: Segmentation fault" in err and "string_at" in err
    assert "crashed the interpreter" in err
    assert [status for _, status in runs(tmp_path)] == ["incomplete"]
    assert processes_left(perflab.tag) == []


def test_non_python_interpreter_is_refused_up_front(tmp_path: Path) -> None:
    """python=/bin/sh (not a Python interpreter) for a statement benchmark"""
    code, _, err, perflab = run(
        "run", "--stmt", "pass", "-v", "A", "-v", "B python=/bin/sh", *QUICK, cwd=tmp_path
    )
    assert code == 2, err
    assert "'/bin/sh' did not start perflab's worker: it is not a Python 3.7+ interpreter" in err
    assert len(err) < 600  # a few lines, not the shell's complaints about the worker script
    assert runs(tmp_path) == []  # nothing was measured: no run
    assert processes_left(perflab.tag) == []
