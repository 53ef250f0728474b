"""`--budget` as a budget: what each lens of a benchmark minimally costs, and how the budget is
split between the lenses before anything is measured. Pure: a probe's figures in, a plan out.

A user reads `--budget 10` as "this benchmark takes 10 s". Before, it was the time lens's budget
only: five lenses with `--budget 10` took 80 s, and `--metric time,torch` with 20 s took 127 s
(each worker generation imported torch). Now the engine probes the benchmark (one worker's
start-up, the part of it spent importing the set-up's modules, one calibrated sample), asks each
lens what its minimum measurement costs (`LensCost`), and splits the budget: lenses with a fixed
cost (callgrind, one profile) get that cost, and the lenses that sample until their budget is used
(time, counters) share the rest, each at least its minimum. The budget is a target, not a wall:
when the minimums do not fit, every lens still measures its minimum and the run ends with a
warning that says what took longer and why; only `--strict-budget` refuses before starting, with
the budget that would fit.

The constants below were measured on the 2-vCPU VMs perflab is developed on, quiet
(docs/benchmarks.md, "The budget"). They are that machine's: on a loaded machine callgrind, `perf
script` and disassembly took 2-4x them, and runs said to fit took up to 2.9x their budget. So the
probe also times a small known reference here and now (a Python process doing fixed work and,
when a lens runs valgrind, valgrind starting an interpreter), and every tool constant is scaled by
how much slower than on the reference machine that took (`MachineSpeed`); the plan's note says
what was measured and the factor used. What runs after measuring (each lens's analysis, the
report) is counted in the plan too, and kept out of the lenses' shares. The estimates are still
estimates, and the engine corrects for them while measuring: lenses with a fixed cost run first,
and each sampling lens's share is recomputed from the time actually left.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from perflab.errors import ConfigError
from perflab.model import BenchmarkKind, Metric, Settings

# the time lens (lenses/time/measure.py): blocks per generation after warm-up, and the shortest
# generation it samples
TIME_MIN_BLOCKS = 4
TIME_MIN_GENERATION_S = 0.25
# a fork server when the variants' imports take this long per generation: fresh processes then
# spend more than half of even the longest generation (1 s) importing
FORK_WHEN_IMPORTS_S = 0.5
# The time lens's generations: about this many in its budget, each between these lengths
# (lenses/time/measure.py samples them so).
TIME_TARGET_GENERATIONS = 24
TIME_GENERATION_S_RANGE = (0.25, 1.0)
# The time lens forks its generations from rounds of fork servers (one fresh process per variant
# per round, paying the set-up's imports once) when the variants' imports would take more than
# this share of a generation; its interval is then over rounds (docs/statistics.md, "Expensive
# set-ups"). Plain Python statements import next to nothing and keep fresh workers.
SERVER_ROUNDS_WHEN_IMPORTS_SHARE = 0.1
MIN_SERVER_ROUNDS = 3  # units of the interval: fewer give t quantiles of 4.3 and more
MAX_FORKS_PER_ROUND = 8
# perf stat / perf record: starting perf around a worker, and reading its output back
PERF_START_S = 0.3
PROFILE_REGION_S = 1.0  # what the profile lens records per variant
# statements: in this many worker processes per variant (lenses/profile/measure.py's
# PROFILE_PROCESSES), each started under its own perf record and read back with its own perf script
PROFILE_PROCESSES = 2
PROFILE_POST_S = 1.5  # perf script and symbolisation, per variant
# the asm lens (lenses/asm): each variant's loop recorded this long (its PROFILE_TARGET_MS),
# without a call graph, so that perf script reads it back quickly; then its hot functions read,
# disassembled and annotated, with the analysis cache warm (a first run on a machine reads
# every object once and takes longer; docs/benchmarks.md has the runs these come from)
ASM_REGION_S = 0.4
ASM_SCRIPT_S = 0.4
ASM_POST_S = 0.4
# callgrind (lenses/instructions): valgrind's own start-up, its slowdown of the interpreter's
# start-up with instrumentation off, and the counted part of one process (warm-up, calibration,
# two repeats of a statement and an empty loop of ~20 M instructions each, the dumps read):
# 5.0 while the parent switched every loop through vgdb (~0.15 s a call, 16 calls), 3.0 since
# the worker switches itself (the instructions lens's share of five lenses: 2.7 s taken here)
VALGRIND_START_S = 1.0
VALGRIND_STARTUP_SLOWDOWN = 8.0
# commands run counted from start to end: callgrind's slowdown of native code is 20-100x, but a
# short command's run is mostly process start-up (and, on a loaded machine, waiting for a CPU),
# which the probe's wall time inflates: the low end
CALLGRIND_COMMAND_SLOWDOWN = 20.0
CALLGRIND_COUNTED_S = 3.0
# the same where the worker switches instrumentation on once and toggles collection around each
# loop (statements without cache simulation: no translations thrown away per loop): 1.5, from
# sum(range(1000)) A/Bs through the lens alone, 2.2 s where 3.0 planned 4.0-4.2 s (2026-11-26;
# valgrind costs x0.5). The memory lens (cache simulation) keeps switching: 3.0.
CALLGRIND_TOGGLED_COUNTED_S = 1.5
# the CPUs the plan assumes callgrind processes share where the probe did not count them (the
# fewest perflab measures on); the probe counts perflab's CPUs less other perflab runs' own
COUNTING_CPUS = 2
# the first torch.profiler session of a process initialises the profiler: 1.1-1.9 s measured
# on the AMD EPYC VM (2026-11-24, `import torch` 1.5-1.7 s there); forked workers pay it once,
# in their server (lenses/torch `_warm_servers`), fresh ones in every generation
TORCH_PROFILER_START_S = 1.5
TORCH_BLOCKS = 3  # lenses/torch: one warm-up and two measured profiles per generation
RSS_BLOCKS = 2  # lenses/rss: a warm-up and a measured sample per worker and generation
# the loop under tracemalloc: sum(range(1000)) (an int allocated per element) ran ~20x slower,
# so that the rss lens took 6.4 s where the plan had 1.0 s; a statement that allocates less is
# faster, and the elastic lenses after it get what it leaves
RSS_TRACED_SLOWDOWN = 20.0
TORCH_PROFILE_OVERHEAD = 3.0  # a profiled sample is this much longer than a timed one
# a benchmark that ends this much over its budget is warned about
OVERRUN_MARGIN = 0.1
FIT_MARGIN = 1.1  # the budget said to fit is the needs plus this margin (they are estimates)
# ... on a loaded machine (the reference ran this much slower), whose load moves between runs:
# measured at load 3-6, the needs of two runs in a row differed by up to 18%
LOADED_FACTOR = 1.5
LOADED_FIT_MARGIN = 1.25
# after measuring (engine.analyse_run, then the report), per variant: each lens's analysis of
# what it stored; the report once per benchmark. Measured on an A/A of sorted(data) through six
# lenses (docs/benchmarks.md, "The budget"), scaled back to the reference machine's speed: the
# instructions and asm lenses' are seconds, which a 10 s budget cannot ignore
ANALYSIS_S = 0.05  # a sampling lens (time, counters, rss, torch): statistics on its samples
INSTRUCTIONS_ANALYSIS_S = 1.0  # parsing callgrind's per-function and per-address costs
PROFILE_ANALYSIS_S = 0.05  # flame trees and per-symbol shares
ASM_ANALYSIS_S = 1.5  # pairing and diffing the hot functions' listings, their instruction mix,
# and rendering them
REPORT_S = 0.1  # loading the run from the store and rendering it (JSON, terminal)

# The reference the constants' machine is compared against, timed by the probe
# (measure/probe.py): a Python process (no site, isolated) doing a fixed amount of work, which
# prints the CPU time it used; and valgrind's callgrind starting an interpreter with
# instrumentation off, as the instructions lens starts its workers. Their wall times on the
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

    @property
    def factor(self) -> float:
        return _slowdown(self.reference_s, REFERENCE_S) or 1.0

    @property
    def valgrind_factor(self) -> float:
        """valgrind's own slowdown; without a valgrind reference, the reference program's."""
        return _slowdown(self.valgrind_s, VALGRIND_REFERENCE_S) or self.factor

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
                f"a reference process took {self.reference_s:.2f} s{cpu} "
                f"({REFERENCE_S:g} s on the reference machine): tool costs x{self.factor:.1f}"
            )
        if self.valgrind_s is not None:
            parts.append(
                f"valgrind's start-up took {self.valgrind_s:.2f} s "
                f"({VALGRIND_REFERENCE_S:g} s there): valgrind costs x{self.valgrind_factor:.1f}"
            )
        return "; ".join(parts)


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

    @property
    def fork(self) -> bool:
        """Whether lenses that may (the torch lens) fork their workers from a server per
        variant that imported the set-up's modules once, rather than start them fresh."""
        return (
            self.kind is BenchmarkKind.STATEMENT
            and self.variants * self.import_s >= FORK_WHEN_IMPORTS_S
        )

    @property
    def worker_start_s(self) -> float:
        """One worker's start-up in every generation after the first."""
        return self.fork_s if self.fork else self.startup_s

    @property
    def once_s(self) -> float:
        """Paid once per lens that forks: starting the servers (the imports)."""
        return self.variants * self.startup_s if self.fork else 0.0


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
    # the time lens: its generations are forked from rounds of servers it starts itself
    server_rounds: ServerRounds | None = None

    @property
    def started_before_s(self) -> float:
        """The part of the minimum paid before the lens starts: its fork servers' start-up."""
        return self.once_s if self.forked else 0.0


