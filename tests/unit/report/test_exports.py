"""hyperfine's JSON and CSV from each variant's own figures, and a variant's own interval."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math

from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Experiment, Measurement, Sample, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo
from perflab.report.exports import render_csv, render_hyperfine_json
from perflab.stats.paired import estimate_ratio, own_log_values
from perflab.stats.preemption import Preemption

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.report.exports"


def _own(variant: str, times: tuple[float, ...]) -> Measurement:
    return Measurement(
        benchmark="b",
        metric=Metric.TIME,
        variant=variant,
        value=2e6,
        ci_low=1.9e6,
        ci_high=2.1e6,
        unit="ns",
        n_groups=3,
        group_name="batch",
        mean=sum(times) / len(times),
        stddev=1e5,
        median=sorted(times)[len(times) // 2],
        min=min(times),
        max=max(times),
        cpu_mean=5e5,
        times=times,
    )


def _result(variants: tuple[Variant, ...], measurements: tuple[Measurement, ...]) -> RunResult:
    experiment = Experiment(
        benchmarks=(Benchmark("b", cmd="sleep 0.002", params={"n": "3"}),), variants=variants
    )
    return RunResult(
        run_id=1,
        status=RunStatus.COMPLETE,
        created_at="now",
        experiment=experiment,
        machine=MachineInfo.from_json({}),
        comparisons=(),
        notes=(),
        variant_info={},
        differences=(),
        measurements=measurements,
        wall_time_metrics=frozenset({Metric.TIME}),
    )


def test_hyperfine_json_has_its_fields_in_seconds_and_names_a_repeated_command() -> None:
    times = (1.9e6, 2.0e6, 2.2e6)
    result = _result((Variant("A"), Variant("B")), (_own("A", times), _own("B", times)))
    results = json.loads(render_hyperfine_json(result))["results"]
    # an A/A test runs the same command twice: the variant tells them apart
    assert [r["command"] for r in results] == ["A: sleep 0.002", "B: sleep 0.002"]
    first = results[0]
    assert first["times"] == [0.0019, 0.002, 0.0022]
    assert (first["min"], first["median"], first["max"]) == (0.0019, 0.002, 0.0022)
    assert first["user"] == 0.0005 and first["system"] == 0.0
    assert first["parameters"] == {"n": "3"}
    assert math.isclose(first["ci_low"], 0.0019)


def test_only_the_wall_time_lenses_rows_are_exported() -> None:
    """hyperfine's exports are wall times: another lens's own figures in ns are not rows."""
    other = dataclasses.replace(_own("A", (1e6,)), metric=Metric("other"))
    result = _result((Variant("A"),), (other, _own("A", (2e6,))))
    assert [r["times"] for r in json.loads(render_hyperfine_json(result))["results"]] == [[0.002]]
    unnamed = dataclasses.replace(result, wall_time_metrics=frozenset())
    assert json.loads(render_hyperfine_json(unnamed))["results"] == []


def test_csv_has_hyperfine_columns_first_then_perflab_s() -> None:
    result = _result((Variant("A", cmd="true"),), (_own("A", (1e6, 3e6)),))
    rows = list(csv.DictReader(io.StringIO(render_csv(result))))
    assert list(rows[0])[:8] == [
        "command",
        "mean",
        "stddev",
        "median",
        "user",
        "system",
        "min",
        "max",
    ]
    assert rows[0]["command"] == "true" and rows[0]["parameter_n"] == "3"
    assert float(rows[0]["mean"]) == 0.002


def test_a_variant_s_own_interval_is_over_its_groups_and_skips_warm_up() -> None:
    samples = [
        Sample("b", "A", Metric.TIME, "wall_ns", value=v, generation=g, warmup=w)
        for g, v, w in [(0, 1e9, True), (0, 100.0, False), (1, 110.0, False), (2, 90.0, False)]
    ]
    estimate = estimate_ratio(own_log_values(samples, preemption=Preemption.KEEP))
    assert estimate.n_groups == 3
    assert estimate.ci_low < 100 < estimate.ci_high < 200  # the warm-up's 1e9 is left out
