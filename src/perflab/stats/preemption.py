"""Samples other processes interrupted: recognised from the measuring process's own scheduler
accounting, and what the decision does with them (docs/statistics.md, "Preempted samples").

Each time sample carries the time its process waited on a run queue while runnable
(`run_queue_ns`, from /proc/thread-self/schedstat) and its CPU time (`cpu_ns`), both read right
around the timed region. The time *lost to other processes* is the run-queue wait, but never more
than the sample's time off the CPU (`value - cpu_ns`): the run-queue reads sit just outside the
timed region, so a preemption right before or after it must not count; and time the benchmark
itself spent sleeping or waiting for I/O is off the CPU without being lost to anyone.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from perflab.records.model import Sample

# A sample that lost more than this share of its wall time to other processes was preempted:
# well above what an idle CPU's kernel threads take, well below what one time slice of another
# process costs a sample (docs/statistics.md; figures in bench/results/comment_figures.md).
PREEMPTED_SHARE = 0.02


class Preemption(enum.StrEnum):
    """What the time lens's decision does with preempted samples."""

    KEEP = "keep"  # as measured (the median per generation is the only protection)
    EXCLUDE = "exclude"  # drop every pair (block) with a preempted sample, both sides
    CORRECT = "correct"  # subtract the time lost to other processes from every sample


def lost_ns(sample: Sample) -> float:
    """Nanoseconds of the sample's wall time taken by other processes (0 when unknown)."""
    if sample.run_queue_ns is None or sample.run_queue_ns <= 0:
        return 0.0
    off_cpu = sample.value if sample.cpu_ns is None else max(0.0, sample.value - sample.cpu_ns)
    return float(min(sample.run_queue_ns, off_cpu))


def lost_share(sample: Sample) -> float:
    return lost_ns(sample) / sample.value if sample.value > 0 else 0.0


def is_preempted(sample: Sample, share: float = PREEMPTED_SHARE) -> bool:
    return lost_share(sample) > share


def corrected(sample: Sample) -> Sample:
    """The sample as if nothing had interrupted it: its lost time taken out."""
    lost = lost_ns(sample)
    return replace(sample, value=sample.value - lost) if lost > 0 else sample


def has_accounting(samples: Iterable[Sample]) -> bool:
    """True when the samples carry scheduler accounting (older runs and other lenses do not)."""
    return any(s.run_queue_ns is not None for s in samples)


@dataclass(frozen=True)
class PreemptionSummary:
    """How much of a benchmark's measuring other processes took."""

    n_samples: int  # measured (not warm-up) samples with accounting
    n_preempted: int
    lost_share: float  # time lost to other processes / wall time of those samples
    n_excluded: int = 0  # samples left out of the comparisons (both sides of each pair)

    def message(self, policy: Preemption) -> str:
        text = (
            f"other processes took {self.lost_share:.0%} of the measuring CPU during these "
            f"samples; {self.n_preempted} of {self.n_samples} samples were preempted"
        )
        if policy is Preemption.EXCLUDE:
            return text + f", {self.n_excluded} samples excluded with their pairs"
        if policy is Preemption.CORRECT:
            return text + ", their time lost to other processes was taken out"
        return text + " (kept as measured)"


def excluded_blocks(
    baseline: Iterable[Sample], variant: Iterable[Sample], share: float = PREEMPTED_SHARE
) -> set[tuple[int, int]]:
    """(generation, block) of the pairs that exclusion drops: either side preempted."""
    base = {(s.generation, s.block): s for s in baseline if not s.warmup}
    return {
        (s.generation, s.block)
        for s in variant
        if not s.warmup
        and (s.generation, s.block) in base
        and (is_preempted(s, share) or is_preempted(base[(s.generation, s.block)], share))
    }


def summarise_preemption(
    samples: Sequence[Sample],
    variants: Sequence[str],
    policy: Preemption,
    share: float = PREEMPTED_SHARE,
) -> PreemptionSummary:
    """Over one benchmark's time samples of `variants` (the first is the baseline)."""
    measured = [s for s in samples if not s.warmup and s.run_queue_ns is not None]
    wall = sum(s.value for s in measured)
    lost = sum(lost_ns(s) for s in measured)
    excluded: set[tuple[str, int, int]] = set()
    if policy is Preemption.EXCLUDE and variants:
        baseline = [s for s in measured if s.variant == variants[0]]
        for name in variants[1:]:
            blocks = excluded_blocks(baseline, [s for s in measured if s.variant == name], share)
            excluded |= {(who, g, b) for g, b in blocks for who in (variants[0], name)}
    return PreemptionSummary(
        n_samples=len(measured),
        n_preempted=sum(is_preempted(s, share) for s in measured),
        lost_share=lost / wall if wall > 0 else 0.0,
        n_excluded=len(excluded),
    )
