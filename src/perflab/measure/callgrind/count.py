"""Counting under valgrind's callgrind (`CallgrindCounter.count`, with one `CountOptions`): the
instructions lens's deterministic instruction counts, and the memory lens's cache simulation.
Both lenses hold a counter and call it; neither inherits from it.

Statements run in the statement worker inside the variant's own interpreter, started under
``valgrind --tool=callgrind --instr-atstart=no``: interpreter start-up, imports and setup run
uninstrumented (instrumenting is what makes callgrind slow). With valgrind's client requests
(worker/callgrind_ops.py) the worker switches instrumentation on once and toggles collection around
each measured loop, dumping the costs after it (with cache simulation, or other threads running, it
switches instrumentation on and off around each loop instead); where it cannot make client requests,
the parent switches instrumentation around each loop through valgrind's own ``vgdb`` (``vgdb
--pid=PID instrumentation on``; callgrind_control is a Perl wrapper around the same). Nothing is
compiled on the user's machine. Every measured loop is paired with an empty-statement loop of the
same length, whose costs (the loop itself and the worker's handshake) are subtracted, as
torch.utils.benchmark does.

Commands run whole under callgrind, or with ``--toggle-collect=FUNCTION`` only inside
`CountOptions.region`.

What is fixed for determinism (and recorded as variant info): PYTHONHASHSEED=0, address-space
randomisation off (personality ADDR_NO_RANDOMIZE, as ``setarch -R``), the environment padded to
the same size for every variant, the cache geometry of the simulator. The worker's protocol code
is warmed up (CPython specialises code after a few runs) before anything is counted.

This module plans the counting and runs its jobs on the CPUs; its parts, by what they do:
`count_options` (the options, the fixed environment, loop counts), `workers` (the processes),
`switching` (switching callgrind around a worker's loops: client requests or vgdb), `dumps`
(reading what callgrind wrote), `store` (samples, artifacts and variant info).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import queue
from collections.abc import Sequence
from dataclasses import dataclass, replace

from perflab.machine.parallel import LiveSet, counting_cpus, run_on_cpus, run_threads
from perflab.machine.proc import LaunchSpec, stop_all_contained
from perflab.measure.callgrind.artifacts import KIND_UNAVAILABLE
from perflab.measure.callgrind.count_options import (
    MAX_PROCESSES,
    CountOptions,
    CountRun,
    why_not,
)
from perflab.measure.callgrind.counts_to_sink import store_command, store_statement
from perflab.measure.callgrind.workers import (
    WORKER_OPS,
    Counted,
    CountJob,
    StatementCounts,
    count_command,
    count_statements,
)
from perflab.measure.layout import environment_bytes, fixed_padding_target, padded_to
from perflab.measure.lens import LensContext
from perflab.measure.worker_client import StatementWorker, interpreter_for, variant_environment
from perflab.records.errors import BenchmarkFailedError, VariantsFailed
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Artifact, Benchmark, Note, Severity, Variant
from perflab.records.run_facts import VariantInfo
from perflab.stats.summary import process_levels
from perflab.tool_drivers.valgrind import CACHE_GEOMETRY, cannot_execute

__all__ = ["CountOptions", "CallgrindCounter", "cpus_for_counting"]

_REQUESTS_CHECK_TIMEOUT_S = 60.0  # the worker ops run natively: a Python's start-up
# the native check's answer (why not, or "") per interpreter, working directory and environment
RequestsChecked = dict[tuple[str, str | None, tuple[tuple[str, str], ...]], str]


class CallgrindCounter:
    """Counts every variant of a benchmark under callgrind (statements and commands), its counts
    and callgrind files stored as samples and artifacts of the counting lens's metric. Lenses
    hold one and call `count`; none inherits.

    Reads no lens's options: what the lens asks for (`metric`, `cache_sim`, `region`,
    `analysis_cache`) comes in its `CountOptions`, set by the lens from its own settings."""

    def __init__(
        self,
        options: CountOptions,
        *,
        requests_checked: RequestsChecked | None = None,
    ) -> None:
        self.options = options
        # shared by the counters `with_options` makes: each interpreter is checked once
        self._requests_checked = {} if requests_checked is None else requests_checked

    def with_options(self, options: CountOptions) -> CallgrindCounter:
        """A counter counting with `options`, sharing this one's checks of the interpreters."""
        return CallgrindCounter(options, requests_checked=self._requests_checked)

    def started_alike(self, context: LensContext, compared: int) -> CallgrindCounter:
        """This counter with fork-or-fresh decided now, as `count` would decide it for
        `compared` variants at once: a lens that counts its variants one call at a time (the
        memory lens) then starts every one alike, whatever CPUs are free at each call (how a
        process is started shifts its counts a little)."""
        if self.options.fork is not None:
            return self
        processes = max(1, self.options.processes)
        fork = processes * compared > len(cpus_for_counting(self.options, context.cpu))
        return self.with_options(replace(self.options, fork=fork))

    @property
    def metric(self) -> Metric:
        """The counting lens's: of the samples, artifacts, notes and progress (`CountOptions`)."""
        return self.options.metric

    def count(
        self,
        benchmark: Benchmark,
        context: LensContext,
        variants: Sequence[Variant] | None = None,
    ) -> None:
        """`variants` (None: every variant of `context.experiment`) counted, stored through
        `context.sink`; a variant that fails, where others are left to compare, raises
        `VariantsFailed` after the others were counted."""
        runs = self.planned_runs(benchmark, context, variants)
        cpus = cpus_for_counting(self.options, context.cpu)
        statement = benchmark.kind is BenchmarkKind.STATEMENT
        plan = self._plan(runs, cpus, statement=statement)
        jobs = plan.jobs(runs, tuple(range(plan.processes)))
        side_by_side = min(len(cpus), len(jobs))
        names = ", ".join(run.variant.name for run in runs)
        context.progress.update(
            benchmark=benchmark.name,
            metric=self.metric,
            detail=f"{self.options.progress_label}: {names}"
            + (f" ({side_by_side} at once)" if side_by_side > 1 else ""),
        )
        counting = _Counting(
            self, benchmark, context, cpus, statement=statement, compared=len(runs) > 1
        )
        # the run's clock: a test's fake one spends the share without waiting for it
        started_s = context.clock_ns() / 1e9
        counting.run(jobs)
        if statement and plan.processes < MAX_PROCESSES:
            spent_s = context.clock_ns() / 1e9 - started_s
            round_s = spent_s / math.ceil(len(jobs) / max(1, side_by_side))
            self._one_more_process(counting, runs, plan, side_by_side, round_s, started_s)
        if counting.failed:
            raise VariantsFailed(list(counting.failed.values()))

    def _plan(
        self, runs: Sequence[CountRun], cpus: Sequence[int | None], *, statement: bool
    ) -> _CountingPlan:
        """How many processes count each variant, and how they are started and switched."""
        # statements: several worker processes per variant, each its own valgrind, so that the
        # interval holds what differs between processes (a command's repeats are processes
        # already); the first process of every variant first
        processes = max(1, self.options.processes) if statement else 1
        # every variant's processes are switched one way, and forked or not alike: how a
        # process is started and switched shifts a statement's counts a little, which must
        # never pass for a difference of variants
        requests = False
        if statement:
            reasons = self._reasons_against_requests(runs)
            for run in runs:
                if reasons:
                    run.counted_with.why_not_client_requests = why_not(run.variant.name, reasons)
            requests = not reasons
        fork = requests and processes > 1 and self.options.fork is not False
        if self.options.fork is None:
            fork = fork and processes * len(runs) > len(cpus)
        if statement:
            for run in runs:
                # the processes are children of fork servers (budget/costs.py's fork_servers_for)
                run.counted_with.forked = fork
        return _CountingPlan(processes, fork=fork, requests=requests)

    def _one_more_process(
        self,
        counting: _Counting,
        runs: Sequence[CountRun],
        plan: _CountingPlan,
        side_by_side: int,
        round_s: float,
        started_s: float,
    ) -> None:
        """Processes of one variant settled at different levels: the interval is widened by
        their spread, yet with two a side a difference that is only the processes' still
        makes a verdict too often (docs/statistics.md); one more process per variant, counted
        as the others were, makes that rare, when the lens's share holds it."""
        disagreeing = counting.disagreeing()
        if not disagreeing:
            return
        context = counting.context
        # forked: a new server, which pays the import once more
        extra = plan.jobs(
            [
                run
                for run in runs
                if run.variant.name not in counting.unexecutable
                and run.variant.name not in counting.failed
            ],
            (plan.processes,),
        )
        extra_s = round_s * math.ceil(len(extra) / max(1, side_by_side))
        left_s = context.lens_budget_s - (context.clock_ns() / 1e9 - started_s)
        if extra_s > left_s:
            context.sink.add_note(self._no_room_note(counting, disagreeing, extra_s, left_s))
            return
        context.progress.update(
            benchmark=counting.benchmark.name,
            metric=self.metric,
            detail=f"{self.options.progress_label}: the processes of "
            f"{', '.join(disagreeing)} disagree, one more process per variant",
        )
        counting.run(extra)

    def _no_room_note(
        self, counting: _Counting, disagreeing: Sequence[str], extra_s: float, left_s: float
    ) -> Note:
        """Why no third process was counted: the lens's share has no room for it."""
        what = ", ".join(f"`{name}`" for name in disagreeing)
        return Note(
            Severity.INFO,
            f"the worker processes of {what} counted at different levels; a third "
            f"process per variant would narrow what that leaves undecided, but needs "
            f"~{extra_s:.0f} s where the lens's share has {max(0.0, left_s):.0f} s left",
            hint="a larger --budget counts a third process per variant",
            benchmark=counting.benchmark.name,
            metric=self.metric,
        )

    def client_requests_possible(
        self,
        benchmark: Benchmark,
        context: LensContext,
        variants: Sequence[Variant] | None = None,
    ) -> bool | str:
        """True when every one of `variants` (None: the experiment's) can switch callgrind with
        client requests, else why not: a lens that counts the variants one at a time (memory)
        asks first and passes the answer on (`client_requests`), so that all are counted
        alike."""
        runs = self.planned_runs(benchmark, context, variants)
        reasons = self._reasons_against_requests(runs)
        return why_not(runs[0].variant.name, reasons) if reasons else True

    def planned_runs(
        self,
        benchmark: Benchmark,
        context: LensContext,
        variants: Sequence[Variant] | None = None,
    ) -> list[CountRun]:
        """What `count` counts for each of `variants` (None: the experiment's): its environment
        fixed for determinism (padded to the size of the largest of the experiment's variants,
        so a lens that counts them one call at a time pads them alike), and what was fixed,
        recorded as its variant info."""
        if variants is None:
            variants = context.experiment.variants
        target = fixed_padding_target(
            [variant_environment(v) for v in (*context.experiment.variants, *variants)]
        )
        runs = []
        for variant in variants:
            fixed_env = padded_to(variant_environment(variant), target)
            fixed_env["PYTHONHASHSEED"] = "0"
            run = CountRun(benchmark, variant, context, fixed_env, self.metric)
            counted_with = run.counted_with
            counted_with.python_hash_seed = "0"
            counted_with.aslr = "off (personality ADDR_NO_RANDOMIZE, as setarch -R)"
            counted_with.environment_bytes = environment_bytes(fixed_env)
            if self.options.cache_sim:
                counted_with.cache_geometry = dict(CACHE_GEOMETRY)
            runs.append(run)
        return runs

    def _reasons_against_requests(self, runs: Sequence[CountRun]) -> dict[str, str]:
        """Why each variant whose interpreter cannot switch callgrind with client requests
        cannot (empty: every one can): the lens's worker ops run natively, in the variant's
        interpreter and environment, and say what would stop them (the architecture, ctypes,
        an executable page). Where one cannot, every variant is switched through vgdb."""
        if self.options.client_requests is not True:
            why = self.options.client_requests or "client requests were turned off"
            return {run.variant.name: why for run in runs}
        spec = importlib.util.find_spec(WORKER_OPS)
        assert spec is not None and spec.origin is not None
        origin = spec.origin
        # asked once per interpreter and environment: a caller counting one variant at a time
        # asks for every variant, then counts each alone with the answer
        keys = {
            run.variant.name: (
                interpreter_for(run.variant, run.context.default_python),
                run.variant.cwd,
                tuple(sorted(run.env.items())),
            )
            for run in runs
        }
        asked = list(dict.fromkeys(k for k in keys.values() if k not in self._requests_checked))

        def check(key: tuple[str, str | None, tuple[tuple[str, str], ...]]) -> str:
            interpreter, cwd, env = key
            completed = runs[0].context.runner.run(
                LaunchSpec((interpreter, origin), env=dict(env), cwd=cwd),
                timeout_s=_REQUESTS_CHECK_TIMEOUT_S,
            )
            return completed.stdout.strip() if completed.ok else completed.describe_failure()

        # one short native process each, side by side (they wait on their processes)
        answers = run_threads([functools.partial(check, key) for key in asked], parallel=True)
        self._requests_checked.update(zip(asked, answers, strict=True))
        return {
            name: self._requests_checked[key]
            for name, key in keys.items()
            if self._requests_checked[key]
        }


