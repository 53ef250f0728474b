"""`--budget` as a budget: how a benchmark's budget is split between its lenses before anything
is measured. Pure: a probe's figures and the lenses' minimum costs in, a plan out.

A user reads `--budget 10` as "this benchmark takes 10 s". The engine probes the benchmark (one
worker's start-up, the part of it spent importing the set-up's modules, one calibrated sample),
asks each lens's cost model (`CostModel`, in the lens's package, given by its descriptor) what
its minimum measurement costs (`LensCost`), and splits the budget: lenses with a fixed cost
(callgrind, one profile) get that cost, and the lenses that sample until their budget is used
(time, counters) share the rest, each at least its minimum. The budget is a target, not a wall:
when the minimums do not fit, every lens still measures its minimum and the run ends with a
warning that says what took longer and why; only `--strict-budget` refuses before starting, with
the budget that would fit.

The cost models' tool constants are those of a reference machine (2-vCPU VMs, quiet;
docs/benchmarks.md, "The budget"), and a loaded machine takes several times them. So the probe
also times a small known reference here and now (a Python process doing fixed work and, when a
lens runs valgrind, valgrind starting an interpreter), and every tool constant is scaled by how
much slower than on the reference machine that took (`MachineSpeed`); the plan's note says what
was measured and the factor used. What runs after measuring (each lens's analysis, the report)
is counted in the plan too, and kept out of the lenses' shares. The engine corrects the
estimates while measuring: lenses with a fixed cost run first, and each sampling lens's share is
recomputed from the time actually left.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings

# a fork server when the variants' imports take this long per generation: fresh processes then
# spend more than half of even the longest generation (1 s) importing
FORK_WHEN_IMPORTS_S = 0.5
# the CPUs the plan assumes callgrind processes share where the probe did not count them (the
# fewest perflab measures on); the probe counts perflab's CPUs less other perflab runs' own
COUNTING_CPUS = 2
# a benchmark that ends this much over its budget is warned about
OVERRUN_MARGIN = 0.1
FIT_MARGIN = 1.1  # the budget said to fit is the needs plus this margin (they are estimates)
# ... growing with the machine's factor up to this one at LOADED_FACTOR: a loaded machine's
# load moves between runs, and so do two runs' needs.
# Continuous, so that two asks whose factors fall either side of a step get the same answer.
LOADED_FACTOR = 2.0
LOADED_FIT_MARGIN = 1.25
# after measuring (analyse.run.analyse_run, then the report), per variant: a sampling lens's
# statistics on its samples (a lens's cost model gives its own figure where it does more); the
# report once per benchmark
ANALYSIS_S = 0.05
REPORT_S = 0.1  # loading the run from the store and rendering it (JSON, terminal)

# The reference the constants' machine is compared against, timed by the probe
# (engine/prepare/probe.py): a Python process (no site, isolated) doing a fixed amount of work,
# which prints the CPU time it used; and valgrind's callgrind starting an interpreter with
# instrumentation off, as a lens that runs valgrind starts its workers. Their wall times on the
# constants' reference machine, quiet (2-vCPU AMD EPYC VM, docs/benchmarks.md "The budget").
REFERENCE_LOOPS = 1_000_000
REFERENCE_PROGRAM = (
    "import time\n"
    "x = 0\n"
    f"for i in range({REFERENCE_LOOPS}):\n"
    "    x += i\n"
    "print(time.process_time())"
)
REFERENCE_S = 0.13
VALGRIND_REFERENCE_S = 0.95
REFERENCE_RUNS = 3  # the reference program's runs in one probe (their median is the speed)
# perflab's own start-up (imports, the lenses' checks, before the probe) on the reference
# machine, quiet, with a margin: a "would fit" counts this run's start-up up to this, scaled by
# the machine's factor; a start-up that stalled beyond it is this run's, not the next one's
PERFLAB_STARTUP_S = 1.0
STALL_SAID_S = 0.5  # a "would fit" says what it counted for them from this much less
# Probes of the last minutes on this machine join this run's (engine/prepare/recent_probes.py): the
# plan uses the median of this probe's figures and at most RECENT_PROBES of the last
# RECENT_PROBES_S, since one probe samples well under a second of a load that moves within
# seconds; older probes describe another load.
RECENT_PROBES = 4
RECENT_PROBES_S = 600.0
# a factor from one short measurement: never below half (a much faster machine still pays
# fixed latencies), never above this (a reference run that hung says nothing more)
SLOWDOWN_RANGE = (0.5, 20.0)


_NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _words(count: int) -> str:
    return _NUMBER_WORDS[count] if 0 <= count < len(_NUMBER_WORDS) else str(count)


def _slowdown(measured_s: float | None, reference_s: float) -> float | None:
    if measured_s is None or not math.isfinite(measured_s) or measured_s <= 0:
        return None
    low, high = SLOWDOWN_RANGE
    return min(high, max(low, measured_s / reference_s))


@dataclass(frozen=True)
class MachineSpeed:
    """How much slower than the constants' reference machine this machine runs now, from the
    probe's reference runs (None: not measured; the factor is then 1). The tool constants
    (perf's start-up, symbolisation, disassembly, callgrind's counted part, the analysis after
    measuring) are multiplied by `factor`, valgrind's by `valgrind_factor`."""

    reference_s: float | None = None  # the reference program's wall time here and now
    reference_cpu_s: float | None = None  # the CPU time it reported using
    valgrind_s: float | None = None  # valgrind's reference run, when a lens runs valgrind
    # the same runs of recent probes on this machine (RECENT_PROBES_S), newest last
    recent_reference_s: tuple[float, ...] = ()
    recent_valgrind_s: tuple[float, ...] = ()

    @property
    def settled_reference_s(self) -> float | None:
        """The reference program's time the plan uses: the median of this probe's and the
        recent ones'."""
        return _median_with(self.reference_s, self.recent_reference_s)

    @property
    def settled_valgrind_s(self) -> float | None:
        return _median_with(self.valgrind_s, self.recent_valgrind_s)

    @property
    def factor(self) -> float:
        return _slowdown(self.settled_reference_s, REFERENCE_S) or 1.0

    @property
    def valgrind_factor(self) -> float:
        """valgrind's own slowdown; without a valgrind reference, the reference program's."""
        return _slowdown(self.settled_valgrind_s, VALGRIND_REFERENCE_S) or self.factor

    def with_recent(self, recent: Sequence[MachineSpeed]) -> MachineSpeed:
        """This probe's speed, joined by the last RECENT_PROBES of `recent` (oldest first)."""
        references = tuple(s.reference_s for s in recent if s.reference_s is not None)
        valgrinds = tuple(s.valgrind_s for s in recent if s.valgrind_s is not None)
        return replace(
            self,
            recent_reference_s=references[-RECENT_PROBES:] if self.reference_s else (),
            recent_valgrind_s=valgrinds[-RECENT_PROBES:] if self.valgrind_s else (),
        )

    @property
    def measured(self) -> bool:
        return self.reference_s is not None or self.valgrind_s is not None

    def describe(self) -> str:
        """What was measured and the factors used, for the plan's note."""
        if not self.measured:
            return "machine speed not measured: tool costs as on the reference machine"
        parts = []
        if self.reference_s is not None:
            cpu = (
                f", {self.reference_cpu_s:.2f} s of CPU" if self.reference_cpu_s is not None else ""
            )
            parts.append(
                f"a reference process took {self.reference_s:.2f} s{cpu}"
                f"{_recent_words(self.settled_reference_s, self.recent_reference_s)} "
                f"({REFERENCE_S:g} s on the reference machine): tool costs x{self.factor:.1f}"
            )
        if self.valgrind_s is not None:
            parts.append(
                f"valgrind's start-up took {self.valgrind_s:.2f} s"
                f"{_recent_words(self.settled_valgrind_s, self.recent_valgrind_s)} "
                f"({VALGRIND_REFERENCE_S:g} s there): valgrind costs x{self.valgrind_factor:.1f}"
            )
        return "; ".join(parts)


