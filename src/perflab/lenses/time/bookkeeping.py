"""What the time lens's two sessions share: the budget's share, the stopping rule, the notes on
overrun and early stops, and the other perflab runs on the measuring CPU (`TimeBookkeeping`, a
value each session holds beside its `LensSession`)."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence

from perflab.lenses.time.artifacts import KIND_SHARED_CPU
from perflab.lenses.time.interval_basis import IntervalBasis, interval_basis
from perflab.lenses.time.metric import TIME
from perflab.machine import cpu_lock
from perflab.measure.session import LensSession
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Artifact, Note, Sample, Severity
from perflab.stats import preemption
from perflab.stats.family import family_confidence, run_family_size
from perflab.stats.paired import RatioEstimate, SampleGroups, estimate_ratio, own_log_values
from perflab.stats.sequential import MIN_UNITS_TO_STOP_EARLY, decided_agree, may_stop_early

# a stop this much short of the share is said (a note), so that a plan is read against it
EARLY_STOP_SAID = 0.9

STOP_CHECK_INTERVAL_S = 0.25  # commands: how often the stopping rule is evaluated

OVERRUN_FACTOR = 1.5  # measuring longer than this times the budget is worth a note

# Commands: the interval's unit is a batch of consecutive blocks lasting about this long (the
# pair ratios of blocks closer in time were correlated under load: docs/statistics.md), or this
# many to the share the lens has left after the warm-up when that is shorter; its size is fixed
# once, so the units form the sequence the stopping rule needs.
COMMAND_UNIT_S = 1.0
COMMAND_UNITS_IN_SHARE = 10

# Busy machine: when this share of the first generation's samples was preempted, the later
# generations' samples last about this long: a shorter sample fits between other processes'
# time slices, so far fewer are preempted and more pairs narrow the interval, even beside a
# single busy loop (docs/statistics.md).
LOADED_PREEMPTED_FRACTION = 0.05
LOADED_SAMPLE_MS = 2.0


class TimeBookkeeping:
    """What the time lens's two sessions share, over the `LensSession` they hold too: the
    budget, the samples so far, progress, when to stop, and the notes on how it went."""

    def __init__(self, session: LensSession) -> None:
        self.session = session
        self.samples: list[Sample] = []
        # its share of the benchmark's budget
        self.budget_s = max(1e-3, session.context.lens_budget_s)
        self.units: dict[int, int] = {}  # generation -> server round, when forked in rounds
        self.shared_cpu_with: tuple[int, ...] = ()  # other perflab runs on the measuring CPU
        # the wall clock, not the session's: other processes write the lock's marks in it
        self.started_wall_s = time.time()
        self.was_precise = False  # the stopping rule found every comparison precise enough
        # variants that failed while the others were measured on (by index), with why
        self.failed: dict[int, BenchmarkFailedError] = {}

    def record(self, sample: Sample) -> None:
        self.samples.append(sample)
        self.session.context.sink.add_sample(sample)

    def interval_bases(self, batch_blocks: int | None = None) -> list[IntervalBasis]:
        """Every comparison as the analysis will decide it (`interval_basis`), from the samples
        so far; with one variant, its own time, by the same precision."""
        baseline = [s for s in self.samples if s.variant == self.session.variants[0].name]
        policy = preemption.Preemption(self.session.settings.preempted)
        units = self.units or None
        if len(self.session.variants) == 1:
            own = own_log_values(baseline, batch_blocks=batch_blocks, preemption=policy)
            estimate = estimate_ratio(own, self.session.settings.confidence, units=units)
            return [IntervalBasis(pairs=own, mean=estimate, estimate=estimate, check=None)]
        confidence = family_confidence(
            self.session.settings.confidence, run_family_size(self.session.context.experiment)
        )
        shared_cpu_with = self.other_runs_on_cpu()
        bases = []
        for index, variant in enumerate(self.session.variants[1:], 1):
            if index in self.failed:  # compared with nothing: no reason to measure on
                continue
            samples = [s for s in self.samples if s.variant == variant.name]
            basis = interval_basis(
                baseline,
                samples,
                confidence=confidence,
                policy=policy,
                groups=SampleGroups(batch_blocks, units),
                shared_cpu_with=shared_cpu_with,
            )
            if basis is None:  # nothing measured yet: nothing to stop on
                nothing = estimate_ratio([], confidence)
                basis = IntervalBasis(pairs=[], mean=nothing, estimate=nothing, check=None)
            bases.append(basis)
        return bases

    def other_runs_on_cpu(self) -> tuple[int, ...]:
        """The other perflab runs that have measured on the measuring CPU so far: the one
        holding it (this run shares it after waiting) and those that joined it (this run or
        another holds it), less those that take turns with this one; each recorded for the
        analysis, which counts it as overload, as the stopping rule does."""
        cpu = self.session.context.cpu
        if cpu is None:
            return ()
        others = set(cpu_lock.joined(cpu, self.started_wall_s, remove_ended=False))
        holder = cpu_lock.holder(cpu)
        if holder is not None and holder != os.getpid():
            others.add(holder)
        turns = self.session.context.turns
        if turns is not None:  # runs taking turns with this one sample only between its blocks
            others -= turns.partners | set(turns.takers())
        new = sorted(others - set(self.shared_cpu_with))
        if new:
            self.shared_cpu_with += tuple(new)
            self.session.context.sink.add_artifact(
                Artifact(
                    benchmark=self.session.benchmark.name,
                    variant=self.session.variants[0].name,
                    metric=TIME,
                    kind=KIND_SHARED_CPU,
                    content=json.dumps({"cpu": cpu, "pids": new}),
                )
            )
        return self.shared_cpu_with

    def precision_reached(self, bases: list[IntervalBasis]) -> bool:
        """Whether to stop early (`may_stop_after`), remembered for the early-stop note."""
        precise = may_stop_after(
            bases,
            self.session.settings.target_precision,
            equivalence_band=self.session.settings.equivalence_band,
            confidence=self.session.settings.confidence,
            family=run_family_size(self.session.context.experiment),
        )
        self.was_precise = self.was_precise or precise
        return precise

    def note_early_stop(self) -> None:
        """A lens that stopped once every comparison was precise enough says so: the rest of
        its share was not needed (a plan is what it may take; the budget note reads it)."""
        took_s = self.session.elapsed_s()
        if not self.was_precise or took_s >= EARLY_STOP_SAID * self.budget_s:
            return
        self.session.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"the time lens stopped after {took_s:.1f} s of its "
                f"{self.budget_s:.1f} s: every comparison was precise enough",
                benchmark=self.session.benchmark.name,
                metric=TIME,
            )
        )

    def note_overrun(self) -> None:
        """Minimums (generations, blocks, warm-up) win over the budget: say so when they did."""
        elapsed_s = self.session.elapsed_s()
        if elapsed_s <= OVERRUN_FACTOR * self.budget_s:
            return
        self.session.context.sink.add_note(
            Note(
                severity=Severity.INFO,
                message=f"measuring took {elapsed_s:.0f} s, more than the budget of "
                f"{self.budget_s:.3g} s, to reach the minimum of "
                f"{self.session.settings.min_generations} generations (each with warm-up)",
                hint="samples are long here: lower --min-generations or --sample-ms, or "
                "raise --budget to make the budget the limit",
                benchmark=self.session.benchmark.name,
                metric=TIME,
            )
        )

    def stop_after(self, what: str, *, minimums_met: bool) -> bool:
        """After a generation: report progress, and stop once the minimums are met and the
        estimates are precise enough or the share is spent."""
        bases = self.interval_bases()
        self.report(what, bases)
        return minimums_met and (
            self.precision_reached(bases) or self.session.elapsed_s() >= self.budget_s
        )

    def report(self, what: str, bases: list[IntervalBasis]) -> None:
        widths = [
            d.estimate.log_half_width for d in bases if math.isfinite(d.estimate.log_half_width)
        ]
        ci = f", CI ±{max(widths):.1%}" if widths else ""
        left_s = max(0.0, self.budget_s - self.session.elapsed_s())
        self.session.context.progress.update(
            benchmark=self.session.benchmark.name,
            metric=TIME,
            detail=f"{what}, {len(self.samples)} samples{ci}, ≤{left_s:.0f} s left",
            fraction=min(1.0, self.session.elapsed_s() / self.budget_s),
        )


def sequences_within_precision(
    estimates: Sequence[RatioEstimate],
    precision: float,
    *,
    equivalence_band: float = 0.01,
    confidence: float = 0.95,
    family: int = 1,
) -> bool:
    """The stopping rule: every comparison's confidence sequence within `precision` and
    settling its verdict, from enough units. Checked after every generation, a t interval
    that is narrow is often one whose variance happens to be underestimated; the sequence holds
    at every look (stats.sequential), so stopping on it cannot manufacture a claim. `family`:
    the comparisons the run decides together; the sequences are at their level (stats.family)."""
    return may_stop_early(
        estimates,
        precision=precision,
        equivalence_band=equivalence_band,
        confidence=confidence,
        min_units=MIN_UNITS_TO_STOP_EARLY,
        family=family,
    )


def may_stop_after(
    bases: Sequence[IntervalBasis],
    precision: float,
    *,
    equivalence_band: float = 0.01,
    confidence: float = 0.95,
    family: int = 1,
) -> bool:
    """The time lens's early stop, on the comparisons as the analysis will decide them: the
    confidence sequences precise enough and settled (`sequences_within_precision`), each
    interval the verdict is read off giving the sequence's verdict (a command's trimmed mean may
    not), and no overload seen. Under overload the units are biased by load the correction cannot
    repair, which no sequence bounds, and the analysis widens the interval: the run then
    measures while its budget lasts."""
    if any(d.overloaded for d in bases):
        return False
    means = [d.mean for d in bases]
    if not sequences_within_precision(
        means, precision, equivalence_band=equivalence_band, confidence=confidence, family=family
    ):
        return False
    return decided_agree(
        means,
        [d.estimate for d in bases],
        equivalence_band=equivalence_band,
        confidence=confidence,
        family=family,
    )
