"""An asv benchmark directory as perflab benchmarks: the listing (asv's names, a benchmark per
parameter combination, a setup's NotImplementedError skipping its combination, the lens that
measures a peakmem_ benchmark named), and perflab's helper setting one benchmark up in a
variant's interpreter, with asv not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.machine.proc import SubprocessRunner
from perflab.plan.asv_suite import AsvBenchmark, asv_suite, parse_listing, select
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Variant
from perflab.worker import STATEMENT_WORKER_PATH

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "asv_suite"
MEASURED = [
    "bench_sort.TimeSort.peakmem_sorted(100, 'random')",
    "bench_sort.TimeSort.peakmem_sorted(10000, 'random')",
    "bench_sort.TimeSort.peakmem_sorted(10000, 'sorted')",
    "bench_sort.TimeSort.time_sorted(100, 'random')",
    "bench_sort.TimeSort.time_sorted(10000, 'random')",
    "bench_sort.TimeSort.time_sorted(10000, 'sorted')",
    "bench_sort.TimeJoin.time_join",
    "bench_sort.time_sum",
    "sub.bench_nested.time_nested",
]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """The example suite, with a package inside its benchmark directory that imports a sibling
    relatively (as real suites do) and a module that fails to import."""
    shutil.copytree(EXAMPLE, tmp_path / "asv_suite")
    benchmarks = tmp_path / "asv_suite" / "benchmarks"
    (benchmarks / "common.py").write_text("SIZE = 10\n")
    (benchmarks / "sub").mkdir()
    (benchmarks / "sub" / "__init__.py").write_text("")
    (benchmarks / "sub" / "bench_nested.py").write_text(
        "from ..common import SIZE\n\ndef time_nested():\n    sum(range(SIZE))\n"
    )
    return tmp_path


def test_the_listing_names_each_combination_as_asv_does(suite: Path) -> None:
    variant = Variant("a", cwd=str(suite))
    found = asv_suite("asv_suite", [variant], SubprocessRunner())
    assert [b.name for b in found.benchmarks] == MEASURED
    assert found.timeout_s == 120  # TimeSort's timeout
    (skipped,) = found.notes
    # (100, 'sorted')'s setup raises NotImplementedError: skipped, and said so
    assert skipped.endswith("2 skipped (a setup raised NotImplementedError): "
                            "bench_sort.TimeSort.peakmem_sorted(100, 'sorted'), "
                            "bench_sort.TimeSort.time_sorted(100, 'sorted')")  # fmt: skip
    assert found.kind_lenses == (("peakmem", (Metric("rss"),)),)
    # the benchmark directory directly, and a regular expression on the names (as asv's --bench)
    direct = asv_suite("asv_suite/benchmarks", [variant], SubprocessRunner(), pattern="Join|sum$")
    assert [b.name for b in direct.benchmarks] == MEASURED[6:8]
    assert direct.notes == ()


def test_a_directory_without_benchmarks_or_missing_is_refused(suite: Path) -> None:
    variant = Variant("a", cwd=str(suite))
    with pytest.raises(ConfigError, match="no asv benchmark directory 'nothing'"):
        asv_suite("nothing", [variant], SubprocessRunner())
    (suite / "empty").mkdir()
    (suite / "empty" / "plain.py").write_text("def helper():\n    pass\n")
    with pytest.raises(ConfigError, match="no asv benchmark perflab measures in 'empty'"):
        asv_suite("empty", [variant], SubprocessRunner())
    with pytest.raises(ConfigError, match="matching --bench 'nothing'"):
        asv_suite("asv_suite", [variant], SubprocessRunner(), pattern="nothing")


_MEASURE = """
import json, sys
import perflab_asv
where = "asv_suite/benchmarks"
fn, args = perflab_asv.prepared(where, sys.argv[3], sys.argv[1], json.loads(sys.argv[2]))
fn(*args)
print(json.dumps([len(a) if isinstance(a, list) else a for a in args]))
"""


def _prepared(
    suite: Path, key: str, index: list[int], module: str = "bench_sort"
) -> subprocess.CompletedProcess[str]:
    """The helper in a process of its own, as in the statement worker's set-up."""
    return subprocess.run(
        [sys.executable, "-c", _MEASURE, key, json.dumps(index), module],
        cwd=suite, capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(STATEMENT_WORKER_PATH.parent), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_the_helper_sets_a_benchmark_up_with_its_parameters_and_cache(suite: Path) -> None:
    done = _prepared(suite, "bench_sort.TimeSort.time_sorted", [1, 0])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [10000, "random"]
    # setup_cache's value is the first argument
    done = _prepared(suite, "bench_sort.TimeJoin.time_join", [])
    assert json.loads(done.stdout) == [1000]
    done = _prepared(suite, "bench_sort.TimeSort.time_sorted", [0, 1])
    assert done.returncode == 1
    assert "SetupFailed: its setup raised NotImplementedError" in done.stderr
    # a setup that fails says so with the suite's own lines, not the helper's
    (suite / "asv_suite" / "benchmarks" / "bench_broken.py").write_text(
        "def setup():\n    raise ValueError('no data')\n\n\ndef time_x():\n    pass\n"
    )
    done = _prepared(suite, "bench_broken.time_x", [], module="bench_broken")
    assert 'bench_broken.py", line 2, in setup' in done.stderr
    assert "ValueError: no data" in done.stderr
    assert 'perflab_asv.py", line' not in done.stderr.split("SetupFailed")[1]


def test_a_listing_becomes_statement_benchmarks_and_notes() -> None:
    (listed, broken) = parse_listing(
        '{"name": "m.C.time_x(1)", "key": "m.C.time_x", "module": "m", "dir": "b", '
        '"index": [0], "kind": "time", "skipped": false, "timeout": null}\n\n'
        '{"name": "bad", "module": "bad", "dir": "b", "error": "ImportError: no"}\n'
    )
    assert listed == AsvBenchmark("m.C.time_x(1)", "m", "b", "m.C.time_x", (0,))
    benchmark = listed.benchmark()
    assert "prepared('b', 'm', 'm.C.time_x', (0,))" in benchmark.setup
    assert benchmark.stmt == "_perflab_fn(*_perflab_args)"
    # a module that fails to import is a benchmark of its own: it fails with its traceback
    assert [b.name for b in select([listed, broken], "b").benchmarks] == ["m.C.time_x(1)", "bad"]


def test_the_suites_timeout_bounds_a_sample_unless_one_is_given(suite: Path) -> None:
    variants = [Variant("a", cwd=str(suite)), Variant("b", cwd=str(suite))]
    experiment = make_experiment(asv="asv_suite", variants=variants)
    assert experiment.settings.sample_timeout_s == 120  # asv's timeout bounds the whole run
    assert len(experiment.plan_notes) == 2  # the skipped combinations, the peakmem benchmarks
    assert experiment.settings.metrics == (Metric.TIME, Metric("rss"))  # for peakmem_
    given = make_experiment(asv="asv_suite", variants=variants, sample_timeout_s=5)
    assert given.settings.sample_timeout_s == 5