def _median_with(own: float | None, recent: Sequence[float]) -> float | None:
    return None if own is None else statistics.median((own, *recent))


def _recent_words(settled_s: float | None, recent: Sequence[float]) -> str:
    if not recent or settled_s is None:
        return ""
    probes = "probe" if len(recent) == 1 else "probes"
    return (
        f", {settled_s:.2f} s with {_words(len(recent))} recent {probes} on this machine "
        "(the median)"
    )


@dataclass(frozen=True)
class CostProbe:
    """What the probe measured of one benchmark, before the plan (seconds)."""

    kind: BenchmarkKind
    variants: int
    startup_s: float  # statements: a fresh worker's start-up and set-up; commands: 0
    import_s: float  # statements: the part of start-up spent importing the set-up's modules
    fork_s: float  # statements: a forked child's start-up and set-up (modules loaded)
    sample_s: float  # statements: one sample calibrated to --sample-ms; commands: one run
    probe_s: float  # how long the probe took: part of the benchmark's budget
    # the probe itself failed (the set-up raised ...): its figures are guesses, and the plan
    # never refuses on them; the measurement fails the same way and says why
    failed: bool = False
    # this machine against the constants' reference machine, here and now
    speed: MachineSpeed = MachineSpeed()
    # the CPUs valgrind's processes may count on side by side: perflab's, less those other
    # perflab runs measure on when probed
    counting_cpus: int = COUNTING_CPUS
    # recent probes of the same benchmark on this machine whose figures joined this one's
    # (the four above are their medians; RECENT_PROBES_S)
    recent: int = 0
    # perflab's own start-up in the recent runs on this machine (newest last): a "would fit"
    # counts the median of it and this run's (`BudgetPlan.usual_before_s`)
    recent_before_s: tuple[float, ...] = ()
    # statements: the GPU runtimes the set-up initialised (e.g. "cuda"): each lens's workers
    # start fresh then, and a profiler's first session there costs far more
    device_runtimes: tuple[str, ...] = ()

    def with_recent_cpus(self, recent: Sequence[int]) -> CostProbe:
        """The CPUs valgrind's processes may count on: the lower median of this probe's and
        the last RECENT_PROBES probes' (another perflab run holds its CPU while it measures,
        most of its time; one look at its lock tells less than a few minutes' looks)."""
        cpus = statistics.median_low((self.counting_cpus, *recent[-RECENT_PROBES:]))
        return replace(self, counting_cpus=cpus)

    def recent_words(self) -> str:
        """ " (its figures the median with two recent probes of this benchmark)", or ""."""
        if not self.recent:
            return ""
        probes = "probe" if self.recent == 1 else "probes"
        count = _words(self.recent)
        return f" (its figures the median with {count} recent {probes} of this benchmark)"

    def with_recent(self, same_benchmark: Sequence[CostProbe]) -> CostProbe:
        """This probe with its start-up, imports, fork and sample the medians of its own and
        the last RECENT_PROBES of `same_benchmark` (oldest first; failed ones left out)."""
        recent = [p for p in same_benchmark if not p.failed][-RECENT_PROBES:]
        if self.failed or not recent:
            return self
        probes = (self, *recent)
        return replace(
            self,
            startup_s=statistics.median(p.startup_s for p in probes),
            import_s=statistics.median(p.import_s for p in probes),
            fork_s=statistics.median(p.fork_s for p in probes),
            sample_s=statistics.median(p.sample_s for p in probes),
            recent=len(recent),
        )

    @property
    def fork(self) -> bool:
        """Whether lenses that may fork their workers from a server per variant that imported
        the set-up's modules once, rather than start them fresh."""
        return (
            self.kind is BenchmarkKind.STATEMENT
            and self.variants * self.import_s >= FORK_WHEN_IMPORTS_S
            # a GPU runtime does not survive fork: the servers' children would be fresh workers
            and not self.device_runtimes
        )

    @property
    def worker_start_s(self) -> float:
        """One worker's start-up in every generation after the first."""
        return self.fork_s if self.fork else self.startup_s

    @property
    def once_s(self) -> float:
        """Paid once per lens that forks: starting the servers (the imports)."""
        return self.variants * self.startup_s if self.fork else 0.0

    @property
    def usual_s(self) -> float:
        """The probe as its parts took it (the benchmark's start-up and sample, the reference
        runs), one after the other; at most what it took. What the probe took beyond its parts
        (a stall: waiting on the machine, not work) is not counted in a "would fit": the next
        run does not repeat it."""
        speed = self.speed
        reference_s = REFERENCE_RUNS * (speed.reference_s or 0.0) + (speed.valgrind_s or 0.0)
        return min(self.probe_s, self.startup_s + self.sample_s + reference_s)