def cpus_for_counting(options: CountOptions, measuring_cpu: int | None) -> tuple[int | None, ...]:
    """Where the variants' valgrind processes run: one at a time on the measuring CPU, or
    side by side on every CPU no other lens measures on while this one runs (`None`: unpinned,
    under --no-pin)."""
    if not options.parallel:
        return (measuring_cpu,)
    # the engine keeps perflab itself off the measuring CPU: add it back
    allowed = set(options.allowed_cpus()) | (
        {measuring_cpu} if measuring_cpu is not None else set()
    )
    busy = set(options.other_runs_cpus(sorted(allowed)))
    cpus = counting_cpus(allowed, busy, measuring_cpu)
    if measuring_cpu is None:  # as many at once, unpinned
        return (None,) * len(cpus)
    return cpus


@dataclass(frozen=True)
class _CountingPlan:
    """How each variant is counted: its processes, forked from fork servers or fresh, switched
    with client requests or through vgdb."""

    processes: int  # per variant
    fork: bool
    requests: bool

    def jobs(self, runs: Sequence[CountRun], processes: tuple[int, ...]) -> list[CountJob]:
        """The jobs that count `processes` of every run: forked, one job per variant; fresh,
        one per process, the first process of every variant first."""
        if self.fork:
            return [CountJob(run, processes, fork=True, requests=self.requests) for run in runs]
        return [
            CountJob(run, (process,), requests=self.requests)
            for process in processes
            for run in runs
        ]


