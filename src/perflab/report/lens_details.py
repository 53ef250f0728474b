"""Terminal tables for what a lens found beyond the ratio: the functions whose instruction counts
changed, the hot symbols of a profile, the assembly summaries, the torch ops that changed. They
read the comparison's JSON fields (the documented contract), not the lenses' internals."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from perflab.model import Comparison, Metric

MAX_ROWS = 12


def _title(comparison: Comparison, what: str) -> str:
    return f"{comparison.benchmark}: {what}, {comparison.variant} vs {comparison.baseline}"


def _signed(value: float, digits: int = 0) -> str:
    return f"{value:+,.{digits}f}"


def instructions_details(comparison: Comparison, data: Mapping[str, Any]) -> list[RenderableType]:
    functions = sorted(data.get("functions", []), key=lambda f: -abs(f.get("delta", 0.0)))
    changed = [f for f in functions if f.get("delta")]
    out: list[RenderableType] = []
    if changed:
        table = Table(
            title=_title(comparison, "functions whose instructions per iteration changed most"),
            title_justify="left",
        )
        for column in ("function", "object", "baseline", "variant", "delta (self)"):
            table.add_column(
                column, justify="left" if column in ("function", "object") else "right"
            )
        for function in changed[:MAX_ROWS]:
            style = "red" if function["delta"] > 0 else "green"
            table.add_row(
                Text(function["name"]),
                Text(function.get("object", "")),
                f"{function.get('baseline', 0):,.1f}",
                f"{function.get('variant', 0):,.1f}",
                Text(_signed(function["delta"], 1), style=style),
            )
        if len(changed) > MAX_ROWS:
            table.caption = f"{len(changed) - MAX_ROWS} more in the JSON output"
        out.append(table)
    for change in data.get("inlining_changes", []):
        sentence = change.get("sentence") or f"{change['function']} is now {change['change']}"
        out.append(Text(f"inlining: {sentence}", style="bold magenta"))
        out += _evidence(change.get("evidence", []))
    return out


def _evidence(lines: Sequence[str]) -> list[RenderableType]:
    """A claim's evidence in short form, under the claim: the checkable facts it rests on."""
    return [Text(f"  evidence: {line}", style="dim") for line in lines]


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def profile_details(comparison: Comparison, data: Mapping[str, Any]) -> list[RenderableType]:
    symbols = data.get("symbols", [])
    out: list[RenderableType] = []
    if symbols:
        event = data.get("sampled_event", "samples")
        table = Table(title=_title(comparison, f"hot symbols ({event})"), title_justify="left")
        for column in ("symbol", "object", "baseline", "variant", "change"):
            table.add_column(column, justify="left" if column in ("symbol", "object") else "right")
        for symbol in symbols[:MAX_ROWS]:
            delta = (symbol.get("variant_share") or 0.0) - (symbol.get("baseline_share") or 0.0)
            table.add_row(
                Text(symbol["name"]),
                Text(symbol.get("object", "")),
                _share(symbol.get("baseline_share")),
                _share(symbol.get("variant_share")),
                Text(f"{delta:+.1%}", style="red" if delta > 0 else "green" if delta < 0 else ""),
            )
        out.append(table)
    for key in ("appeared", "disappeared"):
        names = data.get(key, [])
        if names:
            shown = ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")
            out.append(Text(f"{key} in {comparison.variant}: {shown}", style="magenta"))
    for diagnosis in data.get("diagnoses", [])[:8]:
        out += _evidence(diagnosis.get("evidence", []))
    return out


def asm_details(comparison: Comparison, data: Mapping[str, Any]) -> list[RenderableType]:
    functions = data.get("functions", [])
    if not functions:
        return []
    table = Table(title=_title(comparison, "hot functions' machine code"), title_justify="left")
    for column in ("function", "size (bytes)", "vector bits", "hot loop (bytes)", "what changed"):
        table.add_column(column, overflow="fold")
    for function in functions[:MAX_ROWS]:
        base, var = function.get("baseline") or {}, function.get("variant") or {}
        table.add_row(
            Text(function["name"]),
            f"{base.get('size_bytes', '-')} → {var.get('size_bytes', '-')}",
            f"{base.get('vector_width_bits', '-')} → {var.get('vector_width_bits', '-')}",
            f"{_loop_size(base)} → {_loop_size(var)}",
            Text(function.get("change", "")),
        )
    return [table, Text("side by side: perflab show RUN --asm FUNCTION", style="dim")]


def _loop_size(side: Mapping[str, Any]) -> str:
    loop = side.get("hot_loop") or {}
    return str(loop.get("size_bytes", "-"))


def torch_details(comparison: Comparison, data: Mapping[str, Any]) -> list[RenderableType]:
    ops = data.get("ops", [])
    out: list[RenderableType] = []
    if ops:
        table = Table(
            title=_title(comparison, "torch.profiler ops per iteration"), title_justify="left"
        )
        for column in ("op", "calls", "self µs (baseline)", "self µs (variant)", "self µs change"):
            table.add_column(column, justify="left" if column == "op" else "right")
        for op in ops[:MAX_ROWS]:
            base_calls = op.get("baseline_calls_per_iteration", 0.0)
            var_calls = op.get("variant_calls_per_iteration", 0.0)
            base_us = op.get("baseline_self_us_per_iteration", 0.0)
            var_us = op.get("variant_self_us_per_iteration", 0.0)
            delta = var_us - base_us
            table.add_row(
                Text(op["name"]),
                Text(
                    f"{base_calls:.3g} → {var_calls:.3g}",
                    style="bold" if base_calls != var_calls else "",
                ),
                f"{base_us:.3g}",
                f"{var_us:.3g}",
                Text(_signed(delta, 3), style="red" if delta > 0 else "green" if delta < 0 else ""),
            )
        if len(ops) > MAX_ROWS:
            table.caption = f"{len(ops) - MAX_ROWS} more in the JSON output"
        out.append(table)
    for key in ("appeared", "disappeared"):
        names = data.get(key, [])
        if names:
            shown = ", ".join(names[:8]) + (f" (+{len(names) - 8} more)" if len(names) > 8 else "")
            out.append(Text(f"ops {key} in {comparison.variant}: {shown}", style="magenta"))
    base_isa = data.get("baseline_cpu_capability")
    var_isa = data.get("variant_cpu_capability")
    if base_isa != var_isa:
        # a different kernel ISA explains time differences that no op-level change shows
        out.append(Text(f"torch CPU capability: {base_isa} → {var_isa}", style="magenta"))
    return out


_RENDERERS: dict[Metric, Callable[[Comparison, Mapping[str, Any]], list[RenderableType]]] = {
    Metric.INSTRUCTIONS: instructions_details,
    Metric.PROFILE: profile_details,
    Metric.ASM: asm_details,
    Metric.TORCH: torch_details,
}


def lens_details(comparisons: Sequence[Comparison]) -> list[RenderableType]:
    out: list[RenderableType] = []
    for comparison in comparisons:
        render = _RENDERERS.get(comparison.metric)
        if render is not None and comparison.event is None:
            out += render(comparison, comparison.to_json())
    return out