@dataclass(frozen=True)
class LensCost:
    """A lens's minimum measurement of one benchmark, and whether it can use more time."""

    metric: Metric
    minimum_s: float
    needs: str  # what the minimum is, in words ("6 generations of 2 fresh workers")
    elastic: bool = False  # it samples until its share is used (time, counters)
    weight: float = 1.0  # elastic lenses share what is left in these proportions
    overshoot_s: float = 0.0  # it stops after the step that crosses its share: up to this much
    # its workers are forked from servers that imported the set-up's modules (probe.fork):
    # the engine starts those before the lens, and the lens's minimum includes them once
    forked: bool = False
    once_s: float = 0.0  # of the minimum: starting the fork servers (see `forked`)
    # after measuring: the lens's analysis of this benchmark (not part of the minimum; kept out
    # of every lens's share)
    after_s: float = 0.0
    # its generations are forked from rounds of servers it starts itself (the time lens)
    server_rounds: ServerRounds | None = None
    # a measurement other lenses of the run read too, by name ("" none; measure/perf/recordings.py):
    # the first of them to run makes it, so the plan charges it to that one (`charge_once`).
    # `shared_s`: the part of the minimum it is, in the cost of the lens that knows it
    shares: str = ""
    shared_s: float = 0.0
    # a fixed cost's scale learned from recent runs of this benchmark on this machine (what
    # their lens took / what its model said; `learned_costs`); 1: the model alone
    learned: float = 1.0

    @property
    def started_before_s(self) -> float:
        """The part of the minimum paid before the lens starts: its fork servers' start-up."""
        return self.once_s if self.forked else 0.0


