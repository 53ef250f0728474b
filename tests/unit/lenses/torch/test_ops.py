"""The torch lens's op tables, written by hand: their JSON, rates, diffs and device activity; no
torch, no processes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from perflab.lenses.torch.ops import (
    DeviceBound,
    OpStats,
    OpTable,
    OpTableFormatError,
    device_activity,
    diff_ops,
    op_rates,
    parse_op_table,
    versions_of,
)
from tests.support.torch_tables import DEVICE_KERNEL, device_table, table


def test_an_op_table_round_trips_through_the_worker_reply_shape() -> None:
    original = OpTable(
        loops=10,
        wall_ns=12345,
        ops=(OpStats("aten::relu", 10, 3.5, 7.0), OpStats("aten::clamp_min", 10, 3.5, 3.5)),
        torch_version="2.13.0+cpu",
        cpu_capability=None,
    )
    reply = {"ok": True, **original.to_json()}
    assert parse_op_table(json.loads(json.dumps(reply))) == original
    assert original.self_cpu_us == 7.0


@pytest.mark.parametrize(
    "data",
    [
        {"loops": 10},
        {"loops": 10, "ops": [{"name": "aten::add", "count": "many"}]},
        {"loops": 0, "ops": []},
        {"ops": []},
    ],
)
def test_a_malformed_op_table_is_a_format_error(data: dict[str, Any]) -> None:
    with pytest.raises(OpTableFormatError):
        parse_op_table(data)


def test_rates_are_per_iteration_over_all_tables_and_skip_ops_that_never_ran() -> None:
    rates = op_rates(
        [
            table(100, ("aten::add", 100, 200.0), ("aten::empty", 0, 0.0)),
            table(300, ("aten::add", 300, 300.0), ("aten::fill_", 3, 6.0)),
        ]
    )
    assert set(rates) == {"aten::add", "aten::fill_"}
    assert rates["aten::add"].calls_per_iteration == 1.0
    assert rates["aten::add"].self_us_per_iteration == pytest.approx(500.0 / 400)
    assert rates["aten::fill_"].calls_per_iteration == pytest.approx(3 / 400)


def test_the_diff_names_ops_that_appeared_and_disappeared_and_puts_call_changes_first() -> None:
    baseline = op_rates([table(10, ("aten::add", 10, 20.0), ("aten::empty", 10, 5.0))])
    variant = op_rates(
        [
            table(
                10,
                ("aten::add", 10, 40.0),  # slower, same calls: after the call changes
                ("aten::relu", 10, 3.0),
                ("aten::clamp_min", 20, 2.0),
            )
        ]
    )
    diff = diff_ops(baseline, variant)
    assert diff.appeared == ("aten::clamp_min", "aten::relu")
    assert diff.disappeared == ("aten::empty",)
    assert [c.name for c in diff.changes] == [
        "aten::clamp_min",  # +2 calls per iteration
        "aten::empty",  # -1 call, -0.5 µs
        "aten::relu",  # +1 call, +0.3 µs
        "aten::add",  # same calls, +2 µs
    ]
    assert diff.baseline_self_us_per_iteration == pytest.approx(2.5)
    assert diff.variant_self_us_per_iteration == pytest.approx(4.5)
    empty = next(c for c in diff.changes if c.name == "aten::empty")
    assert empty.to_json() == {
        "name": "aten::empty",
        "baseline_calls_per_iteration": 1.0,
        "variant_calls_per_iteration": 0.0,
        "baseline_self_us_per_iteration": 0.5,
        "variant_self_us_per_iteration": 0.0,
    }


def test_versions_of_a_variant_are_collected_once() -> None:
    tables = [table(1, capability="AVX2"), table(1, capability="AVX2")]
    assert versions_of(tables) == (["2.13.0+cpu"], ["AVX2"])


# -- the device: tables profiled with CUDA activity ------------------------------------------


def test_device_activity_separates_host_from_device_and_counts_launches() -> None:
    small = device_table(100, host_us=500.0, kernel_us=180.0)
    assert parse_op_table(small.to_json()) == small  # stored artifacts keep the device fields
    activity = device_activity([small, small])
    assert activity is not None
    assert activity.host_us_per_iteration == pytest.approx(5.0)
    assert activity.device_us_per_iteration == pytest.approx(1.8)
    assert activity.launches_per_iteration == pytest.approx(1.0)
    assert activity.synchronisations_per_iteration == pytest.approx(0.02)
    assert activity.copies_per_iteration == 0.0
    assert activity.bound is DeviceBound.LAUNCH  # a small op: the host is the cost
    (kernel,) = activity.kernels
    assert kernel.name == DEVICE_KERNEL and kernel.calls_per_iteration == pytest.approx(1.0)
    large = device_activity([device_table(10, host_us=50.0, kernel_us=29_000.0)])
    assert large is not None and large.bound is DeviceBound.DEVICE
    assert device_activity([table(10, ("aten::add", 10, 10.0))]) is None  # CPU profiles
