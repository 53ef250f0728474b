"""`perflab run --pytest FILE`: a pytest-benchmark suite measured unchanged under two identical
variants. Every benchmark that runs gets a verdict, none claims a difference (the suite is one
family), and a test whose assert fails fails its own benchmark with pytest's report, not the
suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.cli.main import main

SUITE = """
import pytest


@pytest.fixture
def words():
    return ["word"] * 100


def test_join(benchmark, words):
    assert benchmark(",".join, words).count(",") == 99


@pytest.mark.parametrize("n", [10])
def test_wrong_sum(benchmark, n):
    assert benchmark(sum, range(n)) == 46


def test_plain():
    assert True
"""


@pytest.mark.integration
def test_a_suite_under_identical_variants(tmp_path: Path) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE)
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--pytest", "test_suite.py",
         "--variant", "a", "--variant", "b", "-k", "join or sum", "--budget", "1",
         "--min-generations", "2",
         "--store", str(tmp_path / "p.db"), "--json", str(tmp_path / "r.json"), "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # a benchmark failed; the run is kept
    assert "test_suite.py::test_wrong_sum[10]" in done.stderr
    assert "assert 45 == 46" in done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    names = [b["name"] for b in document["benchmarks"]]
    assert names == ["test_suite.py::test_join", "test_suite.py::test_wrong_sum[10]"]
    verdicts = {c["benchmark"]: c["verdict"] for c in document["comparisons"]}
    assert list(verdicts) == ["test_suite.py::test_join"]
    assert verdicts["test_suite.py::test_join"] in ("equivalent", "inconclusive")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "-k", "sort", "--stmt", "pass"], "-k selects tests of a pytest suite"),
        (["run", "--pytest", "tests", "--stmt", "pass"], "--pytest makes the benchmarks"),
        (["run", "--pytest", "missing.py", "-v", "A", "-v", "B"], "pytest could not list"),
        (["run", "--pytest", "test_none.py", "-v", "A", "-v", "B"], "no test in"),
        (["bisect", "a", "b", "--pytest", "test_none.py"], "no test in 'test_none.py'"),
        (["check", "--pytest", "t.py", "--stmt", "pass"], "--pytest makes the benchmarks"),
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
    (tmp_path / "test_none.py").write_text("def test_plain():\n    pass\n")
    assert main([*args, "--store", str(tmp_path / "p.db")]) == 2
    assert message in capsys.readouterr().err