CostModel = Callable[[CostProbe, Settings], LensCost]


def _after(probe: CostProbe, per_variant_s: float) -> float:
    """A lens's analysis after measuring, at this machine's speed."""
    return probe.variants * per_variant_s * probe.speed.factor


def time_cost(probe: CostProbe, settings: Settings) -> LensCost:
    n = probe.variants
    after_s = _after(probe, ANALYSIS_S)
    if probe.kind is BenchmarkKind.COMMAND:
        blocks = settings.min_command_blocks
        return LensCost(
            Metric.TIME,
            minimum_s=blocks * n * probe.sample_s,
            needs=f"{blocks} blocks of {n} runs of {probe.sample_s:.2g} s",
            elastic=True,
            weight=3.0,
            overshoot_s=n * probe.sample_s,
            after_s=after_s,
        )
    rounds = server_rounds(probe, settings)
    if rounds is not None:
        return _time_cost_in_rounds(probe, settings, rounds)
    # Fresh workers in every generation when imports are cheap. When start-up dominates, the
    # lens samples each generation at least as long as its workers took to start.
    # Where perflab has a CPU besides the measuring one, each generation's workers start there
    # while the previous generation measures (lenses/time/measure.py): only the first
    # generation's start-up is paid on top.
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    start_s = n * probe.startup_s
    sampling_s = max(TIME_MIN_GENERATION_S, start_s, blocks * n * probe.sample_s)
    started_ahead = settings.pin and len(os.sched_getaffinity(0)) > 1
    generation_s = sampling_s if started_ahead else start_s + sampling_s
    calibration_s = 4 * n * probe.sample_s + (start_s if started_ahead else 0.0)
    return LensCost(
        Metric.TIME,
        minimum_s=calibration_s + settings.min_generations * generation_s,
        needs=f"{settings.min_generations} generations of {n} fresh workers "
        f"at {probe.startup_s:.2g} s start-up each",
        elastic=True,
        weight=3.0,
        overshoot_s=generation_s,
        after_s=after_s,
    )


