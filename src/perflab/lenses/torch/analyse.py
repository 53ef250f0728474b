"""The torch lens's analysis: the stored op tables and self-CPU samples -> one comparison per
variant (the ops that changed, appeared or disappeared, the device's kernels by launch slot).

The ratio is the total self CPU time of all ops per iteration, variant/baseline, paired by
generation and block with a CI over generations (`stats.paired`); where both variants' profiles
recorded a GPU, it is the time that sets the pace: per profile the larger of the host's dispatch
and the device's work. The profiler inflates times, so that ratio is indicative; the ops that
appeared or disappeared, and call counts, are the robust part (docs/lenses/torch.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.lenses.torch.metric import TORCH
from perflab.lenses.torch.ops import (
    DeviceActivity,
    KernelChange,
    OpsDiff,
    OpTable,
    device_activity,
    diff_kernels,
    diff_ops,
    kernel_slots,
    op_rates,
    parse_op_table,
    versions_of,
)
from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.model import Benchmark, Comparison, Note, Severity, Withhold
from perflab.records.settings import Settings
from perflab.stats.comparison import SideValues, Subject, comparison_from
from perflab.stats.paired import estimate_ratio, pair_samples

SELF_CPU_US = "self_cpu_us"  # sample: all ops' self CPU time (µs) for `loops` iterations
# sample of a profile that recorded a GPU: the larger of the host's dispatch-and-launch time and
# the device's time (µs) for `loops` iterations; a device-bound statement's host time moves
# with launch overheads, not with its kernels
PACE_US = "pace_us"
OP_CALLS = "op_calls:"  # + op name: that op's count
OP_SELF_CPU_US = "op_self_cpu_us:"
OP_CPU_US = "op_cpu_us:"
KIND_OPS = "torch-ops"  # artifact: OpTable JSON of a measured profile
KIND_WARMUP_OPS = "torch-ops-warmup"
RATIO_BASIS = (
    "total self CPU time of all ops per iteration under torch.profiler: inflated by the "
    "profiler's overhead, indicative only; use the time lens for a verdict"
)
PACE_RATIO_BASIS = (
    "the time that sets the pace per iteration under torch.profiler: per profile the larger of "
    "the host's dispatch and launches and the device's kernels and copies; the host side is "
    "inflated by the profiler's overhead, so indicative only; use the time lens for a verdict"
)
RATIO_OF_SELF_CPU = "self_cpu"
RATIO_OF_PACE = "pace"


def profile_values(table: OpTable) -> list[tuple[str, float]]:
    """The samples one measured profile is stored as: (name, value for its `loops`)."""
    values = [(SELF_CPU_US, table.self_cpu_us)]
    activity = device_activity([table])
    if activity is not None:
        values.append((PACE_US, activity.pace_us_per_iteration * table.loops))
    for op in table.ops:
        values += [
            (OP_CALLS + op.name, float(op.count)),
            (OP_SELF_CPU_US + op.name, op.self_cpu_us),
            (OP_CPU_US + op.name, op.cpu_us),
        ]
    return values


@dataclass(frozen=True)
class TorchDetails:
    """The torch lens's facts behind one comparison (the JSON export's `details`): the op diff,
    torch's versions and CPU capabilities, and device activity."""

    diff: OpsDiff
    baseline_torch_versions: list[str]
    variant_torch_versions: list[str]
    baseline_cpu_capabilities: list[str]
    variant_cpu_capabilities: list[str]
    baseline_profiles: int
    variant_profiles: int
    n_groups: int
    baseline_device: DeviceActivity | None = None  # where the profiles recorded the device
    variant_device: DeviceActivity | None = None
    kernel_changes: tuple[KernelChange, ...] = ()  # per op and slot, paired across variants
    ratio_of: str = RATIO_OF_SELF_CPU  # RATIO_OF_PACE where both variants recorded a GPU

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio_basis": PACE_RATIO_BASIS if self.ratio_of == RATIO_OF_PACE else RATIO_BASIS,
            "ratio_of": self.ratio_of,
            "ops": [change.to_json() for change in self.diff.changes],
            "appeared": list(self.diff.appeared),
            "disappeared": list(self.diff.disappeared),
            "baseline_self_us_per_iteration": self.diff.baseline_self_us_per_iteration,
            "variant_self_us_per_iteration": self.diff.variant_self_us_per_iteration,
            "baseline_torch_version": _one_or_joined(self.baseline_torch_versions),
            "variant_torch_version": _one_or_joined(self.variant_torch_versions),
            "baseline_cpu_capability": _one_or_joined(self.baseline_cpu_capabilities),
            "variant_cpu_capability": _one_or_joined(self.variant_cpu_capabilities),
            "baseline_profiles": self.baseline_profiles,
            "variant_profiles": self.variant_profiles,
            "n_groups": self.n_groups,
            **self._device_json(),
        }

    def _device_json(self) -> dict[str, Any]:
        if self.baseline_device is None and self.variant_device is None:
            return {}
        return {
            "baseline_device": None
            if self.baseline_device is None
            else self.baseline_device.to_json(),
            "variant_device": None
            if self.variant_device is None
            else self.variant_device.to_json(),
            "kernel_changes": [change.to_json() for change in self.kernel_changes],
        }


def _one_or_joined(values: list[str]) -> str | None:
    # one per variant normally; several would mean the environment changed during the run
    return ", ".join(values) if values else None


