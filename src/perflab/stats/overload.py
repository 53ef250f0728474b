"""When taking preempted time out of the samples cannot repair them (docs/statistics.md,
"Overload").

Correcting a preempted sample removes the time it waited on the run queue. What it does not
remove is what the preemption did to the rest of the sample: the other process's cache and
branch-predictor state, or a CPU slowed by its sibling's load. That shows as *CPU time* per
iteration growing in preempted samples. When both variants are preempted alike, the growth hits
both and the ratio holds; when one variant is preempted far more often than the other, or the
growth is large, the corrected ratio is biased, and a tight interval around it misses the truth
(the measured case is in docs/statistics.md).

So, for each comparison, two signs are checked on the samples as measured (and a third is
known beforehand: another perflab run measured on the same CPU, each taking turns with the
other, which is overload whatever the samples show):

- **uneven preemption**: the variants' shares of preempted samples differ by more than
  `UNEVEN_SHARE` and by more than `UNEVEN_Z` standard errors;
- **CPU growth**: inside a group (generation, batch), a variant's preempted samples use more
  than `CPU_GROWTH` more CPU time per iteration than its unpreempted ones (the median over groups).

When either is seen, the interval is widened twice. First to the hull of itself and the
interval of the pairs where neither sample was preempted (what no correction touched), when
those still make `MIN_CLEAN_UNITS` units. Then by the growth itself, on the side each growth
pushes: an unpreempted sample can still start right after another process ran (between samples
the worker waits for its next request, outside the timed region), so it may carry one refill
too: at most what a preemption costs, which is the growth (under heavy load the unpreempted
pairs alone missed the reference too: docs/statistics.md). When a preempted side's growth
cannot be measured, the hull alone is kept; when no unpreempted pairs remain either, nothing
bounds the bias: the interval becomes (0, inf) and the verdict `inconclusive`.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perflab.records.model import Sample
from perflab.stats.paired import RatioEstimate, estimate_ratio, kept_pairs, pair_samples
from perflab.stats.preemption import PREEMPTED_SHARE, Preemption, is_preempted

# Shares of preempted samples this far apart (absolute), and this many standard errors apart,
# are uneven: an A/A's shares differ by chance only, a few points at the usual few hundred pairs.
UNEVEN_SHARE = 0.10
UNEVEN_Z = 3.0
# Preempted samples using this much more CPU per iteration than unpreempted ones of the same
# group: a preemption costs the statement more than its run-queue wait (a cache refill is a few
# percent of a 2 ms sample; a slowed CPU is tens of percent).
CPU_GROWTH = 0.05
MIN_GROWTH_GROUPS = 3  # groups with both kinds of sample before growth is estimated
MIN_CLEAN_UNITS = 3  # units of unpreempted pairs before their interval is trusted (t: 4.3)

NONE = "none"
WIDENED_TO_UNPREEMPTED = "widened to the unpreempted pairs"
WIDENED_BY_GROWTH = "widened by the CPU growth"
WIDENED_BOTH = "widened to the unpreempted pairs and by the CPU growth"
UNBOUNDED = "unbounded"


@dataclass(frozen=True)
class OverloadCheck:
    """What the samples say about load the correction cannot repair, and the interval that
    holds despite it (`ci_low`, `ci_high`: the input interval when nothing was seen)."""

    preempted_baseline: float  # share of the baseline's paired samples that were preempted
    preempted_variant: float
    uneven: bool
    cpu_growth_baseline: float | None  # preempted / unpreempted CPU per iteration, minus one
    cpu_growth_variant: float | None
    grows: bool
    unpreempted: RatioEstimate | None  # from the pairs where neither sample was preempted
    ci_low: float
    ci_high: float
    action: str
    # pids of other perflab runs that held the measuring CPU while this one measured (0: unknown)
    shared_cpu_with: tuple[int, ...] = ()

    @property
    def seen(self) -> bool:
        return self.uneven or self.grows or bool(self.shared_cpu_with)

    def to_json(self) -> dict[str, Any]:
        clean = self.unpreempted
        return {
            "preempted_baseline": self.preempted_baseline,
            "preempted_variant": self.preempted_variant,
            "uneven_preemption": self.uneven,
            "cpu_growth_baseline": self.cpu_growth_baseline,
            "cpu_growth_variant": self.cpu_growth_variant,
            "cpu_grows": self.grows,
            "unpreempted_ratio": _finite(clean.ratio) if clean else None,
            "unpreempted_ci_low": _finite(clean.ci_low) if clean else None,
            "unpreempted_ci_high": _finite(clean.ci_high) if clean else None,
            "unpreempted_groups": clean.n_groups if clean else 0,
            "action": self.action,
            "shared_cpu_with": list(self.shared_cpu_with),
        }

    def message(self, baseline: str, variant: str) -> str:
        """Why the interval was widened, naming the cause, and what it now holds."""
        causes = []
        if self.shared_cpu_with:
            who = ", ".join(f"pid {pid or '?'}" for pid in self.shared_cpu_with)
            causes.append(
                f"another perflab run ({who}) held the measuring CPU and measured on it too, "
                "so the two took turns on it"
            )
        if self.uneven:
            causes.append(
                f"`{variant}`'s samples were preempted {self.preempted_variant:.0%} of the "
                f"time and `{baseline}`'s {self.preempted_baseline:.0%}"
            )
        if self.grows:
            grown = [
                f"`{name}`'s {growth:+.0%}"
                for name, growth in (
                    (baseline, self.cpu_growth_baseline),
                    (variant, self.cpu_growth_variant),
                )
                if growth is not None and growth > CPU_GROWTH
            ]
            causes.append(
                "preempted samples used more CPU time per iteration than unpreempted ones ("
                + ", ".join(grown)
                + ")"
            )
        text = "; ".join(causes) + ": taking the run-queue time out cannot repair that, so "
        clean = self.unpreempted
        if self.action == UNBOUNDED:
            return text + (
                "and too few unpreempted samples remain to bound it, the verdict is inconclusive"
            )
        done = []
        if self.action in (WIDENED_TO_UNPREEMPTED, WIDENED_BOTH) and clean is not None:
            done.append(
                "to hold the ratio of the pairs neither of whose samples was preempted, "
                f"{clean.ratio:.3f} [{clean.ci_low:.3f}, {clean.ci_high:.3f}] over "
                f"{clean.n_groups} groups"
            )
        if self.action in (WIDENED_BY_GROWTH, WIDENED_BOTH):
            done.append(
                "by the CPU time a preemption costs, which any sample may carry once, "
                f"to [{self.ci_low:.3f}, {self.ci_high:.3f}]"
            )
        return text + "the interval was widened " + ", and ".join(done)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def preempted_shares(
    kept: Sequence[tuple[int, Sample, Sample]], share: float = PREEMPTED_SHARE
) -> tuple[float, float, int]:
    """(baseline's share preempted, variant's, pairs) over pairs as measured."""
    n = len(kept)
    if not n:
        return 0.0, 0.0, 0
    variant = sum(is_preempted(v, share) for _, v, _ in kept) / n
    baseline = sum(is_preempted(b, share) for _, _, b in kept) / n
    return baseline, variant, n


def uneven_preemption(baseline: float, variant: float, n: int) -> bool:
    """The two shares differ beyond chance: by UNEVEN_SHARE and UNEVEN_Z standard errors of a
    difference of two proportions of `n` samples each."""
    difference = abs(variant - baseline)
    if difference <= UNEVEN_SHARE:
        return False
    pooled = (baseline + variant) / 2
    error = math.sqrt(2 * pooled * (1 - pooled) / n) if n else 0.0
    return error == 0 or difference / error > UNEVEN_Z


def cpu_growth(
    samples: Iterable[tuple[int, Sample]], share: float = PREEMPTED_SHARE
) -> float | None:
    """How much more CPU time per iteration one variant's preempted samples used than its
    unpreempted ones: per group (so per-process effects cancel), the log of the ratio of their
    medians; the median over groups, as a relative growth. None with fewer than
    MIN_GROWTH_GROUPS groups holding both kinds of sample, or without CPU times."""
    grouped: dict[int, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for group, sample in samples:
        if sample.cpu_ns is None or sample.cpu_ns <= 0 or sample.loops <= 0:
            continue
        grouped[group][0 if is_preempted(sample, share) else 1].append(sample.cpu_ns / sample.loops)
    logs = [
        math.log(statistics.median(preempted) / statistics.median(whole))
        for preempted, whole in grouped.values()
        if preempted and whole
    ]
    if len(logs) < MIN_GROWTH_GROUPS:
        return None
    return math.exp(statistics.median(logs)) - 1


def overload_check(
    baseline: Sequence[Sample],
    variant: Sequence[Sample],
    estimate: RatioEstimate,
    *,
    batch_blocks: int | None = None,
    units: Mapping[int, int] | None = None,
    share: float = PREEMPTED_SHARE,
    shared_cpu_with: Sequence[int] = (),
) -> OverloadCheck | None:
    """The check of one comparison (its samples as stored, and the interval the decision made of
    them); None when the samples carry no scheduler accounting. `shared_cpu_with`: the other
    perflab runs known to have measured on the same CPU; the interval is then widened as for
    the signs the samples show."""
    measured = [
        (group, v, b)
        for group, v, b in kept_pairs(baseline, variant, batch_blocks=batch_blocks)
        if v.run_queue_ns is not None and b.run_queue_ns is not None
    ]
    if not measured:
        return None
    share_baseline, share_variant, n = preempted_shares(measured, share)
    uneven = uneven_preemption(share_baseline, share_variant, n)
    growth_baseline = cpu_growth(((g, b) for g, _, b in measured), share)
    growth_variant = cpu_growth(((g, v) for g, v, _ in measured), share)
    grows = any(x is not None and x > CPU_GROWTH for x in (growth_baseline, growth_variant))
    clean = None
    low, high, action = estimate.ci_low, estimate.ci_high, NONE
    if uneven or grows or shared_cpu_with:
        clean = _unpreempted(baseline, variant, estimate, batch_blocks, units, share)
        growths = _growths((share_baseline, growth_baseline), (share_variant, growth_variant))
        low, high, action = _widened(estimate, clean, growths)
    return OverloadCheck(
        preempted_baseline=share_baseline,
        preempted_variant=share_variant,
        uneven=uneven,
        cpu_growth_baseline=growth_baseline,
        cpu_growth_variant=growth_variant,
        grows=grows,
        unpreempted=clean,
        ci_low=low,
        ci_high=high,
        action=action,
        shared_cpu_with=tuple(shared_cpu_with),
    )


def _unpreempted(
    baseline: Sequence[Sample],
    variant: Sequence[Sample],
    estimate: RatioEstimate,
    batch_blocks: int | None,
    units: Mapping[int, int] | None,
    share: float,
) -> RatioEstimate:
    """The ratio of the pairs neither of whose samples was preempted."""
    pairs = pair_samples(
        baseline,
        variant,
        batch_blocks=batch_blocks,
        preemption=Preemption.EXCLUDE,
        preempted_share=share,
    )
    return estimate_ratio(pairs, estimate.confidence, units)


def _widened(
    estimate: RatioEstimate, clean: RatioEstimate, growths: tuple[float, float] | None
) -> tuple[float, float, str]:
    """The interval, and how it was widened: to hold the unpreempted pairs' interval (when
    enough units are left), then by each side's CPU growth; unbounded when neither can be
    known."""
    low, high = estimate.ci_low, estimate.ci_high
    hull = clean.n_groups >= MIN_CLEAN_UNITS and math.isfinite(clean.log_half_width)
    if hull:
        low, high = min(low, clean.ci_low), max(high, clean.ci_high)
    if growths is not None and low > 0 and math.isfinite(high):
        low, high = low / (1 + growths[1]), high * (1 + growths[0])
        return low, high, WIDENED_BOTH if hull else WIDENED_BY_GROWTH
    if hull:
        return low, high, WIDENED_TO_UNPREEMPTED
    return 0.0, math.inf, UNBOUNDED


def _growths(
    baseline: tuple[float, float | None], variant: tuple[float, float | None]
) -> tuple[float, float] | None:
    """(baseline's, variant's) growth, at least 0, from each side's (preempted share, growth):
    a side never preempted grew by nothing; None when a preempted side's growth could not be
    measured (another side's says nothing of it: two interpreters under one load grew apart)."""
    out = []
    for share, growth in (baseline, variant):
        if growth is None:
            if share > 0:
                return None
            growth = 0.0
        out.append(max(0.0, growth))
    return out[0], out[1]
