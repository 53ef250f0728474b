"""What analysis says of one compared pair: the functions that account for its difference
(`Cause`) and the paragraph joining the lenses (`Summary`). Made by perflab.analyse.causes and
perflab.analyse.explanation; a record here so a `RunResult` carries it without reaching up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Cause:
    """A function whose own cost per iteration moved with the difference, and by how much."""

    function: str
    object: str
    delta_per_iteration: float
    share: float  # of the whole difference (variant - baseline)
    unit: str
    evidence: tuple[str, ...]
    # a function that ran in the variant only in place of `function`, which ran in the
    # baseline only: the delta is their net change
    replaced_by: str = ""
    baseline_per_iteration: float = 0.0
    variant_per_iteration: float = 0.0

    def named(self, shown: Callable[[str], str] = str) -> str:
        """The function, and what replaced it, as `shown` names them."""
        if not self.replaced_by:
            return shown(self.function)
        return f"{shown(self.function)} → {shown(self.replaced_by)}"

    def words(self, shown: Callable[[str], str] = str) -> str:
        """The cause in the summary's paragraph, its functions named as `shown` names them."""
        delta = signed_text(self.delta_per_iteration, self.unit)
        if not self.replaced_by:
            return f"{delta} {shown(self.function)}"
        return (
            f"{shown(self.function)} ({self.baseline_per_iteration:,.0f}) → "
            f"{shown(self.replaced_by)} ({self.variant_per_iteration:,.0f}), {delta}"
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "function": self.function,
            "object": self.object,
            "delta_per_iteration": self.delta_per_iteration,
            "share": self.share,
            "unit": self.unit,
            "evidence": list(self.evidence),
        }
        if self.replaced_by:
            out["replaced_by"] = self.replaced_by
            out["baseline_per_iteration"] = self.baseline_per_iteration
            out["variant_per_iteration"] = self.variant_per_iteration
        return out


@dataclass(frozen=True)
class Summary:
    """One paragraph per compared pair joining the lenses, with the causes it names."""

    benchmark: str
    baseline: str
    variant: str
    text: str
    causes: tuple[Cause, ...] = ()
    source: str = ""  # the lens whose difference is accounted for
    difference: float | None = None  # variant - baseline, per iteration
    unit: str = ""
    accounted: float | None = None  # the causes' share of the difference together
    unchanged: tuple[str, ...] = ()  # what was checked and found the same
    changed_not_run: tuple[str, ...] = ()  # changes in code that did not run: not causes
    # what the CPU ran differently (profile, asm) where the counting lens's tool ran the same
    # code in both (the name is the API's and the JSON's)
    valgrind_ran_other_code: tuple[str, ...] = ()
    # pairs one ran in place of the other whose net change moved against the difference (the
    # causes are then what was added around them), and that added work by object
    replaced: tuple[Cause, ...] = ()
    added_by_object: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "baseline": self.baseline,
            "variant": self.variant,
            "summary": {
                "text": self.text,
                "causes": [cause.to_json() for cause in self.causes],
                "source": self.source,
                "difference_per_iteration": self.difference,
                "unit": self.unit,
                "accounted_share": self.accounted,
                "unchanged": list(self.unchanged),
                "changed_not_run": list(self.changed_not_run),
                "valgrind_ran_other_code": list(self.valgrind_ran_other_code),
                "replaced": [cause.to_json() for cause in self.replaced],
                "added_by_object": [
                    {"object": obj, "delta_per_iteration": delta}
                    for obj, delta in self.added_by_object
                ],
            },
        }


def signed_text(value: float, unit: str) -> str:
    return f"{value:+,.0f}" + (" ns" if unit == "ns" else "")
