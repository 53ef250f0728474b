"""Paired ratios with confidence intervals computed where the randomness lives.

The design (docs/statistics.md): every variant has its own worker process; samples of all variants
alternate in blocks, so adjacent samples see the same machine state, and the log of
variant/baseline inside a block cancels slow drift. Per-process effects (memory layout, hash seeds,
placement) do *not* cancel inside a generation of workers: they are constant for its lifetime. So
samples are not independent. The unit of replication is the generation (or, for commands, a batch
of consecutive blocks): each contributes one robust (median) log ratio, and the confidence
interval is a Student t interval over those generation medians.

When several generations are forked from the same processes (the time lens's server rounds:
one fresh process per variant imports an expensive set-up once and forks a few generations'
workers), those generations share that process's per-process effects: its hash seed, and the
physical pages of everything it allocated before forking that its children only read. Then the
unit is the *round*: `units` maps each generation to its round, a round's value is the mean of
its generations' medians, and the interval is over rounds (docs/statistics.md, "Expensive
set-ups").
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from perflab.records.model import Sample
from perflab.stats.preemption import PREEMPTED_SHARE, Preemption, corrected, is_preempted


@dataclass(frozen=True)
class PairedLogRatio:
    """One block's variant-to-baseline log ratio of time per iteration, with the group it belongs
    to."""

    group: int  # generation (statements) or batch (commands)
    block: int
    log_ratio: float  # log(variant per-iteration / baseline per-iteration)


@dataclass(frozen=True)
class SampleGroups:
    """How samples form groups and units: `batch_blocks` blocks to a batch (commands; None:
    a generation per group), and `units` mapping groups to the unit they average into (a fork
    server's round; None: each group its own unit)."""

    batch_blocks: int | None = None
    units: Mapping[int, int] | None = None


BY_GENERATION = SampleGroups()  # a group per generation, each its own unit


@dataclass(frozen=True, kw_only=True)
class RatioEstimate:
    """variant/baseline with a confidence interval. CI bounds are inf/0 when not estimable."""

    ratio: float
    ci_low: float
    ci_high: float
    n_groups: int
    n_pairs: int
    between_group_sd: float  # SD of the group mean log ratios: the per-process effect plus noise
    confidence: float

    @property
    def log_half_width(self) -> float:
        """Half the CI width in log space (about the relative precision, 0.01 = ±1%)."""
        if self.ci_low <= 0 or math.isinf(self.ci_high):
            return math.inf
        return (math.log(self.ci_high) - math.log(self.ci_low)) / 2


def kept_pairs(
    baseline: Iterable[Sample],
    variant: Iterable[Sample],
    *,
    batch_blocks: int | None = None,
    preemption: Preemption = Preemption.KEEP,
    preempted_share: float = PREEMPTED_SHARE,
) -> list[tuple[int, Sample, Sample]]:
    """(group, variant sample, baseline sample) of every pair the decision uses, each sample as
    the decision uses it (corrected under `Preemption.CORRECT`). Pairs are samples measured in
    the same (generation, block), warm-up samples skipped.

    With `batch_blocks`, groups are consecutive batches of that many blocks instead of
    generations (for commands, where every sample is its own process). `preemption` says what
    happens to samples other processes interrupted (stats.preemption): excluded, the pair as a
    whole, so that neither variant loses more of its slow samples than the other; or corrected."""
    by_key = {(s.generation, s.block): s for s in baseline if not s.warmup}
    kept = []
    for sample in variant:
        if sample.warmup:
            continue
        partner = by_key.get((sample.generation, sample.block))
        if partner is None:
            continue
        if preemption is Preemption.EXCLUDE and (
            is_preempted(sample, preempted_share) or is_preempted(partner, preempted_share)
        ):
            continue
        if preemption is Preemption.CORRECT:
            sample, partner = corrected(sample), corrected(partner)
        if partner.per_iteration <= 0 or sample.per_iteration <= 0:
            continue
        group = sample.generation if batch_blocks is None else sample.block // batch_blocks
        kept.append((group, sample, partner))
    return kept


def pair_samples(
    baseline: Iterable[Sample],
    variant: Iterable[Sample],
    *,
    batch_blocks: int | None = None,
    preemption: Preemption = Preemption.KEEP,
    preempted_share: float = PREEMPTED_SHARE,
) -> list[PairedLogRatio]:
    """The log ratio of every pair `kept_pairs` keeps (same arguments)."""
    return [
        PairedLogRatio(
            group=group,
            block=sample.block,
            log_ratio=math.log(sample.per_iteration / partner.per_iteration),
        )
        for group, sample, partner in kept_pairs(
            baseline,
            variant,
            batch_blocks=batch_blocks,
            preemption=preemption,
            preempted_share=preempted_share,
        )
    ]


def own_log_values(
    samples: Iterable[Sample],
    *,
    batch_blocks: int | None = None,
    preemption: Preemption = Preemption.KEEP,
    preempted_share: float = PREEMPTED_SHARE,
) -> list[PairedLogRatio]:
    """One variant's samples alone, as log per-iteration values grouped as `pair_samples` groups
    pairs (generations, or batches of blocks): `estimate_ratio` of them is the variant's own
    time with its interval (a geometric mean over groups), for a run with no baseline. The same
    preemption policy applies, sample by sample."""
    values = []
    for sample in samples:
        if sample.warmup:
            continue
        if preemption is Preemption.EXCLUDE and is_preempted(sample, preempted_share):
            continue
        if preemption is Preemption.CORRECT:
            sample = corrected(sample)
        if sample.per_iteration <= 0:
            continue
        group = sample.generation if batch_blocks is None else sample.block // batch_blocks
        values.append(
            PairedLogRatio(
                group=group, block=sample.block, log_ratio=math.log(sample.per_iteration)
            )
        )
    return values


def group_means(pairs: Sequence[PairedLogRatio]) -> dict[int, float]:
    """Group (generation or batch) -> median log ratio of its pairs, in group order: the values
    the confidence interval is computed over.

    The median, not a mean: on a busy machine the measuring CPU switches between speeds (other
    processes' work on the host, time slices) within milliseconds, so a pair whose two samples
    fell on different sides of a switch is far off either way, and such pairs can be a large
    share of a generation; a trimmed mean keeps some of them and makes false claims where the
    median does not (docs/statistics.md)."""
    grouped: dict[int, list[float]] = defaultdict(list)
    for pair in pairs:
        grouped[pair.group].append(pair.log_ratio)
    # statistics.median: numpy's median of these few values, to the bit (the middle one, or
    # the two middle ones' sum halved), without its per-call cost, paid per group of every pair
    return {group: float(statistics.median(values)) for group, values in sorted(grouped.items())}


# Degrees of freedom 1..256 are computed together for each probability asked for: the next
# analysis's df is another small number, found among those kept (perflab.analyse.quantiles)
KEPT_DF = 256

# Where student_t_quantile reads a quantile from: set for a `with t_quantiles_from(...)` block and
# restored after it, so no test resets it; scipy's, outside any block
_T_QUANTILE: ContextVar[Callable[[float, int], float]] = ContextVar("t_quantile")


@contextmanager
def t_quantiles_from(source: Callable[[float, int], float]) -> Iterator[None]:
    """Within the block, `student_t_quantile` answers with `source(probability, df)` (an
    analysis's quantiles kept from earlier processes) instead of asking scipy."""
    token = _T_QUANTILE.set(source)
    try:
        yield
    finally:
        _T_QUANTILE.reset(token)


def student_t_quantile(probability: float, df: int) -> float:
    """Student's t quantile: the source `t_quantiles_from` names for this block, else
    scipy's (`scipy_t_quantile`)."""
    return _T_QUANTILE.get(scipy_t_quantile)(probability, df)


# a cache of a pure function (a forecast asks for the same quantiles thousands of times): no
# caller can tell it is there
@functools.lru_cache(maxsize=4096)
def scipy_t_quantile(probability: float, df: int) -> float:
    """Student's t quantile as scipy computes it. scipy is imported on first use, so a command
    that computes no interval does not pay for it; and from `scipy.special`, whose `stdtrit`
    is what `scipy.stats.t.ppf` evaluates, to the same bits, because it imports much faster
    than `scipy.stats`."""
    from scipy.special import stdtrit

    return float(stdtrit(df, probability))


def scipy_t_quantiles(probability: float, df: int) -> dict[tuple[float, int], float]:
    """(probability, df) -> scipy's quantile, for `df` and every df of 1..KEPT_DF, in one
    vectorised call (the same kernel, the same bits as `scipy_t_quantile`)."""
    from scipy.special import stdtrit

    found = {
        (probability, other): float(quantile)
        for other, quantile in enumerate(stdtrit(np.arange(1, KEPT_DF + 1), probability), 1)
    }
    found[(probability, df)] = scipy_t_quantile(probability, df)
    return found


def unit_means(
    pairs: Sequence[PairedLogRatio], units: Mapping[int, int] | None = None
) -> dict[int, float]:
    """Unit -> log ratio, in unit order: the group medians, or with `units` (group -> the
    unit it belongs to, e.g. generation -> server round) the mean of each unit's group medians
    (every group of a unit weighs the same). A group `units` does not name is a unit of its
    own, keyed -1 - group so it cannot meet a named unit."""
    means = group_means(pairs)
    if units is None:
        return means
    grouped: dict[int, list[float]] = defaultdict(list)
    for group, mean in means.items():
        grouped[units.get(group, -1 - group)].append(mean)
    return {unit: float(np.mean(values)) for unit, values in sorted(grouped.items())}


def estimate_ratio(
    pairs: Sequence[PairedLogRatio],
    confidence: float = 0.95,
    units: Mapping[int, int] | None = None,
) -> RatioEstimate:
    """Ratio = exp(mean of unit values); t interval over units (each weighs the same). The
    units are the groups (their medians), or what `units` maps them to (see `unit_means`)."""
    means = list(unit_means(pairs, units).values())
    if not means:
        return RatioEstimate(
            ratio=math.nan,
            ci_low=0.0,
            ci_high=math.inf,
            n_groups=0,
            n_pairs=0,
            between_group_sd=math.nan,
            confidence=confidence,
        )
    centre = float(np.mean(means))
    if len(means) < 2:
        return RatioEstimate(
            ratio=math.exp(centre),
            ci_low=0.0,
            ci_high=math.inf,
            n_groups=1,
            n_pairs=len(pairs),
            between_group_sd=math.nan,
            confidence=confidence,
        )
    sd = float(np.std(means, ddof=1))
    t_quantile = student_t_quantile(0.5 + confidence / 2, df=len(means) - 1)
    half = t_quantile * sd / math.sqrt(len(means))
    return RatioEstimate(
        ratio=math.exp(centre),
        ci_low=math.exp(centre - half),
        ci_high=math.exp(centre + half),
        n_groups=len(means),
        n_pairs=len(pairs),
        between_group_sd=sd,
        confidence=confidence,
    )


def needed_log_half_width(ratio: float, equivalence_band: float) -> float:
    """The CI half-width (log space) at which the current estimate would be decided: either the
    CI excludes 1, or it fits inside the band; whichever is reached first."""
    distance_from_one = abs(math.log(ratio))
    room_inside_band = math.log(1 + equivalence_band) - distance_from_one
    return max(distance_from_one, room_inside_band)


def extra_seconds_to_decide(
    estimate: RatioEstimate, equivalence_band: float, elapsed_s: float
) -> float | None:
    """How much longer to measure, at the same rate, for the CI to settle the question, assuming
    the point estimate holds and the width shrinks as 1/sqrt(n). None when it cannot be said."""
    if estimate.n_groups < 2 or math.isnan(estimate.ratio) or elapsed_s <= 0:
        return None
    needed = needed_log_half_width(estimate.ratio, equivalence_band)
    current = estimate.log_half_width
    if needed <= 1e-9 or math.isinf(current):
        return None
    if current <= needed:
        return 0.0
    return elapsed_s * ((current / needed) ** 2 - 1)