@dataclass(frozen=True)
class ServerRounds:
    """How the time lens forks its generations when the set-up's imports are expensive: in
    rounds, each one fresh server process per variant (its own hash seed and layout, the
    imports paid once) forking `forks_per_round` generations' workers; at least `min_rounds`
    rounds. Forked workers share their server's per-process effects, so the round is the unit
    of the interval (stats.paired.unit_means)."""

    forks_per_round: int
    min_rounds: int
    round_start_s: float  # the probe's estimate of starting one round's servers (all variants)


def time_generation_s(budget_s: float) -> float:
    """How long the time lens samples a generation, from its budget (before start-up)."""
    low_s, high_s = TIME_GENERATION_S_RANGE
    return min(high_s, max(low_s, budget_s / TIME_TARGET_GENERATIONS))


def server_rounds(probe: CostProbe, settings: Settings) -> ServerRounds | None:
    """The time lens's server rounds for this benchmark, or None for fresh workers in every
    generation: rounds when the variants' imports take more than
    SERVER_ROUNDS_WHEN_IMPORTS_SHARE of a generation at this budget.

    Forks per round: two-stage sampling spends the budget best with about
    sqrt(round start-up / generation cost) generations per round when the per-server and the
    per-generation variances are alike (more forks when the imports dominate), at least 2 so
    that forking saves anything, at most MAX_FORKS_PER_ROUND so that rounds keep coming."""
    if probe.kind is not BenchmarkKind.STATEMENT or probe.failed:
        return None
    n = probe.variants
    generation_s = time_generation_s(settings.budget_s)
    if n * probe.import_s <= SERVER_ROUNDS_WHEN_IMPORTS_SHARE * generation_s:
        return None
    round_start_s = n * probe.startup_s
    generation_cost_s = _forked_generation_s(probe, settings)
    forks = math.sqrt(round_start_s / generation_cost_s)
    forks_per_round = max(2, min(MAX_FORKS_PER_ROUND, round(forks)))

    def min_rounds(forks: int) -> int:
        return max(
            2,
            min(MIN_SERVER_ROUNDS, settings.min_generations),
            math.ceil(settings.min_generations / forks),
        )

    # fewer forks when the minimum rounds would not fit the budget with as many: the rounds
    # (units) are what the minimum is for
    while (
        forks_per_round > 2
        and min_rounds(forks_per_round) * (round_start_s + forks_per_round * generation_cost_s)
        > settings.budget_s
    ):
        forks_per_round -= 1
    return ServerRounds(forks_per_round, min_rounds(forks_per_round), round_start_s)


