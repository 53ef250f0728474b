"""The torch lens's section: the ops torch.profiler saw per iteration and how they changed, and
each variant's torch version and CPU capability."""

from __future__ import annotations

from typing import Any

from perflab.lenses.fragments import (
    SectionInput,
    capped,
    details_json,
    listed,
    pair_title,
    signed,
    verdict_table,
)
from perflab.records.document import Block, Cell, Paragraph, Section, Style, Table
from perflab.records.model import Comparison


def _us(value: object) -> str:
    return f"{value:.3g}" if isinstance(value, int | float) else "-"


def section(view: SectionInput) -> Section:
    subsections = tuple(
        Section(pair_title(comparison), tuple(_pair_blocks(comparison)))
        for comparison in view.comparisons
    )
    table = verdict_table(view.comparisons, cross_run=view.cross_run)
    return Section("torch", (table,), subsections, key="torch")


def _pair_blocks(comparison: Comparison) -> list[Block]:
    data = details_json(comparison)
    blocks: list[Block] = [_versions_paragraph(data)]
    blocks += _ops_table(data.get("ops") or [])
    blocks += _device_blocks(comparison.baseline, comparison.variant, data)
    for key in ("appeared", "disappeared"):
        if data.get(key):
            blocks.append(
                Paragraph(f"ops {key} in {comparison.variant}: {listed(data[key])}", Style.EMPHASIS)
            )
    if data.get("ratio_basis"):
        blocks.append(Paragraph(f"ratio: {data['ratio_basis']}", Style.MUTED))
    return blocks


def _versions_paragraph(data: dict[str, Any]) -> Paragraph:
    base_v, var_v = data.get("baseline_torch_version"), data.get("variant_torch_version")
    base_isa, var_isa = data.get("baseline_cpu_capability"), data.get("variant_cpu_capability")
    versions = (
        f"torch {base_v or '?'} in both"
        if base_v == var_v
        else f"torch {base_v or '?'} → {var_v or '?'}"
    )
    capabilities = (
        f"CPU capability {base_isa or '?'} in both"
        if base_isa == var_isa
        else f"CPU capability {base_isa or '?'} → {var_isa or '?'}"
    )
    # a different kernel ISA explains time differences that no op-level change shows
    differs = base_isa != var_isa or base_v != var_v
    return Paragraph(f"{versions}; {capabilities}", Style.EMPHASIS if differs else Style.MUTED)


def _ops_table(ops: list[dict[str, Any]]) -> list[Block]:
    rows = []
    for op in ops:
        base_calls = op.get("baseline_calls_per_iteration", 0.0)
        var_calls = op.get("variant_calls_per_iteration", 0.0)
        base_us = op.get("baseline_self_us_per_iteration", 0.0)
        var_us = op.get("variant_self_us_per_iteration", 0.0)
        rows.append(
            (
                Cell(str(op.get("name", ""))),
                Cell(
                    f"{base_calls:.3g} → {var_calls:.3g}",
                    Style.EMPHASIS if base_calls != var_calls else Style.PLAIN,
                ),
                Cell(_us(base_us)),
                Cell(_us(var_us)),
                signed(var_us - base_us, lambda v: f"{v:.3f}"),
            )
        )
    shown, omitted = capped(rows)
    if not shown:
        return []
    return [
        Table(
            ("op", "calls per iteration", "self µs (baseline)", "self µs (variant)", "Δ self µs"),
            shown,
            numeric=(False, True, True, True, True),
            caption="torch.profiler ops per iteration",
            omitted_rows=omitted,
        )
    ]


def _device_line(name: str, device: dict[str, Any]) -> str:
    wait = device.get("wait_us_per_iteration")
    waiting = f", {_us(wait)} µs waiting for it" if wait else ""
    return (
        f"{name}: {_us(device.get('host_us_per_iteration'))} µs on the host (dispatch and "
        f"launches), {_us(device.get('device_us_per_iteration'))} µs on the device{waiting} per "
        f"iteration; {_us(device.get('launches_per_iteration'))} kernel launches, "
        f"{_us(device.get('copies_per_iteration'))} copies per iteration: "
        f"{device.get('bound', '?')}"
    )