CostModel = Callable[[CostProbe, Settings], LensCost]


# A fixed-cost lens learns from no shorter measurement (timer and start-up noise), and by no
# more than this range: a model off by more is a model to fix, not to scale
LEARN_FROM_S = 0.5
LEARNED_RANGE = (0.5, 3.0)


def learned_costs(
    costs: Sequence[LensCost], recent_ratios: Mapping[Metric, Sequence[float]]
) -> list[LensCost]:
    """The costs, each fixed-cost lens's minimum scaled by how its recent runs of this
    benchmark on this machine compared with its model: the median of their ratios (the last
    RECENT_PROBES) and the model's own 1. A lens's model holds its tools' costs at the
    machine's factor, which a CPU-bound reference measures; memory-bound work (a traced loop
    beside a process copying memory) slows more than that. Sampling lenses take what they are
    given, so there is nothing to learn from them."""
    learned = []
    for cost in costs:
        ratios = recent_ratios.get(cost.metric, ())[-RECENT_PROBES:]
        if cost.elastic or not ratios:
            learned.append(cost)
            continue
        low, high = LEARNED_RANGE
        scale = min(high, max(low, statistics.median((1.0, *ratios))))
        learned.append(
            replace(
                cost,
                minimum_s=cost.minimum_s * scale,
                once_s=cost.once_s * scale,
                shared_s=cost.shared_s * scale,
                needs=f"{cost.needs}, x{scale:.2f} as its recent runs here took",
                learned=scale,
            )
        )
    return learned


def analysis_s(probe: CostProbe, per_variant_s: float) -> float:
    """A lens's analysis after measuring, at this machine's speed."""
    return probe.variants * per_variant_s * probe.speed.factor


@dataclass(frozen=True)
class ServerRounds:
    """How a lens forks its generations when the set-up's imports are expensive: in rounds,
    each one fresh server process per variant (its own hash seed and layout, the imports paid
    once) forking `forks_per_round` generations' workers; at least `min_rounds` rounds. Forked
    workers share their server's per-process effects, so the round is the unit of the interval
    (stats.paired.unit_means)."""

    forks_per_round: int
    min_rounds: int
    round_start_s: float  # the probe's estimate of starting one round's servers (all variants)


def side_by_side_s(work_s: float, jobs: int, cpus: int, factor: float) -> float:
    """`jobs` jobs of `work_s` each (on the reference machine) run at once on `cpus` CPUs of a
    machine that runs one job `factor` times slower. On a loaded machine each job takes its
    share of a CPU beside the other processes: k jobs take (factor - 1 + k/cpus) times one
    job's work, not k x factor; on a quiet one, k/cpus rounds at its speed."""
    rounds = max(1.0, jobs / max(1, cpus))
    if factor <= 1.0:
        return work_s * factor * rounds
    return work_s * (factor - 1.0 + rounds)


@dataclass(frozen=True)
class CostPart:
    """A part of a lens's measurement that another lens's cost model prices: a lens measured
    through other lenses' measurements declares them (its descriptor's `cost_parts`), and the
    plan combines their costs (`composed_cost`), so that no cost model reaches another."""

    metric: Metric  # the lens whose cost model prices this part
    # priced for one variant and paid once per variant, one variant after another
    per_variant: bool = False
    # settings this part measures with, over the run's (e.g. ("cache_sim", True))
    settings: tuple[tuple[str, Any], ...] = ()


