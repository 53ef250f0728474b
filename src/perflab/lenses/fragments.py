"""What the lenses' render modules share: their input, the verdict table (built once, for every
lens and every format) and small text helpers. Output is :mod:`perflab.records.document` records."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.records.document import Cell, Paragraph, Style, Table
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_findings import LensFindings
from perflab.records.model import Comparison, Experiment, Measurement, Note
from perflab.records.run_facts import VariantInfo
from perflab.records.units import format_ratio, format_seconds, format_value

MAX_ROWS = 25  # per details table; the JSON export has the rest


@dataclass(frozen=True)
class SectionInput:
    """Everything analysis produced that a lens's section may show."""

    metric: Metric
    comparisons: tuple[Comparison, ...]
    experiment: Experiment
    # every lens's findings beyond its comparisons (a lens's section reads its own records)
    findings: tuple[LensFindings, ...] = ()
    variant_info: Mapping[str, VariantInfo] = field(default_factory=dict)
    notes: tuple[Note, ...] = ()
    cross_run: bool = False  # two stored runs compared: cannot be measured longer


VERDICT_STYLES = {
    Verdict.FASTER: Style.FASTER,
    Verdict.SLOWER: Style.SLOWER,
    Verdict.EQUIVALENT: Style.EQUIVALENT,
    Verdict.INCONCLUSIVE: Style.INCONCLUSIVE,
    Verdict.INVALID: Style.INVALID,
}
# For quantities where more is not slower (context switches, cache misses ...): the verdict
# values stay in the JSON; text says what the ratio says
AMOUNT_WORDS = {Verdict.FASTER: "lower", Verdict.SLOWER: "higher"}


def details_json(comparison: Comparison) -> dict[str, Any]:
    return comparison.details.to_json() if comparison.details is not None else {}


def pair_title(comparison: Comparison) -> str:
    return f"{comparison.benchmark}: {comparison.variant} vs {comparison.baseline}"


def count_per_iteration_text(value: float, what: str) -> str:
    """A count per iteration, readable however small: '3.2 misses per iteration',
    '1 per 11,110 iterations' rather than '9.001e-05'."""
    if math.isnan(value):
        return "-"
    if value != 0 and abs(value) < 0.1:
        return f"1 per {1 / abs(value):,.0f} iterations" + (" (negative)" if value < 0 else "")
    number = f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
    return f"{number} {what} per iteration".replace("  ", " ")


def spreads(details: Mapping[str, Any]) -> tuple[str, str]:
    base, var = details.get("baseline_spread"), details.get("variant_spread")
    if isinstance(base, float) and isinstance(var, float):
        return f" ±{base:.1%}", f" ±{var:.1%}"
    return "", ""


def verdict_cell(comparison: Comparison, *, cross_run: bool, amount: bool = False) -> Cell:
    """A comparison's verdict as a table cell, with the time it would still need when
    inconclusive."""
    word = comparison.verdict.value
    if amount:
        word = AMOUNT_WORDS.get(comparison.verdict, word)
    extra = details_json(comparison).get("extra_seconds_to_decide")
    if (
        not cross_run  # stored runs cannot be measured longer
        and comparison.verdict is Verdict.INCONCLUSIVE
        and isinstance(extra, int | float)
    ):
        word += f" (~{format_seconds(extra)} more)"
    return Cell(word, VERDICT_STYLES[comparison.verdict])


def default_value(comparison: Comparison, value: float) -> str:
    return format_value(value, comparison.unit)


