"""`perflab check` and `perflab bisect` with `--asv` and `--gbench`, through the real command
line, on repositories made here whose suite has two benchmarks and a commit that makes one of
them do four times the work (sixteen times for bisect; far beyond the threshold of 20%, so the
time lens on a one-second budget settles it on a busy machine): check lists the suite where it
runs, measures each benchmark in each commit's checkout (the Google Benchmark binary built there
by --build) and names the one that regressed; bisect follows the one benchmark the suite's
filter selects and names the commit that planted the change."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_commands import CI_VARIABLES, perflab
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not shutil.which("git"), reason="needs git"),
]

ASV_CONF = '{"version": 1, "project": "work", "benchmark_dir": "benchmarks"}\n'
ASV_BENCH = """
def work(n):
    return sum(i * 7 for i in range(n))


def time_steady():
    work(300)


class TimeChanged:
    def setup(self):
        self.n = {n}

    def time_changed(self):
        work(self.n)
"""
# MinTime in the code: check's variants are commits, so no cmd= carries Google Benchmark's flags
GBENCH = """
#include <benchmark/benchmark.h>

static int work(int n) {{
  int total = 0;
  for (int i = 0; i < n; ++i) benchmark::DoNotOptimize(total += i * 7);
  return total;
}}

static void BM_Steady(benchmark::State& state) {{
  for (auto _ : state) benchmark::DoNotOptimize(work(300));
}}
BENCHMARK(BM_Steady)->MinTime(0.01);

static void BM_Changed(benchmark::State& state) {{
  for (auto _ : state) benchmark::DoNotOptimize(work({n}));
}}
BENCHMARK(BM_Changed)->MinTime(0.01);

BENCHMARK_MAIN();
"""
BUILD = "g++ -O1 -o bench bench.cc -lbenchmark -lpthread"
CHANGE = "more work"


def _repo(root: Path, files: dict[str, str | None], changed: dict[str, str | None]) -> Path:
    """base, then `slower` (both tagged), its subject CHANGE."""
    repo = root / "repo"
    repo.mkdir()
    (repo / "benchmarks").mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", files)
    git(repo, "tag", "base")
    commit(repo, CHANGE, changed)
    git(repo, "tag", "slower")
    return repo


def _without_valgrind(tmp: Path) -> str:
    """A PATH holding git and g++ alone: without valgrind the check measures time alone, which
    keeps this test short."""
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    for tool in ("git", "g++", "as", "ld"):
        found = shutil.which(tool)
        if found and not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    return str(folder)


def _check(
    repo: Path, tmp: Path, *suite: str, generations: int = 2
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    return _workflow(repo, tmp, "check", "--base", "base", "--head", "slower", *suite,
                     generations=generations)  # fmt: skip


def _bisect(
    repo: Path, tmp: Path, *suite: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    return _workflow(repo, tmp, "bisect", "base", "slower", *suite)


def _workflow(
    repo: Path, tmp: Path, *args: str, generations: int = 2
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = perflab(
        *args, "--metric", "time", "--budget", "1", "--min-generations", str(generations),
        "--threshold", "20%", "--json", str(tmp / "c.json"), "--store", str(tmp / "p.db"),
        "--cache-dir", str(tmp / "cache"), "-q", cwd=repo, timeout_s=300,
        env={"PATH": _without_valgrind(tmp)}, without=CI_VARIABLES,
    )  # fmt: skip
    document = json.loads((tmp / "c.json").read_text()) if (tmp / "c.json").exists() else {}
    return done, document


def test_check_gates_an_asv_suite(tmp_path: Path) -> None:
    bench = "benchmarks/bench_work.py"
    repo = _repo(
        tmp_path,
        {"asv.conf.json": ASV_CONF, "benchmarks/__init__.py": "", bench: ASV_BENCH.format(n=300)},
        {bench: ASV_BENCH.format(n=1200)},
    )
    done, document = _check(repo, tmp_path, "--asv", ".")
    changed, steady = "bench_work.TimeChanged.time_changed", "bench_work.time_steady"
    assert done.returncode == 1, done.stderr
    assert "regression: 1 of 2 benchmarks" in done.stderr
    assert steady not in done.stderr.split("regression:")[1]
    assert document["regressed"] == [changed]
    assert {c["benchmark"] for c in document["run"]["comparisons"]} == {changed, steady}


def test_check_gates_a_google_benchmark_binary(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {"bench.cc": GBENCH.format(n=300), ".gitignore": "bench\n"},
        {"bench.cc": GBENCH.format(n=1200)},
    )
    _build_where_perflab_runs(repo)
    # a sample is one process (tens of ms here): a few more of them than a statement needs
    suite = ("--gbench", "./bench", "--build", BUILD)
    done, document = _check(repo, tmp_path, *suite, generations=6)
    # named as Google Benchmark names them, MinTime included
    changed, steady = "BM_Changed/min_time:0.010", "BM_Steady/min_time:0.010"
    assert done.returncode == 1, done.stderr
    assert "regression: 1 of 2 benchmarks" in done.stderr
    assert steady not in done.stderr.split("regression:")[1]
    assert document["regressed"] == [changed]
    assert {c["benchmark"] for c in document["run"]["comparisons"]} == {changed, steady}


def test_bisect_follows_the_asv_benchmark_selected(tmp_path: Path) -> None:
    """One step (the line after base is the change alone) and the evidence run; the other
    benchmark, unchanged, would have found no commit."""
    bench = "benchmarks/bench_work.py"
    repo = _repo(
        tmp_path,
        {"asv.conf.json": ASV_CONF, "benchmarks/__init__.py": "", bench: ASV_BENCH.format(n=300)},
        {bench: ASV_BENCH.format(n=4800)},
    )
    done, document = _bisect(repo, tmp_path, "--asv", ".", "--bench", "time_changed")
    assert done.returncode == 0, done.stderr
    assert document["benchmark"] == "bench_work.TimeChanged.time_changed"
    assert document["culprit"]["subject"] == CHANGE
    assert [s["state"] for s in document["steps"]] == ["bad"]
    assert document["evidence_run"] is not None


def test_bisect_follows_the_google_benchmark_selected(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {"bench.cc": GBENCH.format(n=300), ".gitignore": "bench\n"},
        {"bench.cc": GBENCH.format(n=4800)},
    )
    _build_where_perflab_runs(repo)
    suite = ("--gbench", "./bench", "--build", BUILD, "--filter", "BM_Changed")
    done, document = _bisect(repo, tmp_path, *suite)
    assert done.returncode == 0, done.stderr
    assert document["benchmark"] == "BM_Changed/min_time:0.010"
    assert document["culprit"]["subject"] == CHANGE
    assert [s["state"] for s in document["steps"]] == ["bad"]
    assert document["evidence_run"] is not None


def _build_where_perflab_runs(repo: Path) -> None:
    """The suite is listed where perflab runs: the binary is built there too, as
    docs/suites.md says."""
    built = subprocess.run(BUILD.split(), cwd=repo, capture_output=True, text=True, timeout=120)
    if built.returncode != 0:
        pytest.skip(f"cannot build a Google Benchmark binary: {built.stderr.strip()[:200]}")