def composed_cost(
    metric: Metric,
    parts: Sequence[CostPart],
    model_of: Callable[[Metric], CostModel | None],
) -> CostModel:
    """The cost model of a lens made of `parts`, in order: each part priced by its own lens's
    model (`model_of`; None: `default_cost`), their minimums and analyses added up."""

    def model(probe: CostProbe, settings: Settings) -> LensCost:
        minimum_s, after_s, needs = 0.0, 0.0, []
        for part in parts:
            part_probe = replace(probe, variants=1) if part.per_variant else probe
            core = {f.name for f in fields(settings)}
            part_settings = replace(
                settings, **{k: v for k, v in part.settings if k in core}
            ).with_options(**{k: v for k, v in part.settings if k not in core})
            own = model_of(part.metric)
            cost = (
                own(part_probe, part_settings)
                if own is not None
                else default_cost(part.metric, part_probe, part_settings)
            )
            times = probe.variants if part.per_variant else 1
            minimum_s += times * cost.minimum_s
            after_s += times * cost.after_s
            needs.append(
                cost.needs + (" per variant, one after another" if part.per_variant else "")
            )
        return LensCost(metric, minimum_s=minimum_s, needs=", then ".join(needs), after_s=after_s)

    return model


def default_cost(metric: Metric, probe: CostProbe, settings: Settings) -> LensCost:
    """A lens without a cost model: one generation of workers and a second of sampling."""
    start_s = probe.startup_s if probe.kind is BenchmarkKind.STATEMENT else probe.sample_s
    return LensCost(
        metric,
        minimum_s=probe.variants * (start_s + 1.0),
        needs="one generation",
        after_s=analysis_s(probe, ANALYSIS_S),
    )


@dataclass(frozen=True)
class LensShare:
    metric: Metric
    share_s: float  # the lens's part of the budget
    cost: LensCost


