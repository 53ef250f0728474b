"""A pytest-benchmark suite's listing, with pytest scripted: the tests each variant's pytest
lists become benchmarks (once, in the first listing's order), a file that failed to collect is
a benchmark that fails, and a pytest that cannot list says why."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.plan.pytest_suite import LIST_ENV, pytest_benchmarks
from perflab.records.errors import ConfigError
from perflab.records.model import Variant

SUBJECT = "perflab.plan.pytest_suite"


def _pytest(*lists: Sequence[dict[str, str]]) -> FakeRunner:
    """pytest --collect-only as the plugin answers it: each run writes the next listing."""
    listings = iter(lists)

    def collect(spec: LaunchSpec, stdin: str | None) -> Completed:
        assert spec.env is not None
        lines = "".join(json.dumps(entry) + "\n" for entry in next(listings))
        Path(spec.env[LIST_ENV]).write_text(lines)
        return Completed(spec.argv, 0, "", "", 1)

    return FakeRunner().on_run(r" -m pytest --collect-only ", collect)


def _test(nodeid: str, **more: str) -> dict[str, str]:
    return {"nodeid": nodeid, "path": nodeid.partition("::")[0], "rootdir": ".", **more}


def test_the_tests_every_interpreter_lists_are_benchmarks_once_in_order() -> None:
    runner = _pytest(
        [_test("test_sort.py::test_sorted[10]"), _test("test_sort.py::test_sorted[100]")],
        [_test("test_sort.py::test_sorted[100]"), _test("test_new.py::test_only_new")],
    )
    variants = [Variant("old", python="/envs/old/bin/python"),
                Variant("new", python="/envs/new/bin/python")]  # fmt: skip
    found = pytest_benchmarks("tests/", variants, runner, keyword="sorted or new")
    assert [b.name for b in found] == [
        "test_sort.py::test_sorted[10]",
        "test_sort.py::test_sorted[100]",
        "test_new.py::test_only_new",
    ]
    assert "_perflab_pytest.benchmarked('test_sort.py', 'test_sort.py::test_sorted[10]'" in (
        found[0].setup
    )
    argvs = [spec.argv for spec, _ in runner.calls]
    assert [a[0] for a in argvs] == ["/envs/old/bin/python", "/envs/new/bin/python"]
    assert all(a[-3:] == ("-k", "sorted or new", "tests/") for a in argvs)


def test_variants_built_first_are_listed_once_here() -> None:
    runner = _pytest([_test("test_a.py::test_a")])
    variants = [Variant("main", git="main"), Variant("mine", git="HEAD")]
    found = pytest_benchmarks("t.py", variants, runner, default_python="/usr/bin/python3")
    assert [b.name for b in found] == ["test_a.py::test_a"]
    ((spec, _),) = runner.calls
    assert spec.argv[0] == "/usr/bin/python3" and spec.cwd is None


def test_a_file_that_failed_to_collect_is_a_benchmark_beside_the_others() -> None:
    runner = _pytest([_test("test_ok.py::test_ok"), _test("test_bad.py", error="ImportError")])
    found = pytest_benchmarks("tests/", [Variant("a")], runner)
    assert [b.name for b in found] == ["test_ok.py::test_ok", "test_bad.py"]


def test_no_test_using_the_fixture_is_refused_with_a_hint() -> None:
    with pytest.raises(ConfigError, match="uses the benchmark fixture") as raised:
        pytest_benchmarks("tests/", [Variant("a")], _pytest([]), keyword="nothing")
    assert raised.value.hint is not None and "def test_x(benchmark)" in raised.value.hint


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        ("/usr/bin/python3: No module named pytest", "pytest is not installed"),
        ("ERROR: usage: pytest [options]\nunknown option", "could not list the tests"),
    ],
)
def test_a_pytest_that_cannot_list_says_why(stderr: str, said: str) -> None:
    runner = FakeRunner().on_run(r"--collect-only", returncode=4, stderr=stderr)
    with pytest.raises(ConfigError, match=said) as raised:
        pytest_benchmarks("tests/", [Variant("a", python="/usr/bin/python3")], runner)
    assert raised.value.variant == "a"
