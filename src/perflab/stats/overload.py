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

When one is seen, the interval is bounded by the evidence, in proportion to how much of it the
load touched:

1. With `MIN_CLEAN_UNITS` units of pairs neither of whose samples was preempted, the interval is
   theirs (what no preemption touched), widened by what the load can still have put in them: an
   unpreempted sample may start cold, right after another process ran (during the sample before
   it, or in the wait between samples, outside the timed region), and carry one preemption's
   cost. Cold starts that hit both variants alike move no ratio (they are noise, which the
   units' spread holds); what biases it is one variant starting cold more often than the other.
   That excess is counted where it can be seen (the share of each variant's unpreempted samples
   measured right after a preempted one) and bounded where it cannot (the wait between samples:
   by the difference of the variants' preempted shares). A unit's value is a median, so an
   excess of k cold starts among a group's pairs moves it by at most k ranks, and never by more
   than a preemption costs (the CPU growth). Even preemption, rare or frequent, widens it by
   little; preemption that follows one variant by up to the growth.
2. With fewer, the corrected interval is widened by each side's whole growth, on the side it
   pushes (any sample may carry one preemption's cost).

A side that was preempted but whose growth cannot be measured (too few of its samples ran
undisturbed, or so few that half of them may have started cold) is assumed to cost at most
`ASSUMED_COST` where the bound needs it: the interval stays finite, but it rests on an
assumption (`undecided`), so the verdict is `faster` or `slower` only where the whole interval
lies beyond what processes of the same code differ by, and never `equivalent`.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from perflab.records.model import Sample
from perflab.stats.comparison import ONE_PROCESS_ALLOWANCE
from perflab.stats.paired import (
    BY_GENERATION,
    PairedLogRatio,
    RatioEstimate,
    SampleGroups,
    estimate_ratio,
    kept_pairs,
    pair_samples,
)
from perflab.stats.preemption import PREEMPTED_SHARE, Preemption, is_preempted
from perflab.stats.sequential import seconds_to_decide

# Shares of preempted samples this far apart (absolute), and this many standard errors apart,
# are uneven: an A/A's shares differ by chance only, a few points at the usual few hundred pairs.
UNEVEN_SHARE = 0.10
UNEVEN_Z = 3.0
# Preempted samples using this much more CPU per iteration than unpreempted ones of the same
# group: a preemption costs the statement more than its run-queue wait (above what a cache
# refill costs a short sample, below what a slowed CPU costs it).
CPU_GROWTH = 0.05
MIN_GROWTH_GROUPS = 3  # groups with both kinds of sample before growth is estimated
# Standard errors of the chance imbalance of cold starts bounded beside the seen one: the units'
# spread holds most of it (bench/results/preemption_coverage_2026-11-28.md)
CHANCE_SE = 0.5
MIN_CLEAN_PAIRS = 5  # a group's unpreempted pairs before its median counts (_in_full_groups)
MIN_CLEAN_UNITS = 3  # units of unpreempted pairs before their interval is trusted (t: 4.3)
# What a preemption is assumed to cost a side whose cost cannot be measured: doubling its CPU
# time, above every growth measured (docs/statistics.md, "Overload"). The verdict then claims a
# difference only far beyond the interval's ends (stats.comparison.verdict_for, one_process).
ASSUMED_COST = 1.0


class OverloadAction(enum.StrEnum):
    """What was done to the interval for the load (the JSON's `overload.action`)."""

    NONE = "none"
    FROM_UNPREEMPTED = "from the unpreempted pairs, widened by the cold starts"
    WIDENED_BY_GROWTH = "widened by the CPU growth"
    # the bias rests on ASSUMED_COST: finite interval, a claim only far off
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
    action: OverloadAction
    # pids of other perflab runs that held the measuring CPU while this one measured (0: unknown)
    shared_cpu_with: tuple[int, ...] = ()
    # how far (log) the interval's ends were moved out for the load, past the interval they
    # started from (the unpreempted pairs', or the corrected one)
    widened_low: float = 0.0
    widened_high: float = 0.0
    # the bound rests on ASSUMED_COST for a side whose cost could not be measured: the verdict
    # claims a difference only beyond ONE_PROCESS_ALLOWANCE, never equivalence
    undecided: bool = False
    # share of each variant's unpreempted samples measured right after a preempted sample
    after_preempted_baseline: float = 0.0
    after_preempted_variant: float = 0.0

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
            "action": str(self.action),
            "shared_cpu_with": list(self.shared_cpu_with),
            "widened_low": self.widened_low,
            "widened_high": self.widened_high,
            "undecided": self.undecided,
            "after_preempted_baseline": self.after_preempted_baseline,
            "after_preempted_variant": self.after_preempted_variant,
        }

    def message(self, baseline: str, variant: str) -> str:
        """Why the interval was widened, naming the cause, and what it now holds."""
        text = "; ".join(self._causes(baseline, variant))
        text += ": taking the run-queue time out cannot repair that, so "
        clean = self.unpreempted
        interval = f"[{self.ci_low:.3f}, {self.ci_high:.3f}]"
        if self.action is OverloadAction.FROM_UNPREEMPTED and clean is not None:
            return text + (
                "the interval is that of the pairs neither of whose samples was preempted, "
                f"{clean.ratio:.3f} [{clean.ci_low:.3f}, {clean.ci_high:.3f}] over "
                f"{clean.n_groups} groups, widened by what other processes can have left in "
                "the samples of one variant that started right after them more often than the "
                f"other's ({self.after_preempted_baseline:.0%} of `{baseline}`'s and "
                f"{self.after_preempted_variant:.0%} of `{variant}`'s ran right after a "
                f"preempted sample) to {interval}" + self._assumed(baseline, variant)
            )
        groups = clean.n_groups if clean is not None else 0
        return text + (
            f"with too few pairs that no preemption touched ({groups} groups) the interval was "
            "widened by the CPU time a preemption costs, which any sample may carry once, "
            f"to {interval}" + self._assumed(baseline, variant)
        )

    def _causes(self, baseline: str, variant: str) -> list[str]:
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
        return causes

    def _assumed(self, baseline: str, variant: str) -> str:
        if not self.undecided:
            return ""
        cold = cold_share(self.preempted_baseline, self.preempted_variant)
        names = [
            f"`{name}`'s"
            for name, share, growth in (
                (baseline, self.preempted_baseline, self.cpu_growth_baseline),
                (variant, self.preempted_variant, self.cpu_growth_variant),
            )
            if _PreemptionEvidence.of(share, growth, cold).assumed
        ]
        return (
            f"; too few of {' and '.join(names)} samples ran undisturbed (not right after "
            "another process) to measure what a preemption costs, so the interval assumes at "
            f"most {ASSUMED_COST:+.0%}, and the verdict is faster or slower only where that "
            f"interval lies wholly beyond ±{ONE_PROCESS_ALLOWANCE:.0%}, never equivalent"
        )


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
    medians; the median over groups, as a relative growth. None with fewer than MIN_GROWTH_GROUPS
    groups holding both kinds of sample, or without CPU times."""
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


@dataclass(frozen=True)
class _PreemptionEvidence:
    """One variant's evidence: the share of its samples preempted, and what a preemption
    costs it (log of one plus its CPU growth; ASSUMED_COST's when it could not be measured)."""

    share: float
    cost: float
    assumed: bool

    @classmethod
    def of(cls, share: float, growth: float | None, cold: float) -> _PreemptionEvidence:
        """`cold`: the share of unpreempted samples that may have started cold (`cold_share`);
        from half of them on, the unpreempted samples a growth is measured against may be
        cold ones themselves, and the growth says nothing of the cost."""
        if share == 0:
            return cls(0.0, 0.0, False)
        if growth is not None and 2 * cold < 1:
            return cls(share, math.log1p(max(0.0, growth)), False)
        measured = math.log1p(max(0.0, growth)) if growth is not None else 0.0
        return cls(share, max(measured, math.log1p(ASSUMED_COST)), True)


@dataclass(frozen=True)
class ColdStarts:
    """What can be told of the unpreempted samples that started right after another process:
    the share of each variant's measured right after a preempted sample, and how long the wait
    between samples is next to a sample (another process that comes in that wait leaves the
    next sample cold unseen; it comes there about as often, per second, as it preempts)."""

    after_baseline: float
    after_variant: float
    gap_to_sample: float
    # the standard error of the two `after` shares' difference: how far apart chance alone
    # puts them (the units' spread holds most of that; CHANCE_SE of it is bounded besides)
    chance: float = 0.0

    @classmethod
    def of(
        cls, baseline: Sequence[Sample], variant: Sequence[Sample], share: float = PREEMPTED_SHARE
    ) -> ColdStarts:
        ordered = sorted(
            [(s, 0) for s in baseline] + [(s, 1) for s in variant],
            key=lambda item: (item[0].at_ns, item[0].generation, item[0].block, item[0].position),
        )
        after = [0, 0]
        unpreempted = [0, 0]
        gaps: list[float] = []
        previous: Sample | None = None
        previous_hit = False
        for sample, side in ordered:
            hit = is_preempted(sample, share)
            if not hit and not sample.warmup:
                unpreempted[side] += 1
                after[side] += previous_hit
            if previous is not None and sample.value > 0:
                # at_ns is stamped as a sample ends: what is left of the time between two
                # ends once the later sample's own time is taken out
                gaps.append(max(0.0, sample.at_ns - previous.at_ns - sample.value) / sample.value)
            previous, previous_hit = sample, hit
        baseline_share, variant_share = (
            a / n if n else 0.0 for a, n in zip(after, unpreempted, strict=True)
        )
        pooled = sum(after) / sum(unpreempted) if all(unpreempted) else 0.0
        chance = (
            math.sqrt(pooled * (1 - pooled) * sum(1 / n for n in unpreempted))
            if all(unpreempted)
            else 0.0
        )
        # no time stamps (older stores): the wait taken as long as a sample
        stamped = bool(ordered) and ordered[-1][0].at_ns > 0
        gap = min(1.0, statistics.median(gaps)) if gaps and stamped else 1.0
        return cls(baseline_share, variant_share, gap, chance)

    def excess(self, shares: tuple[float, float]) -> tuple[float, float]:
        """The shares of pairs in which the baseline (first) or the variant (second) may have
        started cold more often than the other: the seen excess, plus what the wait between
        samples can add where another process comes more often around one variant than the
        other (the preempted shares' difference, scaled to the wait's length)."""
        unseen = abs(shares[0] - shares[1]) * self.gap_to_sample + CHANCE_SE * self.chance
        return (
            min(1.0, max(0.0, self.after_baseline - self.after_variant) + unseen),
            min(1.0, max(0.0, self.after_variant - self.after_baseline) + unseen),
        )


def _borrowed(
    baseline: _PreemptionEvidence, variant: _PreemptionEvidence
) -> tuple[_PreemptionEvidence, _PreemptionEvidence]:
    """A side never preempted can still start cold after the other's preemptions: what that
    costs it is taken as what a preemption costs the other side (same machine, same load)."""
    if baseline.share == 0 and variant.share > 0:
        baseline = _PreemptionEvidence(0.0, variant.cost, variant.assumed)
    elif variant.share == 0 and baseline.share > 0:
        variant = _PreemptionEvidence(0.0, baseline.cost, baseline.assumed)
    return baseline, variant


def cold_share(baseline: float, variant: float) -> float:
    """Share of either variant's unpreempted samples that may have started cold, right after
    another process ran: during the sample before it (either variant's, then preempted) or in
    the short wait between samples; taken as the two shares of preempted samples added."""
    return min(1.0, baseline + variant)


def overload_check(
    baseline: Sequence[Sample],
    variant: Sequence[Sample],
    estimate: RatioEstimate,
    *,
    groups: SampleGroups = BY_GENERATION,
    share: float = PREEMPTED_SHARE,
    shared_cpu_with: Sequence[int] = (),
) -> OverloadCheck | None:
    """The check of one comparison (its samples as stored, and the interval the decision made of
    them); None when the samples carry no scheduler accounting. `shared_cpu_with`: the other
    perflab runs known to have measured on the same CPU; the interval is then bounded as for
    the signs the samples show."""
    measured = [
        (group, v, b)
        for group, v, b in kept_pairs(baseline, variant, batch_blocks=groups.batch_blocks)
        if v.run_queue_ns is not None and b.run_queue_ns is not None
    ]
    if not measured:
        return None
    check = _signs(measured, estimate, share, tuple(shared_cpu_with))
    if not check.seen:
        return check
    return _bounded(check, (baseline, variant), estimate, groups, share)


def _signs(
    measured: Sequence[tuple[int, Sample, Sample]],
    estimate: RatioEstimate,
    share: float,
    shared_cpu_with: tuple[int, ...],
) -> OverloadCheck:
    """What the measured pairs (group, variant, baseline) show of overload, the interval still
    `estimate`'s."""
    share_baseline, share_variant, n = preempted_shares(measured, share)
    growth_baseline = cpu_growth(((g, b) for g, _, b in measured), share)
    growth_variant = cpu_growth(((g, v) for g, v, _ in measured), share)
    return OverloadCheck(
        preempted_baseline=share_baseline,
        preempted_variant=share_variant,
        uneven=uneven_preemption(share_baseline, share_variant, n),
        cpu_growth_baseline=growth_baseline,
        cpu_growth_variant=growth_variant,
        grows=any(x is not None and x > CPU_GROWTH for x in (growth_baseline, growth_variant)),
        unpreempted=None,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        action=OverloadAction.NONE,
        shared_cpu_with=shared_cpu_with,
    )


def _bounded(
    check: OverloadCheck,
    samples: tuple[Sequence[Sample], Sequence[Sample]],
    estimate: RatioEstimate,
    groups: SampleGroups,
    share: float,
) -> OverloadCheck:
    """`check` with the interval bounded for the overload it saw: from the unpreempted pairs
    where enough units kept them, else by how much CPU time grew under preemption."""
    baseline, variant = samples
    shares = (check.preempted_baseline, check.preempted_variant)
    pairs = pair_samples(
        baseline,
        variant,
        batch_blocks=groups.batch_blocks,
        preemption=Preemption.EXCLUDE,
        preempted_share=share,
    )
    pairs = _in_full_groups(pairs)
    clean = estimate_ratio(pairs, estimate.confidence, groups.units)
    cold = cold_share(*shares)
    sides = _borrowed(
        _PreemptionEvidence.of(shares[0], check.cpu_growth_baseline, cold),
        _PreemptionEvidence.of(shares[1], check.cpu_growth_variant, cold),
    )
    cold_starts = ColdStarts.of(baseline, variant, share)
    excess = cold_starts.excess(shares)
    bounded = _from_unpreempted(clean, pairs, groups.units, sides, excess) or _by_growth(
        estimate, sides
    )
    bounded["after_preempted_baseline"] = cold_starts.after_baseline
    bounded["after_preempted_variant"] = cold_starts.after_variant
    if estimate.ratio > 0 and bounded["ci_low"] > 0:
        # the interval holds the ratio reported beside it (the corrected one)
        bounded["ci_low"] = min(bounded["ci_low"], estimate.ratio)
        bounded["ci_high"] = max(bounded["ci_high"], estimate.ratio)
    return replace(check, unpreempted=clean, **bounded)


def _in_full_groups(pairs: Sequence[PairedLogRatio]) -> list[PairedLogRatio]:
    """The unpreempted pairs of the groups that kept MIN_CLEAN_PAIRS of them: a group that load
    left one or two pairs has a median as noisy as those, yet would weigh as much as any."""
    counts: dict[int, int] = defaultdict(int)
    for pair in pairs:
        counts[pair.group] += 1
    return [pair for pair in pairs if counts[pair.group] >= MIN_CLEAN_PAIRS]


def _from_unpreempted(
    clean: RatioEstimate,
    pairs: Sequence[PairedLogRatio],
    units: Mapping[int, int] | None,
    sides: tuple[_PreemptionEvidence, _PreemptionEvidence],
    excess: tuple[float, float],
) -> dict[str, Any] | None:
    """The unpreempted pairs' interval, widened by one variant's cold starts in excess of the
    other's (`ColdStarts.excess`: at most k ranks of each group's median, at most a preemption's
    cost); None with too few of them."""
    if clean.n_groups < MIN_CLEAN_UNITS or not math.isfinite(clean.log_half_width):
        return None
    baseline, variant = sides
    grouped: dict[int, list[float]] = defaultdict(list)
    for pair in pairs:
        grouped[pair.group].append(pair.log_ratio)
    # the baseline's excess of cold starts lowers a group's ratio (the truth may be higher),
    # the variant's raises it
    up, up_assumed = _unit_mean(grouped, units, baseline, excess[0], upward=True)
    down, down_assumed = _unit_mean(grouped, units, variant, excess[1], upward=False)
    return {
        "ci_low": clean.ci_low * math.exp(-down),
        "ci_high": clean.ci_high * math.exp(up),
        "action": OverloadAction.FROM_UNPREEMPTED,
        "widened_low": down,
        "widened_high": up,
        "undecided": up_assumed or down_assumed,
    }


def _unit_mean(
    grouped: Mapping[int, list[float]],
    units: Mapping[int, int] | None,
    side: _PreemptionEvidence,
    excess: float,
    *,
    upward: bool,
) -> tuple[float, bool]:
    """How far (log) one side's excess of cold starts (a share of pairs) can have moved the
    units' mean, and whether that rests on the assumed cost: per group the lesser of the rank
    bound and the cost, averaged as the units average their groups."""
    shifts: dict[int, float] = {}
    assumed = False
    for group, values in grouped.items():
        # as many ranks as cold starts are expected, each rank's shift at most a preemption's
        # cost, between whole ranks pro rata (a small group's one possible cold start moves
        # its median by at most the cost, times the chance that it came)
        expected = excess * len(values)
        whole = math.floor(expected)
        rank = median_shift(values, whole, upward=upward)
        shift = min(rank, side.cost)
        if expected > whole:
            further = median_shift(values, whole + 1, upward=upward)
            shift += (expected - whole) * (min(further, side.cost) - shift)
        shifts[group] = shift
        # the verdict rests on the assumed cost where a whole expected cold start could move
        # the median further than it (a fraction of one is weighed by its chance above)
        assumed |= side.assumed and rank > side.cost
    by_unit: dict[int, list[float]] = defaultdict(list)
    for group, shift in shifts.items():
        by_unit[group if units is None else units.get(group, -1 - group)].append(shift)
    return float(np.mean([np.mean(v) for v in by_unit.values()])), assumed


def median_shift(values: Sequence[float], k: int, *, upward: bool) -> float:
    """The most the median of `values` can move (up, or down) when any `k` of them are
    replaced by other values: to the median with the k lowest (highest) gone to the other
    end; inf when that is half of them or more."""
    if k <= 0:
        return 0.0
    ordered = sorted(values)
    if 2 * k >= len(ordered):
        return math.inf
    centre = float(np.median(ordered))
    if upward:
        return float(np.median(ordered[k:] + [math.inf] * k)) - centre
    return centre - float(np.median([-math.inf] * k + ordered[:-k]))


def _by_growth(
    estimate: RatioEstimate, sides: tuple[_PreemptionEvidence, _PreemptionEvidence]
) -> dict[str, Any]:
    """The corrected interval widened by each side's whole cost, on the side it pushes."""
    baseline, variant = sides
    undecided = baseline.assumed or variant.assumed
    return {
        # one unit or none leaves the estimate's own (0, inf): nothing to widen yet
        "ci_low": estimate.ci_low * math.exp(-variant.cost),
        "ci_high": estimate.ci_high * math.exp(baseline.cost),
        "action": OverloadAction.UNBOUNDED if undecided else OverloadAction.WIDENED_BY_GROWTH,
        "widened_low": variant.cost,
        "widened_high": baseline.cost,
        "undecided": undecided,
    }


def seconds_to_decide_under_load(
    check: OverloadCheck, equivalence_band: float, elapsed_s: float
) -> float | None:
    """How much more budget (seconds at this run's rate) would decide a comparison the load
    left undecided: the unpreempted pairs' interval narrows as they accrue, the widening for
    the load stays. None when that widening alone keeps it from deciding, or when no pair ran
    undisturbed (measuring longer at this load does not help)."""
    clean = check.unpreempted
    if clean is None or clean.n_groups == 0 or not clean.ratio > 0:
        return None
    band = math.log1p(equivalence_band)
    if check.action is OverloadAction.FROM_UNPREEMPTED:
        if check.widened_low + check.widened_high >= band:
            return None
        widened = replace(clean, ci_low=check.ci_low, ci_high=check.ci_high)
        return seconds_to_decide(widened, equivalence_band, elapsed_s)
    # too few unpreempted units: the time they take to reach MIN_CLEAN_UNITS and their
    # interval to decide, unless preemption is so frequent that their cold starts would
    # widen it by a whole preemption's cost then
    if 2 * cold_share(check.preempted_baseline, check.preempted_variant) >= 1:
        return None
    reach = elapsed_s * max(0.0, MIN_CLEAN_UNITS / clean.n_groups - 1)
    decide = seconds_to_decide(clean, equivalence_band, elapsed_s) if clean.n_groups >= 2 else None
    return reach + (decide or 0.0)
