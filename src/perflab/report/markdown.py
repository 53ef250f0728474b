"""Markdown for a pull request: the verdicts first, the details folded."""

from __future__ import annotations

from perflab.model import Verdict
from perflab.report.units import format_ratio, format_value
from perflab.results import RunResult

_ICONS = {
    Verdict.FASTER: "🟢 faster",
    Verdict.SLOWER: "🔴 slower",
    Verdict.EQUIVALENT: "⚪ equivalent",
    Verdict.INCONCLUSIVE: "🟡 inconclusive",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: RunResult) -> str:
    lines = [f"### perflab run {result.run_id} ({result.status.value})", ""]
    lines += [
        "| benchmark | metric | variant | baseline | variant | ratio [95% CI] | verdict |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for c in result.comparisons:
        metric = c.metric.value + (f" `{c.event}`" if c.event else "")
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    c.benchmark,
                    metric,
                    f"{c.variant} vs {c.baseline}",
                    format_value(c.baseline_value, c.unit),
                    format_value(c.variant_value, c.unit),
                    format_ratio(c.ratio, c.ci_low, c.ci_high),
                    _ICONS[c.verdict],
                )
            )
            + " |"
        )
    lines.append("")
    machine = result.machine
    lines.append(
        f"Machine: {machine.get('cpu_model', '?')}, {machine.get('cores')} cores, "
        f"kernel {machine.get('kernel')}, "
        + (
            f"pinned to CPU {machine['pinned_cpu']}."
            if machine.get("pinned_cpu") is not None
            else "not pinned."
        )
    )
    if result.differences:
        lines.append("Variants differ in: " + "; ".join(result.differences) + ".")
    if result.notes:
        lines += ["", "<details><summary>Notes</summary>", ""]
        for note in result.notes:
            where = ", ".join(x for x in (note.benchmark, note.variant) if x)
            lines.append(f"- **{note.severity.value}** {where}: {_cell(note.message)}")
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
