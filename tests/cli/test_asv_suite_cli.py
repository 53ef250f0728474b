"""`perflab run --asv DIR`: an asv benchmark directory measured unchanged under two identical
variants. Every benchmark that runs gets a verdict, none claims a difference (the suite is one
family), a combination its setup declines is said to be skipped, and a benchmark whose setup
fails fails alone with its message. Each of asv's kinds is measured by its lens, and a tracked
value that differs between variants is said."""

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

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "asv_suite"


@pytest.mark.integration
def test_a_suite_under_identical_variants(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "asv_suite")
    (tmp_path / "asv_suite" / "benchmarks" / "bench_broken.py").write_text(
        "def setup():\n    raise ValueError('no data here')\n\n\ndef time_broken():\n    pass\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--asv", "asv_suite",
         "--variant", "a", "--variant", "b", "--bench", r"time_sorted\(100, |time_sum|broken",
         "--budget", "1", "--min-generations", "2",
         "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # a benchmark failed; the run is kept
    assert "ValueError: no data here" in done.stderr
    assert "1 skipped (a setup raised NotImplementedError)" in done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    names = [b["name"] for b in document["benchmarks"]]
    measured = ["bench_sort.TimeSort.time_sorted(100, 'random')", "bench_sort.time_sum"]
    assert names == ["bench_broken.time_broken", *measured]
    verdicts = {c["benchmark"]: c["verdict"] for c in document["comparisons"]}
    assert list(verdicts) == measured
    # a claim here is a false one: say which, with its interval and the run's notes
    claims = [
        (c["benchmark"], c["verdict"], c["ratio"], c["ci_low"], c["ci_high"])
        for c in document["comparisons"]
    ]
    assert set(verdicts.values()) <= {"equivalent", "inconclusive"}, (claims, done.stderr)


KINDS = EXAMPLE.parent / "asv_kinds"


@pytest.mark.integration
def test_each_kind_is_measured_and_a_tracked_value_that_differs_is_said(tmp_path: Path) -> None:
    """One benchmark of each of asv's kinds under two variants whose track_ value differs:
    timeraw_ is a command of the variant's interpreter, peakmem_ the rss lens's alone, mem_ and
    track_ the track lens's alone, and the time lens measures the others."""
    shutil.copytree(KINDS, tmp_path / "suite")
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--asv", "suite",
         "--variant", "a", "--variant", "b env.MORE=1",
         "--budget", "1", "--min-generations", "2", "--sample-ms", "5",
         "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "peakmem_ benchmarks are measured by the rss lens alone" in done.stderr
    assert "track_ benchmarks are measured by the track lens alone" in done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["settings"]["metrics"] == ["time", "rss", "track"]
    benchmarks = {b["name"]: b for b in document["benchmarks"]}
    raw = benchmarks["bench_kinds.timeraw_start"]
    assert raw["kind"] == "command" and raw["cmd_is_python"] and raw["cmd_args"].startswith("-c ")
    assert benchmarks["bench_kinds.peakmem_list"]["measured_by"] == ["rss"]
    assert benchmarks["bench_kinds.time_sum"]["measured_by"] == ["time"]
    measured = {(c["benchmark"], c["metric"]) for c in document["comparisons"]}
    assert measured == {
        ("bench_kinds.time_sum", "time"),
        ("bench_kinds.timeraw_start", "time"),
        ("bench_kinds.peakmem_list", "rss"),
        ("bench_kinds.mem_list", "track"),
        ("bench_kinds.track_items", "track"),
    }
    tracked = {c["benchmark"]: c for c in document["comparisons"] if c["metric"] == "track"}
    items, size = tracked["bench_kinds.track_items"], tracked["bench_kinds.mem_list"]
    assert (items["ratio"], items["ci_low"], items["ci_high"]) == (1.5, 1.5, 1.5)
    assert items["verdict"] == "slower" and items["unit"] == "items" and items["deterministic"]
    assert (size["ratio"], size["verdict"], size["unit"]) == (1.0, "equivalent", "B")
    assert size["baseline_value"] > 8000  # a list of 1,000 references


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--bench", "x", "--stmt", "pass"], "--bench selects benchmarks of an asv suite"),
        (["run", "--asv", "suite", "--stmt", "pass"], "--asv makes the benchmarks"),
        (["run", "--asv", "missing", "-v", "A", "-v", "B"], "no asv benchmark directory"),
        (
            ["run", "--asv", "suite", "-v", "A", "-v", "B"],
            "no asv benchmark perflab measures in 'suite'",
        ),
        (["run", "--asv", "suite", "-k", "x", "-v", "A", "-v", "B"], "matching --bench 'x'"),
        (["run", "--asv", "suite", "--bench", "x(", "-v", "A", "-v", "B"], "not a regular"),
        (["bisect", "a", "b", "--asv", "suite"], "no asv benchmark perflab measures in 'suite'"),
    ],
)
def test_a_suite_given_wrongly_is_refused_before_measuring(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "plain.py").write_text("def helper():\n    pass\n")
    assert main([*args, "--store", str(tmp_path / "p.db")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.integration
def test_the_source_tree_beside_the_suite_does_not_shadow_the_installed_package(
    tmp_path: Path,
) -> None:
    """asv.conf.json at a project's root, beside its unbuilt package (its extension missing):
    the benchmarks import the installed copy (here on the variants' PYTHONPATH), as under asv,
    not the source tree in the working directory."""
    (tmp_path / "asv.conf.json").write_text('{"version": 1, "benchmark_dir": "benchmarks"}\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from ._built import work\n")
    (tmp_path / "installed" / "pkg").mkdir(parents=True)
    (tmp_path / "installed" / "pkg" / "__init__.py").write_text(
        "def work():\n    return sum(range(100))\n"
    )
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "bench_pkg.py").write_text(
        "import pkg\n\n\ndef time_work():\n    pkg.work()\n"
    )
    installed = f"env.PYTHONPATH={tmp_path / 'installed'}"
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--asv", ".",
         "--variant", f"a {installed}", "--variant", f"b {installed}",
         "--budget", "1", "--min-generations", "2",
         "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert [c["benchmark"] for c in document["comparisons"]] == ["bench_pkg.time_work"]


def test_bisect_asks_for_one_of_the_suites_benchmarks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q")  # git= variants are listed inside a repository
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "bench.py").write_text(
        "def time_a():\n    pass\n\n\ndef time_b():\n    pass\n"
    )
    assert main(["bisect", "a", "b", "--asv", "suite", "--store", str(tmp_path / "p.db")]) == 2
    err = capsys.readouterr().err
    assert (
        "bisect follows one benchmark, and --asv suite selects 2: bench.time_a, bench.time_b" in err
    )
    assert "--bench '^bench\\.time_a$' (bench.time_a)" in err