def _forked_generation_s(probe: CostProbe, settings: Settings) -> float:
    """One forked generation: its workers' fork and set-up, and its samples."""
    n = probe.variants
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    sampled_s = max(time_generation_s(settings.budget_s), blocks * n * probe.sample_s)
    return n * probe.fork_s + sampled_s


def _time_cost_in_rounds(probe: CostProbe, settings: Settings, rounds: ServerRounds) -> LensCost:
    n = probe.variants
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    # the minimum samples each generation only as long as its blocks need
    generation_s = n * probe.fork_s + max(TIME_MIN_GENERATION_S, blocks * n * probe.sample_s)
    round_s = rounds.round_start_s + rounds.forks_per_round * generation_s
    calibration_s = 4 * n * probe.sample_s
    return LensCost(
        Metric.TIME,
        minimum_s=calibration_s + rounds.min_rounds * round_s,
        needs=f"{rounds.min_rounds} rounds of {n} fork servers at {probe.startup_s:.2g} s "
        f"start-up each, {rounds.forks_per_round} forked generations per round",
        elastic=True,
        weight=3.0,
        overshoot_s=generation_s,
        server_rounds=rounds,
        after_s=_after(probe, ANALYSIS_S),
    )


def counters_cost(probe: CostProbe, settings: Settings) -> LensCost:
    n = probe.variants
    generations = max(settings.min_generations, 2)
    perf_start_s = PERF_START_S * probe.speed.factor
    after_s = _after(probe, ANALYSIS_S)
    if probe.kind is BenchmarkKind.COMMAND:
        blocks = settings.warmup_blocks + generations
        run_s = probe.sample_s + perf_start_s
        return LensCost(
            Metric.COUNTERS,
            minimum_s=blocks * n * run_s,
            needs=f"{blocks} blocks of {n} runs under perf stat",
            elastic=True,
            overshoot_s=n * run_s,
            after_s=after_s,
        )
    # lenses/counters: 10 blocks per generation after warm-up, fresh workers under perf stat
    generation_s = n * (probe.startup_s + perf_start_s) + (
        (settings.warmup_blocks + 10) * n * probe.sample_s
    )
    return LensCost(
        Metric.COUNTERS,
        minimum_s=generations * generation_s,
        needs=f"{generations} generations of {n} workers under perf stat",
        elastic=True,
        overshoot_s=generation_s,
        after_s=after_s,
    )


