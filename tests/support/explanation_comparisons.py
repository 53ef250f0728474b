"""One pair's comparisons as the explanation reads them (py311 against py312 on benchmark b):
details as raw JSON, an instructions comparison from its function rows, a lens's claims as its
diagnoses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison


@dataclass(frozen=True)
class Raw:
    """Details that are their JSON, as a stored comparison's read back."""

    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def row(name: str, before: float, after: float, presence: str = "both") -> dict[str, Any]:
    """A function's row of the instructions lens's JSON, counts per iteration."""
    return {"name": name, "object": "libpython3.11.so.1.0", "variant_object":
            "libpython3.12.so.1.0", "baseline": before, "variant": after, "delta": after - before,
            "presence": presence}  # fmt: skip


def comparison(
    metric: Metric, before: float, after: float, data: dict[str, Any], *,
    verdict: Verdict = Verdict.FASTER, ci: tuple[float, float] | None = None,
) -> Comparison:  # fmt: skip
    """`metric`'s comparison of py312 with py311 on b, its details `data`."""
    ratio = after / before
    low, high = ci or (ratio, ratio)
    return Comparison(
        benchmark="b",
        metric=metric,
        baseline="py311",
        variant="py312",
        ratio=ratio,
        ci_low=low,
        ci_high=high,
        verdict=verdict,
        baseline_value=before,
        variant_value=after,
        unit="x",
        details=Raw(data),
    )


def instructions(
    functions: list[dict[str, Any]], before: float, after: float, **kw: Any
) -> Comparison:
    """The instructions lens's comparison, from its function rows and totals per iteration."""
    data = {"baseline_per_iteration": before, "variant_per_iteration": after,
            "functions": functions, "identical_objects": ["libc.so.6"]}  # fmt: skip
    return comparison(Metric.INSTRUCTIONS, before, after, data, **kw)