@dataclass(frozen=True)
class BudgetPlan:
    """How one benchmark's budget is split between its lenses."""

    budget_s: float
    probe: CostProbe
    shares: tuple[LensShare, ...]  # in the order the lenses run: fixed costs first
    fits: bool  # every lens's minimum fits inside the budget
    needed_s: float  # the probe, every lens's minimum, and what runs after measuring
    # after measuring: every lens's analysis of this benchmark and the report, kept out of the
    # lenses' shares (they run once every benchmark is measured)
    after_s: float = 0.0
    # before the probe: the perflab command's own start-up (imports, preflight), already
    # spent, counted in its first benchmark's budget
    before_s: float = 0.0
    # waiting for a CPU other perflab runs held: their time, not in before_s nor the budget
    waited_s: float = 0.0
    # the benchmark in the recent probes' memory (engine/prepare/recent_probes.py); "": not kept
    memory_key: str = ""

    @property
    def measuring_s(self) -> float:
        """The part of the budget until the last lens ends (from perflab's start-up or the
        probe): all of it but what runs after measuring."""
        return self.budget_s - self.after_s

    @property
    def eta_s(self) -> float:
        """How long the benchmark is expected to take from the start of its probe."""
        return max(self.budget_s, self.needed_s)

    @property
    def usual_before_s(self) -> float:
        """perflab's start-up as a next run would see it: this run's, at most the usual one on
        this machine now (the median with the recent runs', and PERFLAB_STARTUP_S at the
        machine's factor)."""
        recent = statistics.median((self.before_s, *self.probe.recent_before_s))
        return min(self.before_s, recent, PERFLAB_STARTUP_S * self.probe.speed.factor)

    @property
    def stalled_s(self) -> float:
        """What perflab's start-up and the probe took beyond their usual time here now
        (`usual_before_s`, `CostProbe.usual_s`): this run's stalls, which a next one does not
        repeat."""
        return self.before_s - self.usual_before_s + self.probe.probe_s - self.probe.usual_s

    @property
    def usual_needed_s(self) -> float:
        """What the benchmark needs with perflab's start-up and the probe as they usually take
        here now: the same command asked twice gets the same answer, whatever one run's
        start-up or probe stalled on."""
        return self.needed_s - self.stalled_s

    @property
    def fitting_budget_s(self) -> float:
        """The smallest budget (whole seconds, with a margin) that holds every minimum, with
        the usual start-up and probe: a larger margin on a loaded machine (growing with its
        factor), where the next run's needs may well be larger."""
        loaded = min(1.0, max(0.0, (self.probe.speed.factor - 1.0) / (LOADED_FACTOR - 1.0)))
        margin = FIT_MARGIN + loaded * (LOADED_FIT_MARGIN - FIT_MARGIN)
        return float(math.ceil(self.usual_needed_s * margin))

    def counted_for_fit(self) -> str:
        """What a "would fit" counted for perflab's start-up and the probe, where that is
        STALL_SAID_S or more less than what this run's took: " (counting ...)", else ""."""
        counted = [
            f"{what} as {usual:.1f} s (this run's took {took:.1f} s)"
            for what, usual, took in (
                ("perflab's start-up", self.usual_before_s, self.before_s),
                ("the probe", self.probe.usual_s, self.probe.probe_s),
            )
            if took - usual >= STALL_SAID_S
        ]
        if not counted:
            return ""
        return f" (counting {' and '.join(counted)}, as usual on this machine now)"

    def share_of(self, metric: Metric) -> LensShare:
        return next(s for s in self.shares if s.metric == metric)

    def describe(
        self,
        took_s: Mapping[Metric, float] | None = None,
        given_s: Mapping[Metric, float] | None = None,
        failed_s: Mapping[Metric, float] | None = None,
    ) -> str:
        """The split, in words: "budget 20 s: probe 0.3 s, instructions 12.4 s, time 7.3 s";
        with `took_s` (what each lens really took), "instructions 11.0 s of its 12.4 s" for
        every lens that ran; with `given_s` (a sampling lens's share, re-planned from what the
        lenses before it left), "counters 10.8 s of its 11.2 s (planned 7.0 s)" where the two
        differ; with `failed_s` (lenses that failed, and when), "instructions failed after
        1.1 s (planned 7.6 s)"; and once measured, a lens in neither was "not run"."""
        parts = ", ".join(_share_words(s, took_s, given_s, failed_s) for s in self.shares)
        forked = [s.metric.value for s in self.shares if s.cost.forked]
        how = (
            f"; {', '.join(forked)} forks its workers from one process per variant that "
            f"imported the set-up's modules once ({self.probe.import_s:.1f} s of imports)"
            if forked
            else ""
        )
        over = "" if self.fits else f" (the minimums need {self.needed_s:.0f} s)"
        started = f"perflab's start-up {self.before_s:.1f} s, " if self.before_s else ""
        waited = (
            f"; besides, {self.waited_s:.1f} s waiting for a CPU other perflab runs held "
            "(not counted)"
            if self.waited_s >= 0.1
            else ""
        )
        # once measured, the parts listed are what was used: analysis and report come after
        # the "used" figure, so they are said apart from the parts (else they exceed it)
        after = (
            f", analysis and report {self.after_s:.1f} s{how}; "
            if took_s is None
            else f"{how}; analysis and report follow ({self.after_s:.1f} s kept for them); "
        )
        return (
            f"budget {self.budget_s:g} s{over}: {started}probe {self.probe.probe_s:.1f} s"
            f"{self.probe.recent_words()}, "
            f"{parts}{after}"
            f"{self.probe.speed.describe()}{waited}"
        )

    def overrun(
        self,
        used_s: float,
        took_s: Mapping[Metric, float],
        given_s: Mapping[Metric, float],
    ) -> str | None:
        """What took longer than the budget and why, in words ("took 34 s of --budget 30:
        five lenses need about 34 s on this machine ..."), or None when the benchmark ended
        within OVERRUN_MARGIN of its budget. `used_s`: from perflab's start-up (the first
        benchmark) or the probe to the end of the last lens. The part named is the one that
        took the most beyond what was expected of it: perflab's start-up or the probe beyond
        their usual time here, a lens beyond its share, or the minimums beyond the budget."""
        if used_s <= self.budget_s * (1 + OVERRUN_MARGIN):
            return None
        head = f"took {used_s:.0f} s of --budget {self.budget_s:g}"

        def over(share: LensShare) -> float:
            return took_s.get(share.metric, 0.0) - given_s.get(share.metric, share.share_s)

        worst = max(self.shares, key=over)
        lacked_s = self.usual_needed_s - self.budget_s
        stalls = {
            "start-up": self.before_s - self.usual_before_s,
            "probe": self.probe.probe_s - self.probe.usual_s,
        }
        stalled = max(stalls, key=lambda part: stalls[part])
        if stalls[stalled] > max(over(worst), lacked_s, 0.0):
            return f"{head}: {self._stall_words(stalled)}"
        if lacked_s > 0 and over(worst) <= lacked_s:
            return f"{head}: {self._minimums_words(used_s)}"
        if over(worst) <= 0:
            return (
                f"{head}: perflab's start-up, the probe and the analysis took longer than planned"
            )
        short = (
            "" if lacked_s <= 0 else f"; the minimums alone need about {self.usual_needed_s:.0f} s"
        )
        return (
            f"{head}: the {worst.metric.value} lens took {took_s[worst.metric]:.0f} s where the "
            f"plan gave it {given_s.get(worst.metric, worst.share_s):.0f} s (its minimum "
            f"measurement estimated at {worst.cost.minimum_s:.1f} s: {worst.cost.needs}){short}"
        )

    def _stall_words(self, part: str) -> str:
        """perflab's start-up or the probe, beyond its usual time: what it took, and what."""
        if part == "start-up":
            return (
                f"perflab's start-up took {self.before_s:.0f} s where about "
                f"{self.usual_before_s:.1f} s is usual on this machine now (its imports and the "
                "lenses' checks, before the probe; waiting for a CPU is not counted)"
            )
        return (
            f"the probe took {self.probe.probe_s:.0f} s where its parts (the benchmark's "
            f"start-up and one sample, the machine's reference runs) took about "
            f"{self.probe.usual_s:.1f} s: the machine held it up"
        )

    def _minimums_words(self, used_s: float) -> str:
        """The lenses' minimums, which do not fit the budget. The figure said is never above
        `used_s`: a plan that estimated more than the run took says what it took instead (a
        warning must not contradict the time beside it)."""
        largest = max(self.shares, key=lambda s: s.cost.minimum_s)
        count = len(self.shares)
        lenses = f"the {largest.metric.value} lens" if count == 1 else f"{_words(count)} lenses"
        if self.usual_needed_s <= used_s * (1 + OVERRUN_MARGIN):
            needed = f"about {self.usual_needed_s:.0f} s on this machine now"
            measurement = f"{largest.cost.minimum_s:.0f} s: {largest.cost.needs}"
        else:
            needed = (
                f"more than that: about {used_s:.0f} s this time (planned at "
                f"{self.usual_needed_s:.0f} s on this machine now)"
            )
            measurement = largest.cost.needs
        return (
            f"{lenses} need{'s' if count == 1 else ''} {needed} (the {largest.metric.value} "
            f"lens's minimum measurement {measurement}); each lens measured its minimum"
        )

    def refusal(self) -> BudgetError:
        """The error when the minimums do not fit: which lens needs what, and the choices."""
        largest = max(self.shares, key=lambda s: s.cost.minimum_s)
        needs = "; ".join(
            f"{s.metric.value}: {s.cost.minimum_s:.1f} s ({s.cost.needs})" for s in self.shares
        )
        return BudgetError(
            f"--budget {self.budget_s:g} s is too small for this benchmark's minimum "
            f"measurement: the {largest.metric.value} lens alone needs "
            f"{largest.cost.minimum_s:.0f} s ({largest.cost.needs}); all lenses with the probe "
            f"and the analysis need {self.needed_s:.0f} s, --budget {self.fitting_budget_s:g} "
            f"would fit{self.counted_for_fit()}",
            hint=f"give --budget {self.fitting_budget_s:g} or more, measure fewer lenses "
            "(--metric), or leave out --strict-budget to measure the minimums whatever they cost",
            detail=f"perflab's start-up {self.before_s:.1f} s"
            + (
                f" (and {self.waited_s:.1f} s waiting for a CPU, not counted)"
                if self.waited_s >= 0.1
                else ""
            )
            + f"; probe {self.probe.probe_s:.1f} s{self.probe.recent_words()}; "
            f"{needs}; analysis and report after "
            f"measuring {self.after_s:.1f} s; {self.probe.speed.describe()}",
        )


