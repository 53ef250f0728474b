"""`perflab run --gbench BINARY`: a real Google Benchmark binary (examples/gbench_suite, built
twice, the second with a slowdown planted in BM_Sum) measured unchanged, each variant naming
its own binary with cmd=. Each selected benchmark is its own comparison, named as Google
Benchmark names it, its time samples Google Benchmark's own iterations, its instructions those
of the iterations alone, and the planted slowdown is found where it was planted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.cli.main import main
from tests.support.git_repo import git

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gbench_suite" / "bench.cc"


def _build(tmp_path: Path, name: str, *flags: str) -> None:
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed (scripts/setup.sh installs it)")
    built = subprocess.run(
        ["g++", "-O2", *flags, "-o", name, str(EXAMPLE), "-lbenchmark", "-lpthread"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if built.returncode != 0 and "benchmark" in built.stderr:
        pytest.skip("Google Benchmark is not installed (scripts/setup.sh --test installs "
                    f"libbenchmark-dev): {built.stderr.strip().splitlines()[0]}")  # fmt: skip
    assert built.returncode == 0, built.stderr


@pytest.mark.integration
def test_a_google_benchmark_binary_with_a_planted_slowdown(tmp_path: Path) -> None:
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (scripts/setup.sh installs it)")
    _build(tmp_path, "bench_old")
    _build(tmp_path, "bench_new", "-DSUM_PASSES=2")
    quick = "--benchmark_min_time=0.01"  # Google Benchmark's own flags ride on cmd=
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--gbench", "./bench_old",
         "--filter", "BM_Sum",
         "--variant", f"old cmd='./bench_old {quick}'",
         "--variant", f"new cmd='./bench_new {quick}'",
         "--metric", "time,instructions", "--budget", "1", "--store", str(tmp_path / "p.db"),
         "--json", str(tmp_path / "r.json"), "--samples"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    names = [b["name"] for b in document["benchmarks"]]
    assert names == ["BM_Sum"]
    assert {b["reports"] for b in document["benchmarks"]} == {"gbench"}
    time = {c["benchmark"]: c for c in document["comparisons"] if c["metric"] == "time"}
    assert time["BM_Sum"]["ratio"] > 1.3  # the planted second pass over its data
    # a time sample is Google Benchmark's iterations (thousands in 10 ms), not one process's run
    samples = [s for s in document["samples"] if s["benchmark"] == "BM_Sum"]
    assert samples and all(s["loops"] > 100 for s in samples if s["metric"] == "time")
    # callgrind counts the reported run's iterations alone: twice the instructions, exactly
    counted = {c["benchmark"]: c for c in document["comparisons"] if c["metric"] == "instructions"}
    assert counted["BM_Sum"]["ratio"] == pytest.approx(2.0, abs=0.01)
    assert "see the whole process" not in done.stderr  # both lenses see the iterations alone


@pytest.mark.integration
def test_benchmark_min_time_in_the_environment_shortens_runs_and_keeps_names(
    tmp_path: Path,
) -> None:
    """Google Benchmark reads BENCHMARK_MIN_TIME as --benchmark_min_time (docs/suites.md): each
    run is short, and the benchmarks keep the names the binary lists without it."""
    _build(tmp_path, "bench")
    listed = subprocess.run(
        ["./bench", "--benchmark_list_tests", "--benchmark_filter=BM_Sum|BM_Add"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    short = "env.BENCHMARK_MIN_TIME=0.01"
    done = subprocess.run(
        [sys.executable, "-m", "perflab", "run", "--gbench", "./bench",
         "--filter", "BM_Sum|BM_Add", "--variant", f"A {short}", "--variant", f"B {short}",
         "--metric", "time", "--budget", "0.5", "--store", str(tmp_path / "p.db"),
         "--json", str(tmp_path / "r.json"), "--samples"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert [b["name"] for b in document["benchmarks"]] == listed.stdout.split()
    # BM_Sum runs ~700,000 iterations in the default 0.5 s on a fast CPU, ~14,000 in 0.01 s
    sums = [s["loops"] for s in document["samples"] if s["benchmark"] == "BM_Sum"]
    assert sums and max(sums) < 100_000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--filter", "x", "--stmt", "pass"], "--filter selects benchmarks of a Google"),
        (["run", "--gbench", "./bench", "--stmt", "pass"], "--gbench makes the benchmarks"),
        (["run", "--gbench", "./missing", "-v", "A", "-v", "B"], "cannot run './missing'"),
        (["run", "--gbench", "./bench", "-v", "A", "-v", "B"], "listed no benchmarks: is it"),
        (["bisect", "a", "b", "--gbench", "./bench"], "listed no benchmarks: is it"),
    ],
)
def test_a_binary_given_wrongly_is_refused_before_measuring(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench").write_text("#!/bin/sh\nexit 0\n")  # runs, lists nothing
    (tmp_path / "bench").chmod(0o755)
    assert main([*args, "--store", str(tmp_path / "p.db")]) == 2
    err = capsys.readouterr().err
    assert message in err and "hint:" in err and "Traceback" not in err


def test_bisect_asks_for_one_of_a_binarys_benchmarks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed (a script that lists two, as a binary does), refused before any git command."""
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q")  # git= variants are listed inside a repository
    (tmp_path / "bench").write_text("#!/bin/sh\nprintf 'BM_Add/1\\nBM_Add/10\\n'\n")
    (tmp_path / "bench").chmod(0o755)
    assert main(["bisect", "a", "b", "--gbench", "./bench", "--store", str(tmp_path / "p.db")]) == 2
    err = capsys.readouterr().err
    assert "bisect follows one benchmark, and --gbench ./bench selects 2" in err
    assert "--filter '^BM_Add/1$' (BM_Add/1) or --filter '^BM_Add/10$' (BM_Add/10)" in err
