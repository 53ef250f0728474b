"""A benchmark some of the run's lenses measure (`Benchmark.measured_by`), and a command that is a
variant's interpreter (`Benchmark.cmd_is_python`)."""

from __future__ import annotations

from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Variant

RUN = (Metric.TIME, Metric("rss"), Metric.INSTRUCTIONS)


def test_a_benchmark_is_measured_by_the_runs_lenses_it_names_in_the_runs_order() -> None:
    assert Benchmark("b", stmt="f()").lenses_among(RUN) == RUN
    named = Benchmark("b", stmt="f()", measured_by=(Metric.INSTRUCTIONS, Metric("rss")))
    assert named.lenses_among(RUN) == (Metric("rss"), Metric.INSTRUCTIONS)
    assert Benchmark("b", stmt="f()", measured_by=(Metric.TIME,)).lenses_among(RUN[1:]) == ()


def test_a_stored_benchmarks_lenses_read_back_as_metrics() -> None:
    stored = Benchmark("b", stmt="f()", measured_by=["rss"])  # type: ignore[arg-type]
    assert stored.measured_by == (Metric("rss"),)


def test_a_variants_interpreter_replaces_the_default_one() -> None:
    raw = Benchmark("raw", cmd="/usr/bin/python3", cmd_args="-c 'pass'", cmd_is_python=True)
    assert raw.command_for(Variant("a")) == "/usr/bin/python3 -c 'pass'"
    assert raw.command_for(Variant("b", python="/envs/b/python")) == "/envs/b/python -c 'pass'"
    assert raw.command_for(Variant("c", cmd="pypy3")) == "pypy3 -c 'pass'"
    plain = Benchmark("gz", cmd="gzip")
    assert plain.command_for(Variant("b", python="/envs/b/python")) == "gzip"