def _share_words(
    share: LensShare,
    took_s: Mapping[Metric, float] | None,
    given_s: Mapping[Metric, float] | None,
    failed_s: Mapping[Metric, float] | None,
) -> str:
    """One lens's part of `BudgetPlan.describe`."""
    name = share.metric.value
    planned = f"(planned {share.share_s:.1f} s)"
    if failed_s is not None and share.metric in failed_s:
        return f"{name} failed after {failed_s[share.metric]:.1f} s {planned}"
    took = None if took_s is None else took_s.get(share.metric)
    if took is None:
        # once a lens failed, the lenses after it never ran
        return f"{name} not run {planned}" if failed_s else f"{name} {share.share_s:.1f} s"
    given = share.share_s if given_s is None else given_s.get(share.metric, share.share_s)
    replanned = f" {planned}" if abs(given - share.share_s) >= 0.05 else ""
    return f"{name} {took:.1f} s of its {given:.1f} s{replanned}"


class BudgetError(ConfigError):
    """With --strict-budget: the budget cannot hold a lens's minimum measurement (exit status
    2, nothing measured)."""


def plan_budget(
    budget_s: float,
    probe: CostProbe,
    costs: Sequence[LensCost],
    *,
    strict: bool = False,
    before_s: float = 0.0,
    waited_s: float = 0.0,
) -> BudgetPlan:
    """Split `budget_s` (perflab's start-up `before_s`, the probe's time and what runs after
    measuring included) between
    lenses of these costs: what runs after measuring (each lens's analysis, the report) and the
    fixed costs as estimated, then each elastic lens its minimum plus a part of what is left,
    by weight.
    When the minimums do not fit, the plan says so (`fits`) and the elastic lenses get their
    minimums; with `strict` (--strict-budget) it raises BudgetError instead."""
    fixed, elastic = charge_once(
        [c for c in costs if not c.elastic], [c for c in costs if c.elastic]
    )
    after_s = sum(c.after_s for c in costs) + REPORT_S * probe.speed.factor
    needed_s = before_s + probe.probe_s + sum(c.minimum_s for c in costs) + after_s
    surplus_s = max(0.0, budget_s - needed_s)
    weights = sum(c.weight for c in elastic)
    shares = [LensShare(c.metric, c.minimum_s, c) for c in fixed] + [
        LensShare(c.metric, c.minimum_s + surplus_s * c.weight / weights, c) for c in elastic
    ]
    fits = needed_s <= budget_s
    if not fits and strict and not probe.failed:
        plan = BudgetPlan(
            budget_s, probe, tuple(shares), fits, needed_s, after_s, before_s, waited_s
        )
        raise plan.refusal()
    return BudgetPlan(budget_s, probe, tuple(shares), fits, needed_s, after_s, before_s, waited_s)


