"""The torch lens's analysis on hand-written op tables: no torch, no processes."""

from __future__ import annotations

import dataclasses
import math

import pytest
from rich.console import Console

from perflab.lenses.fragments import SectionInput
from perflab.lenses.torch.analyse import (
    analyse_torch,
)
from perflab.lenses.torch.ops import (
    OpStats,
    parse_op_table,
)
from perflab.lenses.torch.render import section
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.report.terminal import render_section
from tests.support.torch_tables import device_table, stored, table


def test_analysis_compares_total_self_time_and_lists_the_op_changes() -> None:
    base_samples, base_artifacts = stored(
        "A",
        [table(100, ("aten::add", 100, 100.0))],
        generations=3,
        # the warm-up profile's inflated times and odd ops must not count
        warmup_table=table(5, ("aten::add", 5, 5000.0), ("aten::warmup_only", 1, 1.0)),
    )
    var_samples, var_artifacts = stored(
        "B",
        [table(100, ("aten::add", 100, 100.0), ("aten::relu", 100, 100.0))],
        generations=3,
    )
    data = BenchmarkData(
        samples=tuple(base_samples + var_samples), artifacts=tuple(base_artifacts + var_artifacts)
    )
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert comparison.metric is Metric.TORCH
    assert comparison.ratio == pytest.approx(2.0)
    assert comparison.ci_low <= comparison.ratio <= comparison.ci_high
    assert comparison.verdict is Verdict.SLOWER
    assert (comparison.baseline_value, comparison.variant_value) == (1000.0, 2000.0)  # ns
    document = comparison.to_json()
    assert document["appeared"] == ["aten::relu"] and document["disappeared"] == []
    assert [op["name"] for op in document["ops"]] == ["aten::relu", "aten::add"]
    assert document["baseline_torch_version"] == "2.13.0+cpu"
    assert document["variant_cpu_capability"] == "AVX512"
    assert document["baseline_profiles"] == 3 and document["n_groups"] == 3
    assert document["ratio_of"] == "self_cpu"  # no GPU recorded: the host's time
    assert analysis.notes == ()


def test_workers_that_waited_for_a_cpu_make_no_claim() -> None:
    # at load ~4 an A/A of torch.add was called `faster` by this lens: its workers had waited
    # for the CPU through much of their loops, the profiler's wall clock counting those turns
    waited = dataclasses.replace(table(100, ("aten::add", 100, 100.0)), run_queue_ns=40_000)
    assert parse_op_table(waited.to_json()).run_queue_ns == 40_000
    base_samples, base_artifacts = stored("A", [waited], generations=3)
    var_samples, var_artifacts = stored(
        "B", [dataclasses.replace(waited, ops=(OpStats("aten::add", 100, 200.0, 200.0),))],
        generations=3,
    )  # fmt: skip
    data = BenchmarkData(
        samples=tuple(base_samples + var_samples), artifacts=tuple(base_artifacts + var_artifacts)
    )
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert comparison.ratio == pytest.approx(2.0) and comparison.verdict is Verdict.INCONCLUSIVE
    assert comparison.to_json()["interval_verdict"] == "slower"
    assert comparison.to_json()["withheld_reason"] == "waited-for-cpu"
    (note,) = analysis.notes
    assert "waited for a CPU 40% and 40%" in note.message and "inconclusive" in note.message


def test_a_statement_without_torch_ops_gets_a_note_and_no_ratio() -> None:
    samples, artifacts = [], []
    for variant in ("A", "B"):
        s, a = stored(variant, [table(10)], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert math.isnan(comparison.ratio) and comparison.verdict is Verdict.INCONCLUSIVE
    assert len(analysis.notes) == 2
    assert "no op" in analysis.notes[0].message


def test_a_comparison_on_the_device_says_where_the_time_goes() -> None:
    samples, artifacts = [], []
    for variant, host_us in (("A", 900.0), ("B", 400.0)):  # the dispatcher bypassed in B
        s, a = stored(variant, [device_table(100, host_us=host_us, kernel_us=180.0)], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    (comparison,) = analyse_torch(
        Benchmark("b", stmt="x"), ["A", "B"], data, Settings()
    ).comparisons
    document = comparison.to_json()
    assert document["baseline_device"]["host_us_per_iteration"] == pytest.approx(9.0)
    assert document["variant_device"]["host_us_per_iteration"] == pytest.approx(4.0)
    assert document["variant_device"]["bound"] == "launch-bound"
    console = Console(width=200, record=True)
    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    render_section(section(SectionInput(Metric.TORCH, (comparison,), experiment)), console)
    text = console.export_text()
    assert "on the host (dispatch and launches)" in text and "launch-bound" in text
    assert "kernels torch.profiler saw on the device" in text


def test_cpu_profiles_keep_their_json_without_device_fields() -> None:
    samples, artifacts = [], []
    for variant in ("A", "B"):
        s, a = stored(variant, [table(10, ("aten::add", 10, 10.0))], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    (comparison,) = analyse_torch(
        Benchmark("b", stmt="x"), ["A", "B"], data, Settings()
    ).comparisons
    assert "baseline_device" not in comparison.to_json()
    assert "device" not in table(1).to_json()