def analyse_torch(
    benchmark: Benchmark, variants: Sequence[str], data: BenchmarkData, settings: Settings
) -> LensAnalysis:
    """From stored data only: one comparison per non-baseline variant."""
    tables = {
        name: [parse_op_table(json.loads(a.content)) for a in data.artifacts_of(name, KIND_OPS)]
        for name in variants
    }
    baseline = _VariantOpTables(variants[0], tables[variants[0]])
    if not baseline.tables:
        return LensAnalysis()
    notes = [
        _no_op_note(benchmark, name)
        for name in variants
        if tables[name] and not op_rates(tables[name])
    ]
    comparisons = []
    for name in variants[1:]:
        if not tables[name]:
            continue
        side = _VariantOpTables(name, tables[name])
        comparison = _torch_comparison(benchmark, data, settings, baseline, side)
        if comparison.withheld is not None:
            notes.append(_waited_note(comparison, baseline, side))
        comparisons.append(comparison)
    return LensAnalysis(comparisons=tuple(comparisons), notes=tuple(notes))


# A profiled worker that waited for a CPU longer than this share of its loop: its ops' self
# times include other processes' turns (the profiler reads a wall clock), and one process per
# variant gives the interval no way to see how unequal those turns were.
WAITED_SHARE = 0.05
# the reason such a comparison gives for claiming no difference
WAITED = Withhold("waited-for-cpu", differences_only=True)


def _waited_note(
    comparison: Comparison, baseline: _VariantOpTables, side: _VariantOpTables
) -> Note:
    return Note(
        Severity.INFO,
        f"torch: {side.name!r} against {baseline.name!r} read "
        f"{comparison.ratio:.3f} [{comparison.ci_low:.3f}, {comparison.ci_high:.3f}], but the "
        f"profiled workers waited for a CPU {baseline.waited_share:.0%} and "
        f"{side.waited_share:.0%} of their loops: op times then include other processes' "
        "turns, so the lens says inconclusive",
        hint="measure on a quieter machine, or read the time lens's verdict",
        benchmark=comparison.benchmark,
        variant=side.name,
        metric=TORCH,
    )


@dataclass(frozen=True)
class _VariantOpTables:
    """One variant's stored op tables, one per measured profile."""

    name: str
    tables: list[OpTable]

    @property
    def waited_share(self) -> float:
        """The share of its profiled loops' wall time its workers waited for a CPU (0 when
        the workers could not say)."""
        timed = [t for t in self.tables if t.run_queue_ns is not None and t.wall_ns > 0]
        wall_ns = sum(t.wall_ns for t in timed)
        return sum(t.run_queue_ns or 0 for t in timed) / wall_ns if wall_ns else 0.0


def _no_op_note(benchmark: Benchmark, variant: str) -> Note:
    return Note(
        Severity.WARNING,
        f"torch.profiler saw no op in variant {variant!r}: the statement runs no torch operator",
        hint="profile a statement that calls torch (e.g. torch.add(x, y))",
        benchmark=benchmark.name,
        variant=variant,
        metric=TORCH,
    )


def _torch_comparison(
    benchmark: Benchmark,
    data: BenchmarkData,
    settings: Settings,
    baseline: _VariantOpTables,
    side: _VariantOpTables,
) -> Comparison:
    diff = diff_ops(op_rates(baseline.tables), op_rates(side.tables))
    details = _details(baseline, side, diff)
    paced = (
        details.baseline_device is not None
        and details.variant_device is not None
        # a store written before profiles recorded their pace keeps the host's time
        and bool(data.samples_of(baseline.name, PACE_US))
        and bool(data.samples_of(side.name, PACE_US))
    )
    name = PACE_US if paced else SELF_CPU_US
    estimate = estimate_ratio(
        pair_samples(data.samples_of(baseline.name, name), data.samples_of(side.name, name)),
        settings.confidence,
    )
    if paced:
        assert details.baseline_device is not None and details.variant_device is not None
        values = (
            details.baseline_device.pace_us_per_iteration,
            details.variant_device.pace_us_per_iteration,
        )
    else:
        values = (diff.baseline_self_us_per_iteration, diff.variant_self_us_per_iteration)
    # the generations are forked from one server per variant when the set-up's imports
    # are expensive: its hash seed and imported pages are every generation's, so the
    # interval may hold nothing of what differs between processes (the time lens decides)
    waited = max(baseline.waited_share, side.waited_share) > WAITED_SHARE
    return comparison_from(
        estimate,
        Subject(benchmark.name, TORCH, baseline.name, side.name),
        SideValues(values[0] * 1e3, values[1] * 1e3, "ns"),
        equivalence_band=settings.equivalence_band,
        details=replace(
            details,
            n_groups=estimate.n_groups,
            ratio_of=RATIO_OF_PACE if paced else RATIO_OF_SELF_CPU,
        ),
        one_process=True,
        withhold=WAITED if waited else None,
    )


def _details(baseline: _VariantOpTables, side: _VariantOpTables, diff: OpsDiff) -> TorchDetails:
    baseline_versions, baseline_capabilities = versions_of(baseline.tables)
    versions, capabilities = versions_of(side.tables)
    return TorchDetails(
        diff=diff,
        baseline_torch_versions=baseline_versions,
        variant_torch_versions=versions,
        baseline_cpu_capabilities=baseline_capabilities,
        variant_cpu_capabilities=capabilities,
        baseline_profiles=len(baseline.tables),
        variant_profiles=len(side.tables),
        n_groups=0,  # set from the estimate
        baseline_device=device_activity(baseline.tables),
        variant_device=device_activity(side.tables),
        kernel_changes=diff_kernels(kernel_slots(baseline.tables), kernel_slots(side.tables)),
    )
