"""The counters lens's section: events per iteration (with words that fit the event: more
context switches are 'higher', not 'slower'), derived metrics and AVX-512 use."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from perflab.lenses.counters.findings import Avx512Use, CounterFindings, VariantMetric
from perflab.lenses.fragments import (
    SectionInput,
    count_per_iteration_text,
    details_json,
    verdict_table,
)
from perflab.records.document import Block, Cell, Section, Table
from perflab.records.lens_findings import joined_rows
from perflab.records.model import Comparison
from perflab.records.units import format_value

# events whose count is time spent: more of them is slower
TIME_EVENTS = frozenset(
    {"task-clock", "cpu-clock", "cycles", "cpu-cycles", "ref-cycles", "duration_time"}
)


def is_time_event(event: str | None) -> bool:
    if event is None:
        return True
    name = event.split(":")[0]  # modifiers: cycles:u
    parts = [part for part in name.split("/") if part]  # a PMU's event: cpu/cycles/
    base = parts[1] if len(parts) > 1 else name
    return base in TIME_EVENTS or base.endswith("cycles")


def _value(comparison: Comparison, value: float) -> str:
    if comparison.unit == "count":
        return count_per_iteration_text(value, "")  # "2.5 per iteration", "1 per 818 iterations"
    return format_value(value, comparison.unit)


def _mine(view: SectionInput) -> list[CounterFindings]:
    """The counters lens's findings of the benchmarks of this experiment."""
    benchmarks = {b.name for b in view.experiment.benchmarks}
    return [
        f for f in view.findings if isinstance(f, CounterFindings) and f.benchmark in benchmarks
    ]


def family_caption(comparisons: Sequence[Comparison], confidence: float) -> str:
    """What the intervals' level means where several events are decided together."""
    families = {
        (d.get("family_events"), d.get("family_comparisons", 1), d.get("confidence"))
        for d in map(details_json, comparisons)
        if isinstance(d.get("family_events"), int)
        and d["family_events"] * d.get("family_comparisons", 1) > 1
    }
    if len(families) != 1:
        return ""
    ((events, pairs, level),) = families
    what = (
        f"the {events} events' intervals"
        if pairs == 1
        else f"the intervals of {events} events in each of {pairs} comparisons"
    )
    return (
        f"{what} hold together (each at {level:.2%}): "
        f"identical code gets no claim from any of them {confidence:.0%} of the time"
    )


def section(view: SectionInput) -> Section:
    """The counters lens's report section: its verdict table, derived metrics and findings."""
    verdicts = verdict_table(
        view.comparisons,
        cross_run=view.cross_run,
        value_text=_value,
        amount=lambda c: not is_time_event(c.event),
    )
    blocks: list[Block] = [
        replace(
            verdicts, caption=family_caption(view.comparisons, view.experiment.settings.confidence)
        )
    ]
    mine = _mine(view)
    derived = joined_rows([(f.benchmark, d) for d in f.derived_metrics] for f in mine)
    if derived:
        blocks.append(_derived_table(derived))
    joined = joined_rows([(f.benchmark, a) for a in f.avx512] for f in mine)
    avx = [(benchmark, a) for benchmark, a in joined if a.supported]
    if avx:
        blocks.append(_avx_table(avx))
    return Section("counters", tuple(blocks), key="counters")


def _derived_table(derived: list[tuple[str, VariantMetric]]) -> Table:
    return Table(
        ("benchmark", "variant", "metric", "value", "formula"),
        tuple(
            (
                Cell(benchmark),
                Cell(d.variant),
                Cell(d.metric.name),
                Cell(f"{d.metric.value:.4g} {d.metric.unit}".strip()),
                Cell(d.metric.formula),
            )
            for benchmark, d in derived
        ),
        numeric=(False, False, False, True, False),
        caption="derived metrics",
    )


def _avx_table(avx: list[tuple[str, Avx512Use]]) -> Table:
    return Table(
        ("benchmark", "variant", "samples with AVX-512", "control", "executed AVX-512"),
        tuple(
            (
                Cell(benchmark),
                Cell(a.variant),
                Cell(f"{a.samples_with_avx512} of {a.samples}"),
                Cell(f"{a.control_with_avx512} of {a.control_samples}"),
                Cell("yes" if a.executed_avx512 else "no"),
            )
            for benchmark, a in avx
        ),
        numeric=(False, False, True, True, False),
        caption="AVX-512 use in the measured region (/proc/PID/arch_status)",
    )
