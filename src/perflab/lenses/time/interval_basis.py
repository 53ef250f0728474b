"""The interval a time comparison's verdict is read off, from the samples so far: the stopping
rule (lenses/time/bookkeeping.py) and the analysis (lenses/time/analyse.py) both take it from
`interval_basis`, so an early stop looks at the interval the verdict will be read off."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from perflab.records.model import Sample
from perflab.stats import preemption
from perflab.stats.overload import OverloadCheck, overload_check
from perflab.stats.paired import (
    BY_GENERATION,
    PairedLogRatio,
    RatioEstimate,
    SampleGroups,
    estimate_ratio,
    pair_samples,
)
from perflab.stats.trimmed import trimmed_ratio


@dataclass(frozen=True)
class IntervalBasis:
    """One comparison's interval and what it is computed from (its pairs, the units' mean, the
    overload check), from the samples so far; not the verdict, which the analysis reads off
    `estimate`. The stopping rule and the analysis both take it from `interval_basis`, so an
    early stop looks at the interval the verdict will be read off."""

    pairs: list[PairedLogRatio]  # the log ratios the interval is over
    mean: RatioEstimate  # the units' mean: the stopping rule's confidence sequence lies around it
    estimate: RatioEstimate  # the interval the verdict is read off (trimmed, widened by overload)
    check: OverloadCheck | None  # stats.overload; None without scheduler accounting

    @property
    def overloaded(self) -> bool:
        return self.check is not None and self.check.seen


def interval_basis(
    baseline: Sequence[Sample],
    variant: Sequence[Sample],
    *,
    confidence: float,
    policy: preemption.Preemption,
    groups: SampleGroups = BY_GENERATION,
    shared_cpu_with: Sequence[int] = (),
) -> IntervalBasis | None:
    """The interval of one comparison: the units' mean (statements) or trimmed mean (commands,
    robust to the units a slow CPU spoiled), widened by the overload check (which counts
    another perflab run on the measuring CPU, `shared_cpu_with`, as overload); None when
    nothing was measured. Samples as stored, warm-up included."""
    batch_blocks = groups.batch_blocks
    pairs = pair_samples(baseline, variant, batch_blocks=batch_blocks, preemption=policy)
    if not pairs and not pair_samples(baseline, variant, batch_blocks=batch_blocks):
        return None  # nothing measured; excluding every pair leaves an undecided comparison
    mean = estimate_ratio(pairs, confidence, groups.units)
    estimate = trimmed_ratio(pairs, confidence) if batch_blocks is not None else mean
    check = overload_check(
        baseline, variant, estimate, groups=groups, shared_cpu_with=shared_cpu_with
    )
    if check is not None and check.seen:
        estimate = replace(estimate, ci_low=check.ci_low, ci_high=check.ci_high)
    return IntervalBasis(pairs=pairs, mean=mean, estimate=estimate, check=check)