def verdict_table(
    comparisons: Sequence[Comparison],
    *,
    cross_run: bool,
    value_text: Callable[[Comparison, float], str] = default_value,
    amount: Callable[[Comparison], bool] = lambda _: False,
    event_text: Callable[[Comparison], str] | None = None,
    title: str = "",
) -> Table:
    """The verdict table of one lens: one row per comparison. `event_text` names what a row
    measures (and adds the event column even where rows have no event)."""
    with_event = event_text is not None or any(c.event for c in comparisons)
    columns = ["benchmark", "variant", *(["event"] if with_event else [])]
    columns += ["baseline", "variant", "ratio [95% CI]", "verdict"]
    rows = []
    for c in comparisons:
        base_spread, var_spread = spreads(details_json(c))
        row = [Cell(c.benchmark), Cell(f"{c.variant} vs {c.baseline}")]
        if with_event:
            row.append(Cell(event_text(c) if event_text is not None else c.event or ""))
        row += [
            Cell(value_text(c, c.baseline_value) + base_spread),
            Cell(value_text(c, c.variant_value) + var_spread),
            Cell(format_ratio(c.ratio, c.ci_low, c.ci_high)),
            verdict_cell(c, cross_run=cross_run, amount=amount(c)),
        ]
        rows.append(tuple(row))
    numeric = tuple(
        i in (len(columns) - 4, len(columns) - 3, len(columns) - 2) for i in range(len(columns))
    )
    return Table(tuple(columns), tuple(rows), numeric=numeric, title=title)


def count(value: object) -> str:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.2f}"


def signed(value: object, text: Callable[[float], str] = count) -> Cell:
    if not isinstance(value, int | float):
        return Cell("-")
    style = Style.UP if value > 0 else Style.DOWN if value < 0 else Style.PLAIN
    return Cell(("+" if value > 0 else "") + text(value), style)


def share(value: object) -> str:
    return f"{value:.1%}" if isinstance(value, int | float) else "-"


def capped(
    rows: Sequence[tuple[Cell, ...]], limit: int = MAX_ROWS
) -> tuple[tuple[tuple[Cell, ...], ...], int]:
    return tuple(rows[:limit]), max(0, len(rows) - limit)


def listed(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(str(n) for n in names[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def evidence(lines: Sequence[object]) -> list[Paragraph]:
    """A claim's evidence in short form, under the claim: the checkable facts it rests on."""
    return [Paragraph(f"  evidence: {line}", Style.MUTED) for line in lines]


def measurement_table(measurements: Sequence[Measurement]) -> Table:
    """Each variant's own figure with its interval, for a run with nothing to compare it with:
    no ratio, no verdict."""
    columns = (
        "benchmark",
        "variant",
        "estimate per iteration [95% CI]",
        "raw median",
        "raw min … max",
        "samples",
    )
    rows = []
    for m in measurements:
        low, high = format_value(m.ci_low, m.unit), format_value(m.ci_high, m.unit)
        # one group (--runs 1) has no spread to make an interval from: said, not [0, inf]
        interval = f"[{low}, {high}]" if m.n_groups > 1 else "(one run: no interval)"
        rows.append(
            (
                Cell(m.benchmark),
                Cell(m.variant),
                Cell(f"{format_value(m.value, m.unit)} {interval}"),
                Cell(format_value(m.median, m.unit)),
                Cell(f"{format_value(m.min, m.unit)} … {format_value(m.max, m.unit)}"),
                Cell(f"{len(m.times)} in {m.n_groups} {plural(m.group_name, m.n_groups)}"),
            )
        )
    return Table(
        columns,
        tuple(rows),
        numeric=(False, False, True, True, True, True),
        caption=_measurement_caption(measurements),
    )


# how an estimate treats preempted samples, by --preempted policy
_PREEMPTED = {
    "correct": "the time other processes took taken out",
    "exclude": "preempted samples left out",
    "keep": "samples as measured",
}


def _measurement_caption(measurements: Sequence[Measurement]) -> str:
    """Which figures are perflab's estimate and which are the runs as measured."""
    kinds = {(m.estimator, m.preempted) for m in measurements}
    if len(kinds) == 1:
        ((estimator, preempted),) = kinds
        estimate = f"the geometric {estimator} ({_PREEMPTED.get(preempted, preempted)})"
    else:
        estimate = "perflab's estimate over the groups (--preempted applied)"
    return (
        f"measured alone: estimate = {estimate} and its interval, as for a ratio; raw median, "
        "min and max = the runs as measured, as hyperfine reports them (docs/glossary.md); "
        "give a second variant to compare"
    )


def plural(word: str, n: int) -> str:
    if n == 1:
        return word
    return word + ("es" if word.endswith(("ch", "sh", "s", "x")) else "s")
