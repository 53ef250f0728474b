"""The workflows' lenses: --metric parsed as `run` parses it, each lens once and in order."""

from __future__ import annotations

import pytest

from perflab.cli.options import build_parser, run_options
from perflab.plan.specs import parse_metrics
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.workflows import Benchmarked, given_lenses

SUBJECT = "perflab.workflows"


def test_metric_is_parsed_as_run_parses_it() -> None:
    assert parse_metrics("time,instructions") == (Metric.TIME, Metric.INSTRUCTIONS)
    # a repeated --metric, each possibly comma-separated; each lens once, in order
    assert parse_metrics(("instructions", "time,instructions")) == (
        Metric.INSTRUCTIONS,
        Metric.TIME,
    )
    bench = Benchmarked(cmd="./prog", settings={"metrics": "instructions,time"})
    assert given_lenses(None, bench) == (Metric.INSTRUCTIONS, Metric.TIME)
    assert given_lenses("time", bench) == (Metric.TIME,)  # the argument wins
    assert given_lenses(Metric.INSTRUCTIONS, Benchmarked(cmd="x")) == (Metric.INSTRUCTIONS,)
    assert given_lenses(["time", "instructions"], Benchmarked(cmd="x"))[0] is Metric.TIME
    assert given_lenses(None, Benchmarked(cmd="x")) == ()
    with pytest.raises(ConfigError, match="unknown metric 'speed'"):
        given_lenses("time,speed", Benchmarked(cmd="x"))


@pytest.mark.parametrize("command", [["run"], ["history", "a..b"], ["bisect", "a", "b"]])
def test_a_repeated_metric_keeps_every_lens(command: list[str]) -> None:
    args = build_parser().parse_args(
        [*command, "--cmd", "true", "-m", "instructions", "--metric", "time,counters"]
    )
    settings = run_options(args).settings
    assert parse_metrics(settings["metrics"]) == (Metric.INSTRUCTIONS, Metric.TIME, Metric.COUNTERS)
    bench = Benchmarked(cmd="true", settings=settings)
    assert given_lenses(None, bench)[0] is Metric.INSTRUCTIONS