def charge_once(*in_run_order: list[LensCost]) -> list[list[LensCost]]:
    """The costs (fixed, then elastic: the order the lenses run in), a shared measurement
    (`LensCost.shares`) charged once, to the first lens that reads it: the one that makes it."""
    ordered = [cost for costs in in_run_order for cost in costs]
    moved: dict[Metric, LensCost] = {}
    for name in {c.shares for c in ordered if c.shares}:
        readers = [c for c in ordered if c.shares == name]
        first, owner = readers[0], max(readers, key=lambda c: c.shared_s)
        if len(readers) > 1 and owner is not first:
            moved[owner.metric] = replace(
                owner, minimum_s=owner.minimum_s - owner.shared_s, shared_s=0.0
            )
            moved[first.metric] = replace(
                first, minimum_s=first.minimum_s + owner.shared_s, shared_s=owner.shared_s
            )
    return [[moved.get(c.metric, c) for c in costs] for costs in in_run_order]


def elastic_share(
    plan: BudgetPlan, metric: Metric, left_s: float, still_to_run: Sequence[Metric]
) -> float:
    """An elastic lens's share when it starts, from the time really left of the benchmark's
    budget: what the lenses still to run after it are planned to take is kept for them, the
    rest is split by weight between it and the other elastic lenses still to run; never below
    its minimum. Its share is reduced by half its overshoot (it stops after the step that
    crosses the share), so that on average the benchmark ends on its budget."""
    mine = plan.share_of(metric).cost
    own_minimum_s = mine.minimum_s - mine.started_before_s  # its servers run already
    others = [plan.share_of(m) for m in still_to_run if m != metric]
    kept_s = sum(s.cost.minimum_s for s in others if not s.cost.elastic)
    elastic_weights = mine.weight + sum(s.cost.weight for s in others if s.cost.elastic)
    elastic_minimums = sum(s.cost.minimum_s for s in others if s.cost.elastic)
    free_s = max(0.0, left_s - kept_s - own_minimum_s - elastic_minimums)
    share_s = own_minimum_s + free_s * mine.weight / elastic_weights - mine.overshoot_s / 2
    # at its minimum it stops at the minimum, not after a step past its share
    return max(own_minimum_s, share_s)


def lens_costs(
    probe: CostProbe,
    settings: Settings,
    models: Mapping[Metric, CostModel | None],
) -> list[LensCost]:
    """Every lens's cost, by its descriptor's model (or the default)."""
    return [
        model(probe, settings) if model is not None else default_cost(metric, probe, settings)
        for metric, model in models.items()
    ]