# What each pair of bounds means for the question behind a GPU comparison.
_BOUND_MEANING = {
    ("launch-bound", "launch-bound"): "launch-bound in both: the host's dispatch and launches "
    "set the pace, so a change to them shows in time",
    ("device-bound", "device-bound"): "device-bound in both: the kernels set the pace, so "
    "host-side savings do not show in time while the host keeps ahead of the device",
}


def _bound_paragraph(baseline: dict[str, Any], variant: dict[str, Any]) -> Paragraph:
    bounds = (str(baseline.get("bound", "?")), str(variant.get("bound", "?")))
    meaning = _BOUND_MEANING.get(bounds, f"{bounds[0]} → {bounds[1]}: what sets the pace changed")
    return Paragraph(meaning, Style.EMPHASIS)


def _device_blocks(baseline: str, variant: str, data: dict[str, Any]) -> list[Block]:
    """Host vs device time per variant, and the kernels that ran, where CUDA was profiled."""
    sides = [(baseline, data.get("baseline_device")), (variant, data.get("variant_device"))]
    present = [(name, device) for name, device in sides if isinstance(device, dict)]
    if not present:
        return []
    blocks: list[Block] = [
        Paragraph("; ".join(_device_line(name, device) for name, device in present))
    ]
    if len(present) == 2:
        (_, base_device), (_, variant_device) = present
        blocks.append(_bound_paragraph(base_device, variant_device))
    changes = data.get("kernel_changes")
    blocks += _slot_table(changes) if changes else _kernel_table(present)
    return blocks


def _slot_table(changes: list[dict[str, Any]]) -> list[Block]:
    """Per op and slot: the kernel each variant ran there (a rename reads 'a → b')."""
    rows = []
    for change in changes:
        base, var = change.get("baseline_kernel"), change.get("variant_kernel")
        kernel = str(base or var) if base == var or not (base and var) else f"{base} → {var}"
        where = "" if base and var else (" (baseline only)" if base else " (variant only)")
        base_us = change.get("baseline_device_us_per_iteration", 0.0)
        var_us = change.get("variant_device_us_per_iteration", 0.0)
        rows.append(
            (
                Cell(f"{change.get('op', '')} {change.get('kind', '')} {change.get('ordinal', 0)}"),
                Cell(
                    kernel + where,
                    Style.EMPHASIS if change.get("renamed") or where else Style.PLAIN,
                ),
                Cell(
                    f"{_us(change.get('baseline_calls_per_iteration'))} → "
                    f"{_us(change.get('variant_calls_per_iteration'))}"
                ),
                Cell(_us(base_us)),
                Cell(_us(var_us)),
                signed(var_us - base_us, lambda v: f"{v:.3g}"),
            )
        )
    shown, omitted = capped(rows)
    return [
        Table(
            (
                "op, launch",
                "kernel",
                "launches per iteration",
                "device µs (baseline)",
                "device µs (variant)",
                "Δ device µs",
            ),
            shown,
            numeric=(False, False, True, True, True, True),
            caption="what each op launched on the device, paired by op and launch order",
            omitted_rows=omitted,
        )
    ]


def _kernel_table(present: list[tuple[str, dict[str, Any]]]) -> list[Block]:
    """The kernels by name per variant: results stored before kernels were paired."""
    rows = []
    for name, device in present:
        for kernel in device.get("kernels") or []:
            rows.append(
                (
                    Cell(name),
                    Cell(str(kernel.get("name", ""))),
                    Cell(_us(kernel.get("calls_per_iteration"))),
                    Cell(_us(kernel.get("device_us_per_iteration"))),
                )
            )
    shown, omitted = capped(rows)
    if not shown:
        return []
    return [
        Table(
            ("variant", "kernel", "launches per iteration", "device µs per iteration"),
            shown,
            numeric=(False, False, True, True),
            caption="kernels torch.profiler saw on the device",
            omitted_rows=omitted,
        )
    ]
