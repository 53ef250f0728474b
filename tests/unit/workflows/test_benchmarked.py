"""A suite as the command line gives it, and narrowed to one benchmark (what `perflab bisect`
tells a user to type when the suite selects several): a filter that selects that one alone."""

from __future__ import annotations

import re

from perflab.machine.fake_processes import FakeRunner
from perflab.workflows.benchmarked import Suite, instructions_available

TESTS = (
    "test_bench.py::test_steady",
    "test_bench.py::test_changed",
    "test_bench.py::test_sort[100]",
    "test_bench.py::test_sort[1000]",
)


def test_the_flags_say_the_suite_as_typed() -> None:
    assert Suite(pytest="t.py", pytest_filter="sort").flags() == ("--pytest", "t.py", "-k", "sort")
    assert Suite(asv="benchmarks").flags() == ("--asv", "benchmarks")
    suite = Suite(gbench="./bench", gbench_filter="BM_Add")
    assert suite.filter_flags() == ("--filter", "BM_Add")


def test_a_pytest_test_is_selected_by_its_name_and_parameters() -> None:
    narrowed = Suite(pytest="test_bench.py").selecting("test_bench.py::test_changed", TESTS)
    assert narrowed is not None and narrowed.filter_flags() == ("-k", "test_changed")
    # test_sort[100] is no part of test_sort[1000]: its name says that one
    one = Suite(pytest="test_bench.py").selecting("test_bench.py::test_sort[100]", TESTS)
    assert one is not None and one.pytest_filter == "test_sort[100]"


def test_the_filter_given_is_kept_beside_the_name() -> None:
    suite = Suite(pytest="test_bench.py", pytest_filter="not slow")
    narrowed = suite.selecting("test_bench.py::test_changed", TESTS)
    assert narrowed is not None and narrowed.pytest_filter == "(not slow) and test_changed"


def test_a_name_that_another_holds_or_that_k_cannot_parse_gives_no_filter() -> None:
    listed = ("t.py::test_add", "t.py::test_add_many")
    assert Suite(pytest="t.py").selecting("t.py::test_add", listed) is None
    assert Suite(pytest="t.py").selecting("t.py::test_x[a b]", ("t.py::test_x[a b]",)) is None


def test_asv_and_google_benchmark_names_are_anchored_and_escaped() -> None:
    name = "bench_sort.TimeSort.time_sorted(100, 'random')"
    asv = Suite(asv="benchmarks").selecting(name, (name, name + "x"))
    assert asv is not None and asv.asv_filter is not None
    assert re.search(asv.asv_filter, name) and not re.search(asv.asv_filter, name + "x")
    gbench = Suite(gbench="./bench").selecting("BM_Add/64", ("BM_Add/64", "BM_Add/640"))
    assert gbench is not None and gbench.gbench_filter == "^BM_Add/64$"


def test_instructions_are_available_where_the_lens_probe_finds_valgrind() -> None:
    assert not instructions_available(FakeRunner())
    assert instructions_available(FakeRunner(tools={"valgrind"}))
