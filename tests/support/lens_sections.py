"""Comparisons and an experiment to build a lens's section from, and a table's cells to read it
by: what the tests of the lenses' renderers share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.records.document import Table
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, Comparison, Experiment, Variant
from perflab.records.settings import Settings

EXPERIMENT = Experiment(
    benchmarks=(Benchmark("b", stmt="x"),),
    variants=(Variant("A"), Variant("B")),
    settings=Settings(metrics=(Metric.COUNTERS, Metric.INSTRUCTIONS)),
)


@dataclass(frozen=True)
class Fields:
    fields: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.fields


def comparison(
    metric: Metric, event: str | None, unit: str, verdict: Verdict, **fields: Any
) -> Comparison:
    return Comparison(
        benchmark="b",
        metric=metric,
        baseline="A",
        variant="B",
        ratio=1.4,
        ci_low=1.2,
        ci_high=1.6,
        verdict=verdict,
        baseline_value=9.001e-05,
        variant_value=2.5,
        unit=unit,
        event=event,
        details=Fields(fields) if fields else None,
    )


def cells(table: Table, column: str) -> list[str]:
    # the last column of that name: "variant" names the pair first, then holds the value
    index = len(table.columns) - 1 - table.columns[::-1].index(column)
    return [row[index].text for row in table.rows]
