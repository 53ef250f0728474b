"""The torch lens on replies its worker gave on real GPUs (an H100 and an H200, torch 2.11 with
CUDA 13; `tests/golden/data/torch/cuda_h100.json` and `cuda_h200.json`, made by
`bench/gpu_torch.py --skip-runs`): what a statement launched, paired across variants by op and
launch order, and what bounds it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from perflab.lenses.fragments import SectionInput
from perflab.lenses.torch.analyse import analyse_torch
from perflab.lenses.torch.ops import (
    DeviceBound,
    LaunchKind,
    OpTable,
    device_activity,
    diff_kernels,
    kernel_slots,
    op_rates,
    parse_op_table,
)
from perflab.lenses.torch.render import section
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings
from perflab.report.terminal import render_section
from tests.support.torch_tables import stored

# one capture per GPU: the same rules must hold on each
CAPTURES = {
    name: json.loads((Path(__file__).parent / "data" / "torch" / f"{name}.json").read_text())
    for name in ("cuda_h100", "cuda_h200")
}


@pytest.fixture(params=sorted(CAPTURES))
def captured(request: pytest.FixtureRequest) -> Callable[[str], OpTable]:
    """The op table a GPU's worker replied for a case."""
    cases = CAPTURES[request.param]["cases"]
    return lambda case: parse_op_table(cases[case]["reply"])


def test_a_small_op_is_launch_bound_with_one_kernel_per_iteration(
    captured: Callable[[str], OpTable],
) -> None:
    activity = device_activity([captured("add_small")])
    assert activity is not None
    assert activity.bound is DeviceBound.LAUNCH
    assert activity.launches_per_iteration == pytest.approx(1.0)
    # the worker left out its own synchronisations around the loop and the profiler's events
    assert activity.synchronisations_per_iteration == 0.0
    assert activity.device_us_per_iteration < 2.0 < activity.host_us_per_iteration
    (slot,) = kernel_slots([captured("add_small")]).values()
    assert (slot.op, slot.kind, slot.ordinal) == ("aten::add", LaunchKind.KERNEL, 0)
    assert "CUDAFunctor_add" in slot.names[0]


def test_a_large_matrix_product_is_device_bound(captured: Callable[[str], OpTable]) -> None:
    activity = device_activity([captured("mm_fp32")])
    assert activity is not None and activity.bound is DeviceBound.DEVICE
    assert activity.device_us_per_iteration > 10 * activity.host_us_per_iteration


def test_the_kernel_tf32_picks_is_the_same_slot_renamed_and_its_fill_a_new_one(
    captured: Callable[[str], OpTable],
) -> None:
    changes = diff_kernels(kernel_slots([captured("mm_fp32")]), kernel_slots([captured("mm_tf32")]))
    gemm, fill = changes
    assert (gemm.op, gemm.kind, gemm.ordinal) == ("aten::mm", LaunchKind.KERNEL, 0)
    assert gemm.renamed
    assert gemm.baseline_kernel is not None and "f32f32_f32f32" in gemm.baseline_kernel
    assert gemm.variant_kernel is not None and "tf32" in gemm.variant_kernel
    assert gemm.variant_device_us_per_iteration / gemm.baseline_device_us_per_iteration < 0.2
    assert (fill.kind, fill.baseline_kernel, fill.variant_kernel) == (
        LaunchKind.COPY,
        None,
        "Memset (Device)",
    )


def test_copies_and_the_statements_own_synchronisations_are_counted(
    captured: Callable[[str], OpTable],
) -> None:
    activity = device_activity([captured("round_trip")])
    assert activity is not None
    # h.to("cuda") copies in, .item() copies out, and sum fills its output (a Memset) first
    assert activity.copies_per_iteration == pytest.approx(3.0)
    assert activity.synchronisations_per_iteration == pytest.approx(2.0)
    assert activity.wait_us_per_iteration > 0.0
    slots = kernel_slots([captured("round_trip")])
    assert ("aten::copy_", LaunchKind.COPY, 0) in slots
    assert ("aten::sum", LaunchKind.KERNEL, 0) in slots  # after its fill: still kernel 0


def test_nested_ops_own_the_kernels_they_launched(captured: Callable[[str], OpTable]) -> None:
    slots = kernel_slots([captured("chain")])
    assert {key[0] for key in slots} == {"aten::mm", "aten::add", "aten::clamp_min"}
    assert ("aten::mm", LaunchKind.KERNEL, 1) in slots  # two kernels a call
    assert "aten::relu" in op_rates([captured("chain")])  # its host time stays an op's row


def test_identical_profiles_pair_every_slot_unrenamed(captured: Callable[[str], OpTable]) -> None:
    table = captured("add_small")
    changes = diff_kernels(kernel_slots([table]), kernel_slots([captured("add_small_blocking")]))
    assert [c.renamed for c in changes] == [False]
    assert all(c.baseline_kernel == c.variant_kernel for c in changes)


def _comparison(captured: Callable[[str], OpTable], baseline: str, variant: str) -> dict[str, Any]:
    samples, artifacts = [], []
    for name, case in (("A", baseline), ("B", variant)):
        s, a = stored(name, [captured(case)], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    (comparison,) = analyse_torch(
        Benchmark("b", stmt="x"), ["A", "B"], data, Settings()
    ).comparisons
    console = Console(width=240, record=True)
    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    render_section(section(SectionInput(Metric.TORCH, (comparison,), experiment)), console)
    return {"json": comparison.to_json(), "text": console.export_text()}


def test_the_report_pairs_the_renamed_kernel_and_says_what_sets_the_pace(
    captured: Callable[[str], OpTable],
) -> None:
    result = _comparison(captured, "mm_fp32", "mm_tf32")
    document, text = result["json"], result["text"]
    assert document["baseline_device"]["bound"] == "device-bound"
    assert document["kernel_changes"][0]["renamed"] is True
    assert "device-bound in both" in text
    assert "paired by op and launch order" in text
    assert "Memset (Device) (variant only)" in text
    # kernels are the device's rows, not ops that appeared
    assert not any("xmma" in name for name in document["appeared"] + document["disappeared"])


def test_a_device_bound_change_is_compared_by_the_time_that_sets_the_pace(
    captured: Callable[[str], OpTable],
) -> None:
    """tf32 made the product's kernel ~8x faster while the host's dispatch moved by launch
    overheads only (on an H200 the host's time read 0.39 [0.08, 1.91]): the ratio follows the
    device where the device sets the pace."""
    document = _comparison(captured, "mm_fp32", "mm_tf32")["json"]
    assert document["ratio_of"] == "pace" and "sets the pace" in document["ratio_basis"]
    device_ratio = (
        document["variant_device"]["device_us_per_iteration"]
        / document["baseline_device"]["device_us_per_iteration"]
    )
    assert document["ratio"] == pytest.approx(device_ratio, rel=0.01)
    assert document["ci_high"] < 0.2


def test_a_launch_bound_statement_is_compared_by_the_hosts_time(
    captured: Callable[[str], OpTable],
) -> None:
    document = _comparison(captured, "add_small", "add_small_blocking")["json"]
    assert document["ratio_of"] == "pace"
    host_ratio = (
        document["variant_device"]["host_us_per_iteration"]
        / document["baseline_device"]["host_us_per_iteration"]
    )
    assert document["ratio"] == pytest.approx(host_ratio, rel=0.01)