def profile_cost(
    probe: CostProbe, settings: Settings, *, processes: int = PROFILE_PROCESSES
) -> LensCost:
    """`processes`: workers per variant of a statement."""
    n = probe.variants
    factor = probe.speed.factor
    statement = probe.kind is BenchmarkKind.STATEMENT
    processes = processes if statement else 1
    start_s = probe.startup_s + PERF_START_S * factor if statement else 0.0
    record_s = max(PROFILE_REGION_S, processes * probe.sample_s)
    # statements: each generation's variants are read back (perf script) side by side, on
    # the CPUs other perflab runs leave (lenses/profile: all_cpus, run_threads)
    script_s = (
        processes * side_by_side_s(PROFILE_POST_S, n, probe.counting_cpus, factor)
        if statement
        else n * PROFILE_POST_S * factor
    )
    return LensCost(
        Metric.PROFILE,
        minimum_s=n * processes * start_s + script_s + n * record_s,
        needs=f"{PROFILE_REGION_S:g} s recorded per variant, then symbolised",
        after_s=_after(probe, PROFILE_ANALYSIS_S),
    )


def asm_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """One worker per variant under perf record (no call graph) for ASM_REGION_S of its loop,
    one after another, read back with perf script; then every variant's hot functions read and
    disassembled side by side on the CPUs other perflab runs leave."""
    n = probe.variants
    factor = probe.speed.factor
    statement = probe.kind is BenchmarkKind.STATEMENT
    start_s = (probe.startup_s if statement else 0.0) + PERF_START_S * factor
    record_s = max(ASM_REGION_S, probe.sample_s)
    per_variant_s = start_s + record_s + ASM_SCRIPT_S * factor
    post_s = side_by_side_s(ASM_POST_S, n, probe.counting_cpus, factor)
    return LensCost(
        Metric.ASM,
        minimum_s=n * per_variant_s + post_s,
        needs="a profile per variant, then its hot functions disassembled",
        after_s=_after(probe, ASM_ANALYSIS_S),
    )


def side_by_side_s(work_s: float, jobs: int, cpus: int, factor: float) -> float:
    """`jobs` jobs of `work_s` each (on the reference machine) run at once on `cpus` CPUs of a
    machine that runs one job `factor` times slower. On a loaded machine each job takes its
    share of a CPU beside the other processes: k jobs take (factor - 1 + k/cpus) times one
    job's work, not k x factor; on a quiet one, k/cpus rounds at its speed."""
    rounds = max(1.0, jobs / max(1, cpus))
    if factor <= 1.0:
        return work_s * factor * rounds
    return work_s * (factor - 1.0 + rounds)


def instructions_cost(
    probe: CostProbe, settings: Settings, *, processes: int = 2, toggled: bool | None = None
) -> LensCost:
    """Statements: `processes` worker processes per variant (lenses/instructions) on the CPUs
    the probe found free of other perflab runs: fresh processes all at once where they fit on
    them, else a fork server per variant (as many variants at a time as CPUs) importing the
    set-up once under callgrind, whose children count one after another. `toggled`: the
    workers toggle collection rather than switch instrumentation around each loop (None:
    unless the cache is simulated)."""
    if toggled is None:
        toggled = not settings.cache_sim
    n = probe.variants
    valgrind = probe.speed.valgrind_factor
    if probe.kind is BenchmarkKind.COMMAND:
        # the probe's run was timed here and now: only valgrind's own start-up is scaled
        per_variant = VALGRIND_START_S * valgrind + CALLGRIND_COMMAND_SLOWDOWN * probe.sample_s
        minimum_s = n * per_variant
        needs = f"one callgrind process per variant (~{per_variant:.0f} s each)"
    else:
        # the interpreter's start-up was timed here and now (startup_s); valgrind's start-up
        # and the counted part are the reference machine's, scaled
        start_s = VALGRIND_START_S * valgrind + VALGRIND_STARTUP_SLOWDOWN * probe.startup_s
        counted_s = (CALLGRIND_TOGGLED_COUNTED_S if toggled else CALLGRIND_COUNTED_S) * valgrind
        cpus = max(1, probe.counting_cpus)
        if n * processes <= cpus:
            minimum_s = start_s + counted_s
            needs = f"{processes} callgrind process{'es' if processes > 1 else ''} per variant"
            needs += f", all at once (~{minimum_s:.0f} s)"
        else:
            per_variant = start_s + processes * counted_s
            minimum_s = math.ceil(n / cpus) * per_variant
            needs = (
                f"a callgrind fork server per variant, {processes} children counted in turn "
                f"(~{per_variant:.0f} s per variant, {cpus} at once)"
            )
    return LensCost(
        Metric.INSTRUCTIONS,
        minimum_s=minimum_s,
        needs=needs,
        after_s=_after(probe, INSTRUCTIONS_ANALYSIS_S),
    )