class _Counting:
    """One benchmark's callgrind jobs on the CPUs. Each worker process's counts are handed over
    by its job's thread as soon as they are counted and stored from the calling thread: an
    interrupt between a fork server's children keeps the first child's counts."""

    def __init__(
        self,
        counter: CallgrindCounter,
        benchmark: Benchmark,
        context: LensContext,
        cpus: Sequence[int | None],
        *,
        statement: bool,
        compared: bool,
    ) -> None:
        self.counter = counter
        self.benchmark = benchmark
        self.context = context
        self.cpus = cpus
        self.statement = statement
        self.workers: LiveSet[StatementWorker] = LiveSet(lambda worker: worker.kill())
        self.finished: queue.SimpleQueue[tuple[CountRun, int, Counted, int | None]] = (
            queue.SimpleQueue()
        )
        # per variant, each worker process's per-iteration counts: whether they disagree
        self.counted_by_process: dict[str, list[tuple[float, ...]]] = {}
        self.unexecutable: set[str] = set()  # variants valgrind cannot execute
        # variants whose counting failed, each with its (first) error; only where another
        # variant is counted beside it (one variant alone fails as the benchmark)
        self.failed: dict[str, BenchmarkFailedError] = {}
        self.tolerates_failures = compared

    def run(self, jobs: Sequence[CountJob]) -> None:
        run_on_cpus(jobs, self.cpus, self.count, self.store, on_stop=self.stop, drain=self.drain)

    def count(self, job: CountJob, cpu: int | None) -> tuple[int | None, str | None]:
        """(cpu, why valgrind cannot execute the variant, or None); may run in a thread."""

        def done(process: int, counts: Counted) -> None:
            self.finished.put((job.run, process, counts, cpu))

        try:
            if self.statement:
                count_statements(self.counter.options, job, cpu, self.workers, done)
            else:
                done(job.processes[0], count_command(self.counter.options, job.run, cpu))
        except BenchmarkFailedError as error:
            reason = cannot_execute(error)
            if reason is not None and self.counter.options.note_unexecutable:
                return cpu, reason
            if not self.tolerates_failures or error.variant is None:
                raise
            # a variant that crashes stops its own jobs only: the others are counted to the end
            self.failed.setdefault(error.variant, error)
        return cpu, None

    def drain(self) -> None:
        """Store every worker process's counts handed over so far."""
        while True:
            try:
                run, process, counts, cpu = self.finished.get_nowait()
            except queue.Empty:
                return
            if isinstance(counts, StatementCounts):
                store_statement(self.counter.options, run, counts, process, cpu)
                levels = self.counted_by_process.setdefault(run.variant.name, [])
                levels.append(counts.per_iteration_by_repeat())
            else:
                store_command(self.counter.options, run, counts, cpu)
            self.context.sink.add_variant_info(
                run.variant.name,
                VariantInfo.of_lens(str(self.counter.metric), run.counted_with.to_json()),
            )

    def store(self, job: CountJob, outcome: tuple[int | None, str | None]) -> None:
        """A job done: the CPU it counted on, or (once per variant) why it could not count."""
        cpu, reason = outcome
        run = job.run
        if run.variant.name in self.failed:
            return
        if reason is not None:
            if run.variant.name not in self.unexecutable:
                self.unexecutable.add(run.variant.name)
                self.context.sink.add_artifact(
                    Artifact(
                        self.benchmark.name,
                        run.variant.name,
                        self.counter.metric,
                        KIND_UNAVAILABLE,
                        json.dumps({"valgrind": reason}),
                    )
                )
            return
        run.counted_with.cpus.append(cpu)
        self.context.sink.add_variant_info(
            run.variant.name,
            VariantInfo.of_lens(str(self.counter.metric), run.counted_with.to_json()),
        )

    def stop(self) -> None:
        self.workers.stop()
        stop_all_contained()  # workers still in their setup (import torch) are not listed

    def disagreeing(self) -> list[str]:
        """The variants whose worker processes counted at different levels."""
        return sorted(
            name
            for name, levels in self.counted_by_process.items()
            if (found := process_levels(levels)) is not None and found.disagree
        )
