"""A pytest-benchmark suite as perflab benchmarks: the tests the listing finds (those that use
the `benchmark` fixture, as pytest-benchmark would time), and perflab's fixture running one of
them in a variant's interpreter, with pytest-benchmark not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.worker_client import WorkerLaunch
from perflab.plan.pytest_suite import PytestTest, parse_listing, pytest_benchmarks
from perflab.records.errors import ConfigError
from perflab.records.model import Variant
from perflab.worker import STATEMENT_WORKER_PATH

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pytest_suite" / "test_sort.py"
BENCHMARKED = [
    "test_sort.py::test_sorted[100]",
    "test_sort.py::test_sorted[10000]",
    "test_sort.py::test_sort_in_place",
    "test_sort.py::test_join",
]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """The example suite in a folder of its own (perflab's pyproject.toml is not its ini), whose
    configuration passes pytest-benchmark's options, and options of pytest's own reporting and
    cache plugins (which the worker turns off), as projects' configurations do."""
    shutil.copy(EXAMPLE, tmp_path / "test_sort.py")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "--benchmark-disable --benchmark-columns=min,max '
        '--benchmark-warmup --benchmark-compare-fail=min:5% -l -ra --tb=short --ff"\n'
    )
    (tmp_path / "test_broken.py").write_text("import not_a_module\n\ndef test_x(benchmark): pass\n")
    return tmp_path


def test_the_listing_finds_the_tests_that_use_the_benchmark_fixture(suite: Path) -> None:
    variant = Variant("a", cwd=str(suite))
    found = pytest_benchmarks("test_sort.py", [variant], SubprocessRunner())
    assert [b.name for b in found] == BENCHMARKED  # test_no_benchmark is no benchmark
    selected = pytest_benchmarks("test_sort.py", [variant], SubprocessRunner(), keyword="sorted")
    assert [b.name for b in selected] == BENCHMARKED[:2]
    # a file that fails to collect is a benchmark of its own (it fails when measured)
    everything = pytest_benchmarks(".", [variant], SubprocessRunner())
    assert [b.name for b in everything] == [*BENCHMARKED, "test_broken.py"]
    with pytest.raises(ConfigError, match="no test in 'test_sort.py' selected by -k 'nothing'"):
        pytest_benchmarks("test_sort.py", [variant], SubprocessRunner(), keyword="nothing")


def test_an_interpreter_without_pytest_is_named_with_the_fix(
    suite: Path, bare_python: Path
) -> None:
    variant = Variant("old", python=str(bare_python), cwd=str(suite))
    with pytest.raises(ConfigError) as raised:
        pytest_benchmarks("test_sort.py", [variant], SubprocessRunner())
    assert "pytest is not installed for" in raised.value.message
    assert str(bare_python) in raised.value.message
    assert f"{bare_python} -m pip install pytest" in (raised.value.hint or "")
    assert raised.value.variant == "old"


_MEASURE = """
import json, sys
import perflab_bench_plugin as plugin
fn, args, kwargs = plugin.benchmarked(sys.argv[1], sys.argv[2], ".")
first, second = fn(*args, **kwargs), fn(*args, **kwargs)
print(json.dumps([first, second]))
"""


def _benchmarked(suite: Path, nodeid: str) -> subprocess.CompletedProcess[str]:
    """perflab's fixture in a process of its own, as in the statement worker's set-up."""
    return subprocess.run(
        [sys.executable, "-c", _MEASURE, "test_sort.py", nodeid],
        cwd=suite, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(STATEMENT_WORKER_PATH.parent), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


def test_the_fixture_gives_what_the_test_benchmarks_and_its_failures(suite: Path) -> None:
    # benchmark.pedantic's set-up runs with every call: each call sorts a fresh shuffled copy
    done = _benchmarked(suite, "test_sort.py::test_sort_in_place")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [None, None]
    done = _benchmarked(suite, "test_sort.py::test_join")
    assert json.loads(done.stdout.splitlines()[-1]) == [",".join(["word"] * 100)] * 2
    (suite / "test_sort.py").write_text(
        EXAMPLE.read_text().replace('count(",") == 99', 'count(",") == 98')
    )
    done = _benchmarked(suite, "test_sort.py::test_join")
    assert done.returncode == 1
    assert "TestFailed: test_sort.py:" in done.stderr and "assert 99 == 98" in done.stderr


def test_a_listed_test_is_a_statement_benchmark_named_by_its_node_id() -> None:
    (test,) = parse_listing(
        '{"nodeid": "t.py::test_a[1]", "path": "sub/t.py", "rootdir": "sub"}\n\n'
    )
    assert test == PytestTest("t.py::test_a[1]", "sub/t.py", "sub")
    benchmark = test.benchmark()
    assert benchmark.name == "t.py::test_a[1]"
    assert "benchmarked('sub/t.py', 't.py::test_a[1]', 'sub')" in benchmark.setup
    assert benchmark.stmt == "_perflab_fn(*_perflab_args, **_perflab_kwargs)"


def test_a_fork_server_collects_the_file_once_for_its_children(suite: Path) -> None:
    """pytest's start-up and the file's collection (its imports) happen in the fork server;
    each forked child sets the test up and runs it, with objects of its own."""
    (suite / "test_counted.py").write_text(
        "import os\n"
        "with open('imports.log', 'a') as log:\n"
        "    log.write('%d\\n' % os.getpid())\n\n"
        "def test_counted(benchmark):\n"
        "    seen = []\n"
        "    benchmark(seen.append, os.getpid())\n"
        "    assert seen == [os.getpid()]\n"
    )
    test = PytestTest("test_counted.py::test_counted", "test_counted.py", ".")
    server = ForkServerClient(
        SubprocessRunner(), test.benchmark(), Variant("a", cwd=str(suite)),
        WorkerLaunch(sys.executable, cpu=None, timeout_s=60),
    )  # fmt: skip
    try:
        children = []
        for _ in range(2):
            with server.worker() as child:
                children.append(child.pid)
                # the test ran in the child: what it benchmarks holds the child's pid
                reply = child.call({"op": "evaluate", "expr": "_perflab_args[0]"})
                assert reply["ok"] and reply["value"]["text"] == str(child.pid), reply
    finally:
        server.close()
    assert (suite / "imports.log").read_text().split() == [str(server.process.pid)]
    assert len(set(children)) == 2 and server.process.pid not in children