def torch_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """Two generations at least (a CI needs two), up to --min-generations within its share:
    its ratio is indicative only (profiler overhead), the time lens's is the verdict."""
    n = probe.variants
    profiler_start_s = TORCH_PROFILER_START_S * probe.speed.factor
    generation_s = n * (
        probe.worker_start_s
        + (0.0 if probe.fork else profiler_start_s)
        + TORCH_BLOCKS * TORCH_PROFILE_OVERHEAD * probe.sample_s
    )
    # forked: the servers' start-up (before the lens) and each server's profiler warm-up (in it)
    warm_s = n * profiler_start_s if probe.fork else 0.0
    return LensCost(
        Metric.TORCH,
        minimum_s=probe.once_s + warm_s + 2 * generation_s,
        needs=f"2 generations of {n} profiled workers",
        elastic=True,
        weight=1.0,
        forked=probe.fork,
        once_s=probe.once_s,
        after_s=_after(probe, ANALYSIS_S),
    )


def rss_cost(probe: CostProbe, settings: Settings) -> LensCost:
    n = probe.variants
    generations = max(2, settings.min_generations)
    # fresh workers: a forked child's peak RSS would include its server's pages
    start_s = probe.startup_s if probe.kind is BenchmarkKind.STATEMENT else 0.0
    # statements: two blocks, each sample the loop once plain and once under tracemalloc
    # (lenses/rss/worker_ops.py); commands: one run per block
    # the traced loops run ~20 samples' length each, long enough to be preempted as often as
    # the reference was on a loaded machine (a probe's one short sample mostly is not): they
    # slow by its factor there; a machine faster than the reference keeps the probe's length
    sampled_s = (
        RSS_BLOCKS * (1 + RSS_TRACED_SLOWDOWN) * probe.sample_s * max(1.0, probe.speed.factor)
        if probe.kind is BenchmarkKind.STATEMENT
        else 3 * probe.sample_s
    )
    generation_s = n * (start_s + sampled_s)
    return LensCost(
        Metric("rss"),
        minimum_s=generations * generation_s,
        needs=f"{generations} generations of {n} workers",
        after_s=_after(probe, ANALYSIS_S),
    )


def memory_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """The memory lens: the instructions lens's callgrind runs (with cache simulation, two
    processes per variant side by side, one variant after the other), then the rss lens's
    workers."""
    # the memory lens switches instrumentation around every loop (cache simulation)
    one_variant = instructions_cost(
        replace(probe, variants=1), settings, processes=2, toggled=False
    )
    counted_s = probe.variants * one_variant.minimum_s
    peak = rss_cost(probe, settings)
    return LensCost(
        Metric("memory"),
        minimum_s=counted_s + peak.minimum_s,
        needs=f"{one_variant.needs} per variant, one after another, then {peak.needs}",
        after_s=_after(probe, INSTRUCTIONS_ANALYSIS_S) + peak.after_s,
    )


