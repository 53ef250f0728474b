"""What each lens's minimum measurement of one benchmark costs. It holds the probe's figures
(`CostProbe`), a lens's cost (`LensCost`) as its cost model (`CostModel`, in the lens's package)
prices it, a composed lens's cost from its parts, and fixed costs scaled by what recent runs took.
Pure."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from perflab.budget.machine_speed import RECENT_PROBES, REFERENCE_RUNS, MachineSpeed, in_words
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings

# a fork server when the variants' imports take this long per generation: fresh processes then
# spend more than half of even the longest generation (1 s) importing
FORK_WHEN_IMPORTS_S = 0.5
# the CPUs the plan assumes callgrind processes share where the probe did not count them (the
# fewest perflab measures on); the probe counts perflab's CPUs less other perflab runs' own
COUNTING_CPUS = 2
# how many times slower than natively an interpreter's start-up and set-up run in a process
# under valgrind, instrumentation off: the range measured (bench/results/field34b_2026-11-29.md,
# torch's imports and torch.compile's set-up at its two ends), and what a plan prices, since it
# is made before any valgrind process runs here
VALGRIND_SETUP_SLOWDOWN_RANGE = (4, 10)
VALGRIND_SETUP_SLOWDOWN = 8.0
# a variant's forked callgrind processes come from two fork servers (measure/callgrind/workers.py)
# where its first server's start under valgrind took at most TWO_SERVERS_MAX_START_S (its CPU
# seconds where the server says them: a busy machine stretches walls), else from one: the
# second server guards against servers whose heaps differ (the cause found, a read at the
# worker's import, is fixed: bench/results/asv_aa_2026-11-30.md) and costs one more start, the
# dominant cost where imports are expensive (torch: ~9 s more a variant; numpy's start: ~2-3 s)
FORK_SERVERS = 2
TWO_SERVERS_MAX_START_S = 5.0
# after measuring (analyse.run.analyse_run), per variant: a sampling lens's statistics on its
# samples (a lens's cost model gives its own figure where it does more)
ANALYSIS_S = 0.05


def fork_servers_for(start_s: float) -> int:
    """The fork servers a variant's forked processes come from, at most, where its first
    server's start under valgrind took (or is priced at) `start_s`."""
    return FORK_SERVERS if start_s <= TWO_SERVERS_MAX_START_S else 1


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
    # perflab may run on a CPU besides the measuring one (its affinity, read where the probe
    # runs): the time lens starts a generation's workers there while the previous one measures
    cpu_beside: bool = True
    # recent probes of the same benchmark on this machine whose figures joined this one's
    # (the four above are their medians; RECENT_PROBES_S)
    recent: int = 0
    # perflab's own start-up in the recent runs on this machine (newest last): a "would fit"
    # counts the median of it and this run's (`BudgetPlan.usual_before_s`)
    recent_before_s: tuple[float, ...] = ()
    # statements: the GPU runtimes the set-up's imports initialised (e.g. "cuda"): no server
    # can fork then, each lens's workers start fresh, and a profiler's first session there
    # costs far more
    device_runtimes: tuple[str, ...] = ()
    # ... and those the whole set-up and statement initialised, in the probe's worker: a lens
    # that runs them in its fork server first (a profiler's warm-up) cannot fork from it
    setup_device_runtimes: tuple[str, ...] = ()
    # the recordings two or more of the run's lenses read (their descriptors'
    # `shares_recording`, named by the engine): a statement's is made once for all of them
    shared_recordings: frozenset[str] = frozenset()

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
        count = in_words(self.recent)
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