def default_cost(metric: Metric, probe: CostProbe, settings: Settings) -> LensCost:
    """A lens without a cost model: one generation of workers and a second of sampling."""
    start_s = probe.startup_s if probe.kind is BenchmarkKind.STATEMENT else probe.sample_s
    return LensCost(
        metric,
        minimum_s=probe.variants * (start_s + 1.0),
        needs="one generation",
        after_s=_after(probe, ANALYSIS_S),
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
    def fitting_budget_s(self) -> float:
        """The smallest budget (whole seconds, with a margin) that holds every minimum: a
        larger margin on a loaded machine, where the next run's needs may well be larger."""
        loaded = self.probe.speed.factor >= LOADED_FACTOR
        return float(math.ceil(self.needed_s * (LOADED_FIT_MARGIN if loaded else FIT_MARGIN)))

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

        def part(share: LensShare) -> str:
            name = share.metric.value
            if failed_s is not None and share.metric in failed_s:
                return (
                    f"{name} failed after {failed_s[share.metric]:.1f} s "
                    f"(planned {share.share_s:.1f} s)"
                )
            took = None if took_s is None else took_s.get(share.metric)
            if took is None:
                if failed_s:  # a lens failed before this one's turn
                    return f"{name} not run (planned {share.share_s:.1f} s)"
                return f"{name} {share.share_s:.1f} s"
            given = share.share_s if given_s is None else given_s.get(share.metric, share.share_s)
            planned = (
                f" (planned {share.share_s:.1f} s)" if abs(given - share.share_s) >= 0.05 else ""
            )
            return f"{share.metric.value} {took:.1f} s of its {given:.1f} s{planned}"

        parts = ", ".join(part(s) for s in self.shares)
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
        return (
            f"budget {self.budget_s:g} s{over}: {started}probe {self.probe.probe_s:.1f} s, "
            f"{parts}, "
            f"analysis and report {self.after_s:.1f} s{how}; {self.probe.speed.describe()}"
            f"{waited}"
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
        benchmark) or the probe to the end of the last lens."""
        if used_s <= self.budget_s * (1 + OVERRUN_MARGIN):
            return None
        head = f"took {used_s:.0f} s of --budget {self.budget_s:g}"

        def over(share: LensShare) -> float:
            return took_s.get(share.metric, 0.0) - given_s.get(share.metric, share.share_s)

        worst = max(self.shares, key=over)
        # the minimums that did not fit explain the overrun, unless one lens alone took more
        # beyond its share than they lacked
        if not self.fits and over(worst) <= self.needed_s - self.budget_s:
            largest = max(self.shares, key=lambda s: s.cost.minimum_s)
            count = len(self.shares)
            lenses = f"the {largest.metric.value} lens" if count == 1 else f"{_words(count)} lenses"
            return (
                f"{head}: {lenses} need{'s' if count == 1 else ''} about {self.needed_s:.0f} s on "
                f"this machine now (the {largest.metric.value} lens's minimum measurement "
                f"{largest.cost.minimum_s:.0f} s: {largest.cost.needs}); each lens measured its "
                "minimum"
            )
        if over(worst) <= 0:
            return (
                f"{head}: perflab's start-up, the probe and the analysis took longer than planned"
            )
        short = "" if self.fits else f"; the minimums alone need about {self.needed_s:.0f} s"
        return (
            f"{head}: the {worst.metric.value} lens took {took_s[worst.metric]:.0f} s where the "
            f"plan gave it {given_s.get(worst.metric, worst.share_s):.0f} s (its minimum "
            f"measurement estimated at {worst.cost.minimum_s:.1f} s: {worst.cost.needs}){short}"
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
            "would fit",
            hint=f"give --budget {self.fitting_budget_s:g} or more, measure fewer lenses "
            "(--metric), or leave out --strict-budget to measure the minimums whatever they cost",
            detail=f"perflab's start-up {self.before_s:.1f} s"
            + (
                f" (and {self.waited_s:.1f} s waiting for a CPU, not counted)"
                if self.waited_s >= 0.1
                else ""
            )
            + f"; probe {self.probe.probe_s:.1f} s; "
            f"{needs}; analysis and report after "
            f"measuring {self.after_s:.1f} s; {self.probe.speed.describe()}",
        )


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
    fixed = [c for c in costs if not c.elastic]
    elastic = [c for c in costs if c.elastic]
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
    return max(0.0, share_s)


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
