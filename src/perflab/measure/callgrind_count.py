"""Counting under valgrind's callgrind, with explicit options: the instructions lens's
deterministic instruction counts, and the memory lens's cache simulation (`CallgrindCounter`).

Statements run in the statement worker inside the variant's own interpreter, started under
``valgrind --tool=callgrind --instr-atstart=no``: interpreter start-up, imports and setup run
uninstrumented (callgrind is ~50x slower when instrumenting). With valgrind's client requests
(worker/callgrind_ops.py) the worker switches instrumentation on once and toggles collection around
each measured loop, dumping the costs after it (with cache simulation, or other threads running, it
switches instrumentation on and off around each loop instead); where it cannot make client requests,
the parent switches instrumentation around each loop through valgrind's own ``vgdb`` (``vgdb
--pid=PID instrumentation on``; callgrind_control is a Perl wrapper around the same). Nothing is
compiled on the user's machine. Every measured loop is paired with an empty-statement loop of the
same length, whose costs (the loop itself and the worker's handshake) are subtracted, as
torch.utils.benchmark does.

Commands run whole under callgrind, or with ``--toggle-collect=FUNCTION`` only inside
`Settings.region`.

What is fixed for determinism (and recorded as variant info): PYTHONHASHSEED=0, address-space
randomisation off (personality ADDR_NO_RANDOMIZE, as ``setarch -R``), the environment padded to
the same size for every variant, the cache geometry of the simulator. The worker's protocol code
is warmed up (CPython specialises code after a few runs) before anything is counted.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import queue
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perflab.lenses.registry import lens_option
from perflab.machine import cpu_lock
from perflab.machine.host import cpu_flags, read_text
from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner, stop_all_contained
from perflab.machine.scratch import private_folder
from perflab.measure.callgrind_artifacts import (
    KIND_COMMAND,
    KIND_EMPTY,
    KIND_INLINE_FRAMES,
    KIND_OBJECTS,
    KIND_STATEMENT,
    KIND_UNAVAILABLE,
    SAMPLE_NAME,
)
from perflab.measure.commands import command_argv
from perflab.measure.fork_server import ForkServer
from perflab.measure.lens import LensContext
from perflab.measure.reported_time import (
    last_region_dump,
    region_dump_options,
    report_arguments,
    reported_iterations,
)
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerInfo,
    WorkerOps,
    interpreter_for,
    variant_environment,
)
from perflab.records.errors import (
    BenchmarkFailedError,
    ConfigError,
    ToolUnavailableError,
    VariantsFailed,
)
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkKind,
    Metric,
    Note,
    Sample,
    Settings,
    Severity,
    TimeReport,
    Variant,
)
from perflab.stats.summary import process_levels
from perflab.tools.analysis_cache import AnalysisCache
from perflab.tools.callgrind import (
    INSTRUCTIONS_EVENT,
    CallgrindFormatError,
    CallgrindPart,
    FunctionCosts,
    InstructionCost,
    InstructionCosts,
    combine_parts,
    parse_callgrind,
)
from perflab.tools.debuginfo import frames_to_json, has_debug_info, object_identity, symbolise
from perflab.tools.parallel import LiveSet, counting_cpus, run_on_cpus

# Simulated cache geometry (size,associativity,line): fixed so counts do not depend on the host.
# A typical recent x86 core: 32 KiB 8-way L1i, 48 KiB 12-way L1d, 2 MiB 16-way last level.
CACHE_GEOMETRY: Mapping[str, str] = {
    "I1": "32768,8,64",
    "D1": "49152,12,64",
    "LL": "2097152,16,64",
}


_WARMUP_SAMPLES = 20  # CPython specialises the worker's own code after a few runs
_CALIBRATION_LOOPS = 10
_TARGET_INSTRUCTIONS = 20_000_000  # per measured loop: ~1 s under callgrind
_MAX_LOOPS = 10_000
_ENV_PAD_NAME = "PERFLAB_ENV_PAD"
# repeats of one process within this (relative) have settled: the residue of the handshake
# reached 2.6e-4 at the calibrated loop count on a loaded machine, allocator levels 3e-3 and more
_SETTLED = 1e-3
_MAX_SETTLING_REPEATS = 2  # counted pairs added at most while waiting for them to settle
# statements: worker processes per variant at most, the last added only when a variant's first
# processes counted at different levels (CallgrindCounter.measure)
MAX_PROCESSES = 3
# one vgdb call hung for 60 s on a busy CI machine (once in ~20 suites) where its others took
# 0.15 s: a call is given 20 s and asked again, what it did not do (switches are idempotent)
_VGDB_TIMEOUT_S = 20.0
_VGDB_ATTEMPTS = 3
_REQUESTS_CHECK_TIMEOUT_S = 60.0  # the worker ops run natively: a Python's start-up
WORKER_OPS = "perflab.worker.callgrind_ops"  # the source sent to the workers, run there
# how a worker's counted loops are switched on and off and dumped (recorded as variant info)
SWITCH_CLIENT_REQUESTS = "client requests"
SWITCH_VGDB = "vgdb"
_COMMAND_TIMEOUT_S = 3600.0


VALGRIND_HINT = "install valgrind (Debian/Ubuntu: apt-get install valgrind)"


@dataclass(frozen=True)
class DerivedEvent:
    name: str  # sample name and Comparison.event
    components: tuple[str, ...]  # callgrind events summed
    unit: str


# stored beside the instructions (samples) where the cache simulation ran
CACHE_EVENTS: tuple[DerivedEvent, ...] = (
    DerivedEvent("D1_misses", ("D1mr", "D1mw"), "misses"),
    DerivedEvent("LL_misses", ("ILmr", "DLmr", "DLmw"), "misses"),
    DerivedEvent("branch_mispredicts", ("Bcm", "Bim"), "mispredicts"),
)


# -- pure helpers ----------------------------------------------------------------------------


def instructions_of(parts: Sequence[CallgrindPart]) -> InstructionCosts | None:
    """The per-instruction costs of every part, None where a part has none (no --dump-instr)."""
    rows: list[InstructionCost] = []
    events: tuple[str, ...] | None = None
    for part in parts:
        if part.instructions is None:
            return None
        events = part.instructions.events
        rows.extend(part.instructions.rows)
    return None if events is None else InstructionCosts(events, tuple(rows))


def choose_loops(instructions_per_iteration: float) -> int:
    """Loops for about `_TARGET_INSTRUCTIONS` per measured loop, rounded down to 1-2-5 steps so
    that small differences between runs give the same loop count (and the same residue)."""
    if instructions_per_iteration <= 0:
        return _MAX_LOOPS
    wanted = max(1.0, min(_MAX_LOOPS, _TARGET_INSTRUCTIONS / instructions_per_iteration))
    decade = 10 ** math.floor(math.log10(wanted))
    step = max(s for s in (1, 2, 5) if s * decade <= wanted)
    return int(step * decade)


def settled(counts: Sequence[float]) -> bool:
    """Two consecutive repeats of one process agree within 0.1%: the allocator's state the
    statement leaves behind has settled. (torch.add: glibc's malloc_consolidate and
    unlink_chunk did 32 instructions per call less in a process's first repeat than in every
    later one.)"""
    return len(counts) >= 2 and abs(counts[-1] - counts[-2]) <= _SETTLED * abs(counts[-1])


def refining_loops(loops: int) -> int | None:
    """The length of a second calibration pair, when the first (10 loops) chose many loops.

    Each counted loop switched through vgdb carries a residue of up to a few thousand
    instructions (its ptrace interrupting the worker's read; more on a loaded machine): over 10
    loops of a ~10,000 instruction statement that is a few percent, enough to cross a 1-2-5
    step (torch.add on a loaded machine was calibrated to 1,000 loops in one run and 2,000 in
    the next). A tenth of the chosen loops (at most 2 million instructions) makes it ten times
    smaller."""
    refine = loops // 10
    return refine if refine > _CALIBRATION_LOOPS else None


def environment_bytes(env: Mapping[str, str]) -> int:
    """Bytes the environment takes on the initial stack ("KEY=VALUE\\0" per variable)."""
    return sum(len(k.encode()) + len(v.encode()) + 2 for k, v in env.items())


def padded_environment(env: Mapping[str, str], target_bytes: int) -> dict[str, str]:
    """`env` plus a padding variable so that it takes exactly `target_bytes` (when it fits):
    the environment's size shifts the stack, and with it the addresses the code sees."""
    out = {k: v for k, v in env.items() if k != _ENV_PAD_NAME}
    room = target_bytes - environment_bytes(out) - len(_ENV_PAD_NAME) - 2
    if room >= 0:
        out[_ENV_PAD_NAME] = "x" * room
    return out


def padding_target(envs: Sequence[Mapping[str, str]]) -> int:
    largest = max((environment_bytes(e) for e in envs), default=0)
    return (largest + len(_ENV_PAD_NAME) + 2 + 255) // 256 * 256


def callgrind_options(
    *,
    out_file: str,
    instr_at_start: bool,
    vgdb_prefix: str | None,
    cache_sim: bool,
    dump_instr: bool,
    region: str | None,
    trace_children: bool,
) -> tuple[str, ...]:
    options = [
        "--tool=callgrind",
        f"--callgrind-out-file={out_file}",
        f"--instr-atstart={'yes' if instr_at_start else 'no'}",
        f"--dump-instr={'yes' if dump_instr else 'no'}",
        "--quiet",
    ]
    if vgdb_prefix is not None:
        options += ["--vgdb=yes", f"--vgdb-prefix={vgdb_prefix}"]
    else:
        options.append("--vgdb=no")
    if cache_sim:
        options += ["--cache-sim=yes", "--branch-sim=yes"]
        options += [f"--{level}={geometry}" for level, geometry in CACHE_GEOMETRY.items()]
    if region is not None:
        options += [f"--toggle-collect={region}", "--collect-atstart=no"]
    if trace_children:
        options.append("--trace-children=yes")
    return tuple(options)


# valgrind's words when its decoder meets an instruction it does not know (then SIGILL)
_CANNOT_EXECUTE = re.compile(
    r"(unhandled instruction bytes: [^\n]*|Illegal opcode at address \S+|"
    r"Unrecognised instruction at address \S+)"
)


def cannot_execute(error: BenchmarkFailedError) -> str | None:
    """Valgrind's message when it stopped at an instruction it cannot execute, else None.

    A Python worker's fault handler takes the SIGILL valgrind raises, and valgrind (--quiet)
    then prints nothing: a worker killed by SIGILL under valgrind counts as the same. Code that
    is itself at fault fails again in the native lenses that follow."""
    text = "\n".join(t for t in (error.message, error.detail or "") if t)
    match = _CANNOT_EXECUTE.search(text)
    if match is not None:
        return match.group(1).strip()
    if "killed by signal 4 (SIGILL)" in error.message:
        return "SIGILL, without a message of valgrind's (the interpreter's fault handler took it)"
    return None


def cpu_has_avx512(cpuinfo: str) -> bool:
    return any(flag.startswith("avx512") for flag in cpu_flags(cpuinfo))


def check_valgrind_runs(runner: ProcessRunner) -> None:
    """`valgrind --version` succeeds: an installed valgrind can still be broken."""
    version = runner.run(LaunchSpec(("valgrind", "--version")), timeout_s=30)
    if not version.ok:
        raise ToolUnavailableError(
            f"valgrind --version {version.describe_failure()}",
            hint=VALGRIND_HINT,
            detail=version.stderr,
        )


def _read_cpuinfo() -> str:
    return read_text("/proc/cpuinfo") or ""


def _other_runs(cpus: Sequence[int]) -> list[int]:
    """CPUs another perflab run holds the advisory lock of (it may be measuring time there)."""
    return [cpu for cpu, pid in cpu_lock.held_cpus(cpus).items() if pid != os.getpid()]


# -- measuring -------------------------------------------------------------------------------


def _derived_totals(costs: FunctionCosts) -> dict[str, float]:
    return _derived({event: costs.total(event) for event in costs.events})


def _derived(by_event: Mapping[str, float]) -> dict[str, float]:
    """The stored samples' values from the totals of callgrind's events."""
    totals = {SAMPLE_NAME: by_event.get(INSTRUCTIONS_EVENT, 0.0)}
    for event in CACHE_EVENTS:
        if all(component in by_event for component in event.components):
            totals[event.name] = sum(by_event[component] for component in event.components)
    return totals


_EVENTS_LINE = re.compile(r"^events:\s*(.*?)\s*$", re.MULTILINE)
_TOTALS_LINE = re.compile(r"^totals:\s*(.*?)\s*$", re.MULTILINE)


def dump_totals(text: str) -> dict[str, float] | None:
    """Each event's total in a callgrind dump of one part, from its ``totals:`` line (the sum of
    its costs), without parsing the costs: a dump of torch with per-instruction costs takes a
    second to parse. None when the file has several parts or no such line. (``summary:`` is
    not used: it can differ from the costs' sum by a few instructions.)"""
    events = _EVENTS_LINE.findall(text)
    totals = _TOTALS_LINE.findall(text)
    if len(events) != 1 or len(totals) != 1:
        return None
    names, numbers = events[0].split(), totals[0].split()
    if len(numbers) > len(names) or not all(n.isdigit() for n in numbers):
        return None
    # trailing zero costs may be left out
    return {name: float(numbers[i]) if i < len(numbers) else 0.0 for i, name in enumerate(names)}


def _totals_of(text: str) -> dict[str, float]:
    quick = dump_totals(text)
    if quick is not None:
        return _derived(quick)
    return _derived_totals(parse_callgrind(text).combined())


def _why_not(variant: str, reasons: Mapping[str, str]) -> str:
    """Why `variant` is not switched with client requests: its own reason, else the others'."""
    return reasons.get(variant) or "; ".join(f"{name}: {why}" for name, why in reasons.items())


def _worker_timeout_s(settings: Settings) -> float:
    """A worker's (or fork server's) longest wait for a reply under callgrind."""
    return max(settings.sample_timeout_s * 10, 600.0)


def _read_dumps(directory: str, pid: int | None = None) -> list[tuple[str, str]]:
    """(file name, text) of every callgrind output file (of process `pid` only, when given: the
    children of one fork server write into one directory), in the order they were written
    (callgrind.out.PID.N for dumps, callgrind.out.PID at exit)."""

    def order(name: str) -> tuple[int, int]:
        pieces = name.split(".")
        dump = int(pieces[3]) if len(pieces) > 3 and pieces[3].isdigit() else 1 << 30
        return (int(pieces[2]) if pieces[2].isdigit() else 0, dump)

    names = sorted(
        (
            n
            for n in os.listdir(directory)
            if n.startswith("callgrind.out.") and (pid is None or n.split(".")[2] == str(pid))
        ),
        key=order,
    )
    return [(n, Path(directory, n).read_text(errors="replace")) for n in names]


@dataclass
class _Run:
    """One variant's measurement in progress (mutable, private)."""

    benchmark: Benchmark
    variant: Variant
    context: LensContext
    env: dict[str, str]
    fixed: dict[str, Any] = field(default_factory=dict)

    def error(self, message: str, **kwargs: Any) -> BenchmarkFailedError:
        return BenchmarkFailedError(
            message, variant=self.variant.name, benchmark=self.benchmark.name, **kwargs
        )

    def sample(
        self,
        name: str,
        value: float,
        *,
        loops: int,
        generation: int,
        block: int,
        cpu: int | None,
        warmup: bool = False,
    ) -> Sample:
        return Sample(
            benchmark=self.benchmark.name,
            variant=self.variant.name,
            metric=Metric.INSTRUCTIONS,
            name=name,
            value=value,
            loops=loops,
            generation=generation,
            block=block,
            cpu=cpu,
            warmup=warmup,
        )


class CallgrindCounter:
    """Every variant of a benchmark counted under callgrind, its counts and callgrind files
    stored as `Metric.INSTRUCTIONS` samples and artifacts (a lens that files them under its own
    metric wraps the sink).

    Uses `Settings.region` (commands: count only inside that function) and `Settings.cache_sim`
    (simulated D1/LL misses and branch mispredictions, fixed geometry)."""

    metric = Metric.INSTRUCTIONS  # of its progress, its notes and its unavailable artifacts

    def __init__(
        self,
        *,
        repeats: int = 2,
        processes: int = 2,
        loops: int | None = None,
        inline_frames: bool | None = None,
        equivalence_band: float | None = None,
        parallel: bool = True,
        allowed_cpus: Callable[[], Iterable[int]] = lambda: os.sched_getaffinity(0),
        other_runs_cpus: Callable[[Sequence[int]], Iterable[int]] = lambda cpus: _other_runs(cpus),
        read_cpuinfo: Callable[[], str] = _read_cpuinfo,
        client_requests: bool | str = True,
        fork: bool | None = None,
        note_unexecutable: bool = True,
        toggle_collection: bool = True,
    ) -> None:
        self.repeats = repeats  # counted pairs per worker process (a command: processes)
        # worker processes per variant for statements, each under its own valgrind: the unit of
        # the interval, since a process can settle at a level of its own (torch.add: 1.2% once)
        self.processes = processes
        # the variants' valgrind processes side by side, one per free CPU (counts do not depend
        # on the machine being quiet); False: one after another on the measuring CPU
        self.parallel = parallel
        self.allowed_cpus = allowed_cpus
        # CPUs other perflab runs on this machine measure on (their advisory locks): never used
        self.other_runs_cpus = other_runs_cpus
        self.loops = loops
        self.inline_frames = inline_frames  # None: when the command's executable has debug info
        self.equivalence_band = equivalence_band  # None: the experiment's, as every lens
        self.read_cpuinfo = read_cpuinfo
        # statements: the worker switches callgrind with client requests where every variant
        # can; False, or why not: always through vgdb from the parent
        self.client_requests = client_requests
        # the native check's answer (why not, or "") per interpreter, working directory and
        # environment: shared by copies of the lens
        self._requests_checked: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], str] = {}
        # statements: a variant's processes as children of one fork server (its set-up's
        # modules imported under callgrind once) instead of fresh processes; None: when fresh
        # ones would not all fit on the CPUs at once (each pays the import then, in turn)
        self.fork = fork
        # a variant whose code valgrind cannot execute (SIGILL at an AVX-512 instruction) is
        # stored as such and the others counted, so that the lenses after this one still
        # measure; False: the error is raised (for a caller that catches it itself)
        self.note_unexecutable = note_unexecutable
        # statements switched with client requests and no cache simulation: instrumentation on
        # once per worker, collection toggled around each counted loop (no translations thrown
        # away per loop); False: instrumentation switched around each loop, so that a cache
        # simulation starts cold in every loop
        self.toggle_collection = toggle_collection

    def measure(self, benchmark: Benchmark, context: LensContext) -> None:
        runs = self._runs(benchmark, context)
        cpus = self._cpus(context)
        statement = benchmark.kind is BenchmarkKind.STATEMENT
        plan = self._plan(runs, cpus, statement=statement)
        jobs = plan.jobs(runs, tuple(range(plan.processes)))
        side_by_side = min(len(cpus), len(jobs))
        names = ", ".join(run.variant.name for run in runs)
        context.progress.update(
            benchmark=benchmark.name,
            metric=self.metric,
            detail=f"callgrind: {names}"
            + (f" ({side_by_side} at once)" if side_by_side > 1 else ""),
        )
        counting = _Counting(self, benchmark, context, cpus, statement=statement)
        started_s = time.monotonic()
        counting.run(jobs)
        if statement and plan.processes < MAX_PROCESSES:
            round_s = (time.monotonic() - started_s) / math.ceil(len(jobs) / max(1, side_by_side))
            self._one_more_process(counting, runs, plan, side_by_side, round_s, started_s)
        if counting.failed:
            raise VariantsFailed(list(counting.failed.values()))

    def _plan(
        self, runs: Sequence[_Run], cpus: Sequence[int | None], *, statement: bool
    ) -> _CountingPlan:
        """How many processes count each variant, and how they are started and switched."""
        # statements: several worker processes per variant, each its own valgrind, so that the
        # interval holds what differs between processes (a command's repeats are processes
        # already); the first process of every variant first
        processes = max(1, self.processes) if statement else 1
        # every variant's processes are switched one way, and forked or not alike: how a
        # process is started and switched shifts a statement's counts a little, which must
        # never pass for a difference of variants
        requests = False
        if statement:
            reasons = self._reasons_against_requests(runs)
            for run in runs:
                if reasons:
                    run.fixed["why_not_client_requests"] = _why_not(run.variant.name, reasons)
            requests = not reasons
        fork = requests and processes > 1 and self.fork is not False
        if self.fork is None:
            fork = fork and processes * len(runs) > len(cpus)
        if statement:
            for run in runs:
                # the processes are children of one fork server per variant (or fresh ones)
                run.fixed["forked"] = fork
        return _CountingPlan(processes, fork=fork, requests=requests)

    def _one_more_process(
        self,
        counting: _Counting,
        runs: Sequence[_Run],
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
        left_s = context.lens_budget_s - (time.monotonic() - started_s)
        what = ", ".join(f"`{name}`" for name in disagreeing)
        if extra_s > left_s:
            context.sink.add_note(
                Note(
                    Severity.INFO,
                    f"the worker processes of {what} counted at different levels; a third "
                    f"process per variant would narrow what that leaves undecided, but needs "
                    f"~{extra_s:.0f} s where the lens's share has {max(0.0, left_s):.0f} s left",
                    hint="a larger --budget counts a third process per variant",
                    benchmark=counting.benchmark.name,
                    metric=self.metric,
                )
            )
            return
        context.progress.update(
            benchmark=counting.benchmark.name,
            metric=self.metric,
            detail=f"callgrind: the processes of {', '.join(disagreeing)} disagree, "
            "one more process per variant",
        )
        counting.run(extra)

    def client_requests_possible(self, benchmark: Benchmark, context: LensContext) -> bool | str:
        """True when every variant of the experiment can switch callgrind with client requests,
        else why not: a lens that counts the variants one at a time (memory) asks first and
        passes the answer on (`client_requests`), so that all are counted alike."""
        runs = self._runs(benchmark, context)
        reasons = self._reasons_against_requests(runs)
        return _why_not(runs[0].variant.name, reasons) if reasons else True

    def _runs(self, benchmark: Benchmark, context: LensContext) -> list[_Run]:
        """Each variant's measurement, its environment fixed for determinism."""
        variants = context.experiment.variants
        envs = [variant_environment(v) for v in variants]
        target = padding_target(envs)
        runs = []
        for variant, env in zip(variants, envs, strict=True):
            fixed_env = padded_environment(env, target)
            fixed_env["PYTHONHASHSEED"] = "0"
            run = _Run(benchmark, variant, context, fixed_env)
            run.fixed.update(
                PYTHONHASHSEED="0",
                aslr="off (personality ADDR_NO_RANDOMIZE, as setarch -R)",
                environment_bytes=environment_bytes(fixed_env),
            )
            if lens_option(context.experiment.settings, "cache_sim"):
                run.fixed["cache_geometry"] = dict(CACHE_GEOMETRY)
            runs.append(run)
        return runs

    def _reasons_against_requests(self, runs: Sequence[_Run]) -> dict[str, str]:
        """Why each variant whose interpreter cannot switch callgrind with client requests
        cannot (empty: every one can): the lens's worker ops run natively, in the variant's
        interpreter and environment, and say what would stop them (the architecture, ctypes,
        an executable page). Where one cannot, every variant is switched through vgdb."""
        if self.client_requests is not True:
            why = self.client_requests or "client requests were turned off"
            return {run.variant.name: why for run in runs}
        spec = importlib.util.find_spec(WORKER_OPS)
        assert spec is not None and spec.origin is not None
        reasons = {}
        for run in runs:
            interpreter = interpreter_for(run.variant, run.context.default_python)
            # asked once per interpreter and environment: a caller counting one variant at a
            # time asks for every variant, then counts each alone with the answer
            key = (interpreter, run.variant.cwd, tuple(sorted(run.env.items())))
            if key not in self._requests_checked:
                completed = run.context.runner.run(
                    LaunchSpec((interpreter, spec.origin), env=run.env, cwd=run.variant.cwd),
                    timeout_s=_REQUESTS_CHECK_TIMEOUT_S,
                )
                self._requests_checked[key] = (
                    completed.stdout.strip() if completed.ok else completed.describe_failure()
                )
            if self._requests_checked[key]:
                reasons[run.variant.name] = self._requests_checked[key]
        return reasons

    def _cpus(self, context: LensContext) -> tuple[int | None, ...]:
        """Where the variants' valgrind processes run: one at a time on the measuring CPU, or
        side by side on every CPU no other lens measures on while this one runs."""
        if not self.parallel:
            return (context.cpu,)
        # the engine keeps perflab itself off the measuring CPU: add it back
        allowed = set(self.allowed_cpus()) | ({context.cpu} if context.cpu is not None else set())
        busy = set(self.other_runs_cpus(sorted(allowed)))
        cpus = counting_cpus(allowed, busy, context.cpu)
        if context.cpu is None:  # not pinned (--no-pin): as many at once, unpinned
            return (None,) * len(cpus)
        return cpus

    # -- statements ------------------------------------------------------------------------
    def _count_statements(
        self,
        run: _Run,
        processes: Sequence[int],
        cpu: int | None,
        workers: LiveSet[StatementWorker],
        *,
        fork: bool,
        requests: bool,
        done: Callable[[int, _StatementCounts], None],
    ) -> None:
        """The worker processes `processes` of one variant under callgrind: warm-up,
        calibration and every repeat of each, each handed to `done` as soon as it is counted
        (may run in a thread of its own: it writes nothing to the sink). Fresh processes, or
        (`fork`) children of one fork server that imported the set-up's modules under callgrind
        once."""
        with private_folder("callgrind") as directory:
            if fork:
                self._count_forked(run, processes, cpu, workers, directory, done)
                return
            for process in processes:
                done(process, self._count_fresh(run, process, cpu, workers, directory, requests))

    def _statement_launch(self, run: _Run, directory: str) -> tuple[str, ...]:
        """valgrind and its options, for a worker (or a fork server) writing into `directory`."""
        options = callgrind_options(
            out_file=os.path.join(directory, "callgrind.out.%p"),
            instr_at_start=False,
            vgdb_prefix=os.path.join(directory, "vgdb"),
            cache_sim=lens_option(run.context.experiment.settings, "cache_sim"),
            # per-instruction costs: the evidence for inlining claims (None: wherever an object
            # has debug info)
            dump_instr=self.inline_frames is not False,
            region=None,
            trace_children=False,
        )
        return ("valgrind", *options)

    def _count_fresh(
        self,
        run: _Run,
        process: int,
        cpu: int | None,
        workers: LiveSet[StatementWorker],
        directory: str,
        requests: bool,
    ) -> _StatementCounts:
        settings = run.context.experiment.settings
        worker = StatementWorker(
            run.context.runner,
            run.benchmark,
            run.variant,
            interpreter=interpreter_for(run.variant, run.context.default_python),
            cpu=cpu,
            timeout_s=_worker_timeout_s(settings),
            launch_prefix=self._statement_launch(run, directory),
            disable_aslr=True,
            extra_env=run.env,
            # top-level code, as torch's collect_callgrind runs a statement: global names
            # are looked up as a module's are, so counts compare with torch's
            scope="module",
            ops=(WorkerOps.from_module(WORKER_OPS),),
        )
        return self._count_in(run, process, worker, workers, directory, requests=requests)

    def _count_forked(
        self,
        run: _Run,
        processes: Sequence[int],
        cpu: int | None,
        workers: LiveSet[StatementWorker],
        directory: str,
        done: Callable[[int, _StatementCounts], None],
    ) -> None:
        """Each process a child of one fork server started under callgrind (instrumentation
        off): the set-up's modules are imported once per variant instead of once per process
        (an expensive import is most of what counting under callgrind costs). The children
        switch callgrind with client requests (vgdb is not used for them)."""
        ops = WorkerOps.from_module(WORKER_OPS)
        server = self._fork_server(run, cpu, directory, ops)
        try:
            for index, process in enumerate(processes):
                # fork keeps the address-space layout (no ASLR anyway) and the hash seed; the
                # padding is 0: nothing is moved. Every child is forked at once, before the
                # first counts, and waits its turn: a child forked after the one before it
                # had exited would start from a server state that child's reply had changed,
                # and count at a level of its own
                try:
                    ahead = len(processes) - 1 if index == 0 else 0
                    child = server.worker(ops=(ops,), scope="module", ahead=ahead)
                    # each child calibrates as a fresh process does: one that reused the first
                    # child's loop count would count at a level of its own
                    counts = self._count_in(run, process, child, workers, directory, requests=True)
                except BenchmarkFailedError as error:
                    # a child's stderr is the server's: valgrind's words on why it stopped
                    # the child (an instruction it cannot execute) are in the server's tail
                    error.detail = error.detail or server.stderr_tail() or None
                    raise
                done(process, counts)
        finally:
            server.kill()  # its teardown under valgrind would count for nothing
            server.close()  # its pipes and the thread draining them

    def _fork_server(
        self, run: _Run, cpu: int | None, directory: str, ops: WorkerOps
    ) -> ForkServer:
        """The variant's fork server under callgrind, the translations of its imports thrown
        away once, here, rather than by each child's first switch (worker/callgrind_ops.py:
        callgrind_discard); killed if client requests do not reach callgrind."""
        server = ForkServer(
            run.context.runner,
            run.benchmark,
            run.variant,
            default_python=run.context.default_python,
            cpu=cpu,
            timeout_s=_worker_timeout_s(run.context.experiment.settings),
            extra_env=run.env,
            disable_aslr=True,
            launch_prefix=self._statement_launch(run, directory),
        )
        try:
            run.fixed["import_under_callgrind_s"] = round(server.import_s, 2)
            discarded = server.call(ops, {"op": "callgrind_discard"})
            if not discarded.get("ok") or not discarded.get("requests"):
                raise run.error(
                    "client requests do not reach callgrind in the fork server: "
                    f"{discarded.get('why') or discarded.get('error')}",
                    hint="pass a variant's python= that runs the others' way, or report this",
                )
        except BaseException:
            server.kill()
            server.close()
            raise
        return server

    def _count_in(
        self,
        run: _Run,
        process: int,
        worker: StatementWorker,
        workers: LiveSet[StatementWorker],
        directory: str,
        *,
        requests: bool,
    ) -> _StatementCounts:
        with worker:
            workers.add(worker)
            try:
                toggle = self.toggle_collection and not lens_option(
                    run.context.experiment.settings, "cache_sim"
                )
                session = _StatementSession(run, worker, directory, requests, toggle=toggle)
                plan = session.measure(self.loops, self.repeats)
                # every dump is on disk once its request returned: the interpreter's shutdown
                # under valgrind (seconds with torch's destructors) counts for nothing
                dumps = dict(_read_dumps(directory, worker.pid))
                worker.kill()
            finally:
                workers.discard(worker)
        # the objects and their inline frames are the same in every process of a variant (the
        # same files, no ASLR): read once, in the first
        return self._digest_statement(run, worker.info, plan, dumps, objects=process == 0)

    def _store_statement(
        self, run: _Run, counts: _StatementCounts, process: int, cpu: int | None
    ) -> None:
        """One worker process's repeats: generation numbers every repeat of the variant (the
        process's repeats follow each other), block is the process."""
        run.context.sink.add_variant_info(
            run.variant.name,
            {"python_version": counts.info.python_version, "executable": counts.info.executable},
        )
        for repeat in range(len(counts.texts)):
            self._store_repeat(run, counts, process, repeat, cpu)
        self._fix_plan(run, counts.plan, process)

    def _store_repeat(
        self, run: _Run, counts: _StatementCounts, process: int, repeat: int, cpu: int | None
    ) -> None:
        texts, (stmt_totals, empty_totals) = counts.texts[repeat], counts.totals[repeat]
        # processes number their repeats apart: each may add settling repeats
        generation = process * (max(1, self.repeats) + _MAX_SETTLING_REPEATS) + repeat
        for kind in (KIND_EMPTY, KIND_STATEMENT):
            run.context.sink.add_artifact(
                Artifact(
                    run.benchmark.name,
                    run.variant.name,
                    Metric.INSTRUCTIONS,
                    kind,
                    texts[kind],
                    generation=generation,
                )
            )
        if generation == 0:
            self._add_identities(run, counts.identities)
            if counts.frames is not None:
                self._add_frames(run, counts.frames)
        for name, value in stmt_totals.items():
            run.context.sink.add_sample(
                run.sample(
                    name,
                    value - empty_totals.get(name, 0.0),
                    loops=counts.plan.loops,
                    generation=generation,
                    block=process,
                    cpu=cpu,
                    warmup=repeat < counts.plan.warmup,
                )
            )

    def _fix_plan(self, run: _Run, plan: _StatementPlan, process: int) -> None:
        """What the variant's processes were counted with, for its variant info."""
        loops = run.fixed.setdefault("loops_by_process", {})
        loops[str(process)] = plan.loops
        run.fixed["loops"] = loops.get("0", plan.loops)
        run.fixed["repeats"] = plan.repeats - plan.warmup
        run.fixed["processes"] = len(loops)
        run.fixed["switched_by"] = plan.switch
        # every process of the variant toggled collection (else: why not, in one of them)
        toggled = run.fixed.get("collection_toggled", True) and plan.toggled
        run.fixed["collection_toggled"] = toggled
        if plan.why_not_toggled is not None:
            run.fixed["why_not_collection_toggled"] = plan.why_not_toggled
        if plan.warmup:
            settling = run.fixed.setdefault("settling_repeats", {})
            settling[str(process)] = plan.warmup

    def _digest_statement(
        self,
        run: _Run,
        info: WorkerInfo,
        plan: _StatementPlan,
        dumps: Mapping[str, str],
        *,
        objects: bool = True,
    ) -> _StatementCounts:
        """Each repeat's dumps and totals, the objects that ran and their inline frames: read in
        the variant's own job, so that two variants' symbolisers run side by side too."""
        by_hint: dict[str, str] = {}
        for text in dumps.values():
            trigger = _trigger_of(text)
            if trigger is not None:
                by_hint[trigger] = text
        texts: list[dict[str, str]] = []
        totals: list[tuple[dict[str, float], dict[str, float]]] = []
        identities: dict[str, str | None] = {}
        frames: dict[str, dict[str, list[list[object]]]] | None = None
        for repeat in range(plan.repeats):
            found: dict[str, str] = {}
            for kind in (KIND_EMPTY, KIND_STATEMENT):
                hint = _hint(kind, repeat)
                dump = next((t for trig, t in by_hint.items() if trig.endswith(hint)), None)
                if dump is None:
                    raise run.error(
                        f"callgrind wrote no dump for {hint}",
                        hint="valgrind may have been killed; run with the worker's stderr",
                    )
                found[kind] = dump
            try:
                if repeat == 0 and objects:  # the objects that ran, and their inline frames
                    stmt_parts = parse_callgrind(found[KIND_STATEMENT]).parts
                    costs = combine_parts(stmt_parts)
                    identities = object_identities(fid.object for fid in costs.functions)
                    instructions = instructions_of(stmt_parts)
                    if self.inline_frames is not False and instructions is not None:
                        frames = symbolise_inline_frames(
                            run.context.runner, instructions, _analysis_cache(run)
                        )
                totals.append((_totals_of(found[KIND_STATEMENT]), _totals_of(found[KIND_EMPTY])))
            except CallgrindFormatError as error:
                raise run.error(f"cannot read callgrind's output: {error}") from error
            texts.append(found)
        return _StatementCounts(info, plan, tuple(texts), tuple(totals), identities, frames)

    def _store_frames(self, run: _Run, instructions: InstructionCosts) -> None:
        self._add_frames(
            run, symbolise_inline_frames(run.context.runner, instructions, _analysis_cache(run))
        )

    def _add_frames(self, run: _Run, frames: Mapping[str, Mapping[str, Any]]) -> None:
        run.context.sink.add_artifact(
            Artifact(
                run.benchmark.name,
                run.variant.name,
                Metric.INSTRUCTIONS,
                KIND_INLINE_FRAMES,
                json.dumps(frames, sort_keys=True),
            )
        )
        run.fixed["inline_frames"] = sorted(frames)

    def _store_identities(self, run: _Run, costs: FunctionCosts) -> None:
        self._add_identities(run, object_identities(fid.object for fid in costs.functions))

    def _add_identities(self, run: _Run, identities: Mapping[str, str | None]) -> None:
        run.context.sink.add_artifact(
            Artifact(
                run.benchmark.name,
                run.variant.name,
                Metric.INSTRUCTIONS,
                KIND_OBJECTS,
                json.dumps(identities, sort_keys=True),
            )
        )

    # -- commands --------------------------------------------------------------------------
    def _count_command(self, run: _Run, cpu: int | None) -> _CommandCounts:
        """Every repeat of the command under callgrind (may run in a thread of its own: it
        writes nothing to the sink)."""
        settings = run.context.experiment.settings
        command = run.benchmark.command_for(run.variant)
        argv = command_argv(command, shell=settings.shell)
        report = run.benchmark.reports  # a program that says where its measured region is
        through_shell = argv[0] == "/bin/sh"
        executable = _resolve(argv[0], run.variant.cwd, run.env)
        inline = self.inline_frames
        if inline is None:
            # through a shell the program is not known before it runs: keep the per-instruction
            # costs, and read debug info from whichever objects have it
            inline = through_shell or (executable is not None and has_debug_info(executable))
        repeats: list[list[tuple[str, str]]] = []
        loops: list[int] = []
        for _ in range(max(1, self.repeats)):
            with private_folder("callgrind") as directory:
                options = callgrind_options(
                    out_file=os.path.join(directory, "callgrind.out.%p"),
                    instr_at_start=True,
                    vgdb_prefix=None,
                    cache_sim=lens_option(settings, "cache_sim"),
                    dump_instr=inline,
                    region=lens_option(settings, "region"),
                    trace_children=through_shell,
                )
                report_path = os.path.join(directory, "report.json")
                if report is not None:
                    options += region_dump_options(report)
                    reporting = f"{command} {report_arguments(report, report_path)}"
                    argv = command_argv(reporting, shell=settings.shell)
                completed = run.context.runner.run(
                    LaunchSpec(
                        argv=("valgrind", *options, *argv),
                        env=run.env,
                        cwd=run.variant.cwd,
                        cpu=cpu,
                        disable_aslr=True,
                    ),
                    timeout_s=_COMMAND_TIMEOUT_S,
                )
                if not completed.ok:
                    raise run.error(
                        f"the command {completed.describe_failure()} under callgrind",
                        hint="run it without --metric instructions to see whether it fails "
                        "on its own",
                        detail=completed.stderr[-4000:],
                    )
                dumps = _read_dumps(directory)
                if not dumps:
                    # a process killed and reaped from outside reads as exited 0 (Popen's
                    # wait gets ECHILD): no profile is no count, never zero instructions
                    raise run.error(
                        "callgrind wrote no profile: the command was stopped before it ended",
                        hint="run it again; if it recurs, run it by hand under valgrind",
                        detail=completed.stderr[-4000:] or None,
                    )
                if report is not None:
                    dumps, iterations = self._region_of(run, report, dumps, report_path, completed)
                    loops.append(iterations)
                repeats.append(dumps)
        return _CommandCounts(tuple(tuple(dumps) for dumps in repeats), inline, tuple(loops))

    def _region_of(
        self,
        run: _Run,
        report: TimeReport,
        dumps: list[tuple[str, str]],
        report_path: str,
        completed: Completed,
    ) -> tuple[list[tuple[str, str]], int]:
        """The dump of the measured region the program's report counts (its last repetition's
        iterations), and how many iterations it holds."""
        try:
            with open(report_path, encoding="utf-8", errors="replace") as file:
                text = file.read()
        except FileNotFoundError:
            text = ""
        try:
            iterations = reported_iterations(report, text, run.benchmark.name, completed.stderr)
        except BenchmarkFailedError as error:
            raise run.error(error.message, hint=error.hint, detail=error.detail) from None
        region = last_region_dump(report, dumps)
        if region is None:
            raise run.error(
                "callgrind wrote no dump of the benchmark's iterations",
                hint="the program reported its time but never ended an iteration loop that "
                "callgrind saw (benchmark::State::FinishKeepRunning)",
                detail=completed.stderr[-4000:] or None,
            )
        return [region], iterations

    def _store_command(self, run: _Run, counts: _CommandCounts, cpu: int | None) -> None:
        for repeat, dumps in enumerate(counts.repeats):
            loops = counts.loops[repeat] if counts.loops else 1
            self._store_command_dumps(run, dumps, repeat, counts.inline, cpu, loops)
        run.fixed["repeats"] = len(counts.repeats)
        region = lens_option(run.context.experiment.settings, "region")
        if region is not None:
            run.fixed["region"] = region

    def _store_command_dumps(
        self,
        run: _Run,
        dumps: Sequence[tuple[str, str]],
        repeat: int,
        inline: bool,
        cpu: int | None,
        loops: int = 1,
    ) -> None:
        parts = self._stored_parts(run, dumps, repeat)
        costs = combine_parts(parts)
        totals = _derived_totals(costs)
        _check_region_ran(run, totals)
        for name, value in totals.items():
            # each repeat of a command is a process of its own
            run.context.sink.add_sample(
                run.sample(name, value, loops=loops, generation=repeat, block=repeat, cpu=cpu)
            )
        if repeat == 0:
            self._store_identities(run, costs)
        if inline and repeat == 0:
            instructions = instructions_of(parts)
            if instructions is not None:
                self._store_frames(run, instructions)

    def _stored_parts(
        self, run: _Run, dumps: Sequence[tuple[str, str]], repeat: int
    ) -> list[CallgrindPart]:
        """One repeat's callgrind files, each stored as an artifact, parsed."""
        parts: list[CallgrindPart] = []
        for _, text in dumps:
            try:
                parts.extend(parse_callgrind(text).parts)
            except CallgrindFormatError as error:
                raise run.error(f"cannot read callgrind's output: {error}") from error
            run.context.sink.add_artifact(
                Artifact(
                    run.benchmark.name,
                    run.variant.name,
                    Metric.INSTRUCTIONS,
                    KIND_COMMAND,
                    text,
                    generation=repeat,
                )
            )
        return parts


def _check_region_ran(run: _Run, totals: Mapping[str, float]) -> None:
    """A --region function that counted nothing never ran: a wrong or inlined name."""
    region = lens_option(run.context.experiment.settings, "region")
    if region is not None and totals[SAMPLE_NAME] == 0:
        raise ConfigError(
            f"the region function {region!r} never ran: callgrind counted nothing inside it",
            hint="check the name (callgrind matches the demangled name; * is a wildcard, "
            "e.g. 'ns::kernel*'); an inlined function never runs as a function of its own "
            "and yields zero: mark it __attribute__((noinline)) or name its caller",
            variant=run.variant.name,
            benchmark=run.benchmark.name,
        )


def _resolve(program: str, cwd: str | None, env: Mapping[str, str]) -> str | None:
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
        return path if os.path.isfile(path) else None
    for directory in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _hint(kind: str, repeat: int) -> str:
    return f"perflab-{kind.rsplit('.', 1)[1]}-{repeat}"


_TRIGGER = re.compile(r"^desc:\s*Trigger:\s*(.*?)\s*$", re.MULTILINE)


def _trigger_of(text: str) -> str | None:
    match = _TRIGGER.search(text)
    return match.group(1) if match else None


@dataclass(frozen=True)
class _StatementPlan:
    loops: int
    repeats: int  # counted pairs, warm-up included
    warmup: int = 0  # the first ones, counted before the allocator's state settled
    switch: str = SWITCH_CLIENT_REQUESTS  # how the counted loops were switched and dumped
    # instrumentation on once and collection toggled around each loop (client requests only)
    toggled: bool = False
    why_not_toggled: str | None = None


@dataclass(frozen=True)
class _StatementCounts:
    """What one statement worker counted, read: per repeat the dumps (kind -> text) and the
    totals (statement, empty loop); the objects that ran and their inline frames."""

    info: WorkerInfo
    plan: _StatementPlan
    texts: tuple[Mapping[str, str], ...]
    totals: tuple[tuple[dict[str, float], dict[str, float]], ...]
    identities: Mapping[str, str | None]
    frames: Mapping[str, Mapping[str, list[list[object]]]] | None

    def per_iteration(self) -> tuple[float, ...]:
        """The measured repeats' instructions per iteration (statement minus empty loop), as
        they are stored (warm-up, i.e. settling, repeats left out)."""
        return tuple(
            (stmt.get(SAMPLE_NAME, 0.0) - empty.get(SAMPLE_NAME, 0.0)) / self.plan.loops
            for repeat, (stmt, empty) in enumerate(self.totals)
            if repeat >= self.plan.warmup
        )


@dataclass(frozen=True)
class _CommandCounts:
    """Every repeat's callgrind files ((file name, text) per process) of one command."""

    repeats: tuple[tuple[tuple[str, str], ...], ...]
    inline: bool
    # iterations each repeat's dumps hold (a program that reports them); () : one run each
    loops: tuple[int, ...] = ()


_Counted = _StatementCounts | _CommandCounts


@dataclass(frozen=True)
class _Job:
    """Worker processes of a variant (a statement: one fresh process, or every process as
    children of one fork server), or all of a command's repeats (processes (0,))."""

    run: _Run
    processes: tuple[int, ...]
    fork: bool = False
    requests: bool = False  # statements: switched with client requests (else through vgdb)


@dataclass(frozen=True)
class _CountingPlan:
    """How each variant is counted: its processes, forked from one server or fresh, switched
    with client requests or through vgdb."""

    processes: int  # per variant
    fork: bool
    requests: bool

    def jobs(self, runs: Sequence[_Run], processes: tuple[int, ...]) -> list[_Job]:
        """The jobs that count `processes` of every run: forked, one job per variant; fresh,
        one per process, the first process of every variant first."""
        if self.fork:
            return [_Job(run, processes, fork=True, requests=self.requests) for run in runs]
        return [
            _Job(run, (process,), requests=self.requests) for process in processes for run in runs
        ]


class _Counting:
    """One benchmark's callgrind jobs on the CPUs. Each worker process's counts are handed over
    by its job's thread as soon as they are counted and stored from the calling thread: an
    interrupt between a fork server's children keeps the first child's counts."""

    def __init__(
        self,
        lens: CallgrindCounter,
        benchmark: Benchmark,
        context: LensContext,
        cpus: Sequence[int | None],
        *,
        statement: bool,
    ) -> None:
        self.lens = lens
        self.benchmark = benchmark
        self.context = context
        self.cpus = cpus
        self.statement = statement
        self.workers: LiveSet[StatementWorker] = LiveSet(lambda worker: worker.kill())
        self.finished: queue.SimpleQueue[tuple[_Run, int, _Counted, int | None]] = (
            queue.SimpleQueue()
        )
        # per variant, each worker process's per-iteration counts: whether they disagree
        self.counted_by_process: dict[str, list[tuple[float, ...]]] = {}
        self.unexecutable: set[str] = set()  # variants valgrind cannot execute
        # variants whose counting failed, each with its (first) error; only where another
        # variant is left to compare (one variant alone fails as the benchmark)
        self.failed: dict[str, BenchmarkFailedError] = {}
        self.tolerates_failures = len(context.experiment.variants) > 1

    def run(self, jobs: Sequence[_Job]) -> None:
        run_on_cpus(jobs, self.cpus, self.count, self.store, on_stop=self.stop, drain=self.drain)

    def count(self, job: _Job, cpu: int | None) -> tuple[int | None, str | None]:
        """(cpu, why valgrind cannot execute the variant, or None); may run in a thread."""

        def done(process: int, counts: _Counted) -> None:
            self.finished.put((job.run, process, counts, cpu))

        try:
            if self.statement:
                self.lens._count_statements(
                    job.run,
                    job.processes,
                    cpu,
                    self.workers,
                    fork=job.fork,
                    requests=job.requests,
                    done=done,
                )
            else:
                done(job.processes[0], self.lens._count_command(job.run, cpu))
        except BenchmarkFailedError as error:
            reason = cannot_execute(error)
            if reason is not None and self.lens.note_unexecutable:
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
            if isinstance(counts, _StatementCounts):
                self.lens._store_statement(run, counts, process, cpu)
                levels = self.counted_by_process.setdefault(run.variant.name, [])
                levels.append(counts.per_iteration())
            else:
                self.lens._store_command(run, counts, cpu)
            self.context.sink.add_variant_info(run.variant.name, {"instructions": run.fixed})

    def store(self, job: _Job, outcome: tuple[int | None, str | None]) -> None:
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
                        self.lens.metric,
                        KIND_UNAVAILABLE,
                        json.dumps({"valgrind": reason}),
                    )
                )
            return
        run.fixed.setdefault("cpus", []).append(cpu)
        run.fixed["cpu"] = run.fixed["cpus"][0]
        self.context.sink.add_variant_info(run.variant.name, {"instructions": run.fixed})

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


class _StatementSession:
    """Warm-up, calibration and the measured loops of one worker under callgrind."""

    def __init__(
        self,
        run: _Run,
        worker: StatementWorker,
        directory: str,
        client_requests: bool,
        *,
        toggle: bool = False,
    ) -> None:
        self.run = run
        self.worker = worker
        self.directory = directory  # callgrind's output files (of this worker: its pid)
        self.vgdb_prefix = os.path.join(directory, "vgdb")
        self.switch = SWITCH_VGDB
        # instrumentation on once and collection toggled around each loop (client requests,
        # no cache simulation), when the process runs no other thread: set in measure()
        self.toggle = toggle and client_requests
        self.toggled = False
        self.why_not_toggled: str | None = None
        if client_requests:
            # the worker switches callgrind itself (worker/callgrind_ops.py): vgdb's ptrace
            # round trips took ~0.15 s each, two per counted loop
            probe = worker.call({"op": "callgrind_probe"})
            if not probe.get("ok"):
                raise worker.failure(probe)
            if not probe.get("requests"):
                # checked natively before counting: falling back now would count this process
                # differently from the others
                raise run.error(
                    f"client requests do not reach callgrind in this worker: {probe.get('why')}",
                    hint="pass a variant's python= that runs the others' way, or report this",
                )
            self.switch = SWITCH_CLIENT_REQUESTS

    def vgdb(self, *commands: Sequence[str]) -> None:
        argv: list[str] = [
            "vgdb",
            f"--vgdb-prefix={self.vgdb_prefix}",
            f"--pid={self.worker.pid}",
            # the worker waits in read(): force vgdb's ptrace invocation after 5 ms, not 100
            "--max-invoke-ms=5",
        ]
        for attempt in range(_VGDB_ATTEMPTS):
            pending = [c for c in commands if attempt == 0 or not self._dumped(c)]
            command_argv = list(argv)
            for i, command in enumerate(pending):
                command_argv += (["-c"] if i else []) + list(command)
            completed = self.run.context.runner.run(
                LaunchSpec(tuple(command_argv)), timeout_s=_VGDB_TIMEOUT_S
            )
            if not completed.timed_out:
                break
        if not completed.ok:
            raise self.run.error(
                f"vgdb {' '.join(shlex.quote(a) for a in command_argv[3:])} "
                f"{completed.describe_failure()}",
                hint="vgdb needs ptrace on the worker (a container may forbid it: allow "
                "SYS_PTRACE or set kernel.yama.ptrace_scope=0)",
                detail=completed.stderr[-2000:],
            )

    def _dumped(self, command: Sequence[str]) -> bool:
        """A dump command whose dump is on disk (a timed-out vgdb may have done it): asking
        again would dump an empty one under the same name, which would be read last."""
        if command[0] != "dump":
            return False
        return any(
            (_trigger_of(text) or "").endswith(command[1])
            for _, text in _read_dumps(self.directory, self.worker.pid)
        )

    def counted(self, loops: int, *, empty: bool, hint: str) -> None:
        if self.switch == SWITCH_CLIENT_REQUESTS:
            self._requested(loops, empty=empty, hint=hint)
            return
        self.worker.sample(
            loops,
            empty=empty,
            on_region_start=lambda: self.vgdb(("instrumentation", "on")),
            on_region_end=lambda: self.vgdb(("instrumentation", "off"), ("dump", hint)),
            timed=False,
        )

    def _requested(self, loops: int, *, empty: bool, hint: str, dry: bool = False) -> None:
        """A counted loop switched and dumped by the worker itself (worker/callgrind_ops.py)."""
        request = {"op": "callgrind_sample", "loops": loops, "empty": empty, "dump": hint}
        request.update(dry=dry, collect=self.toggled)
        reply = self.worker.call(request)
        if not reply.get("ok"):
            raise self.worker.failure(reply)

    def warm_up(self) -> None:
        # the same handshake as counted samples, with nothing switched: the worker's own
        # code is specialised by CPython before anything is counted
        if self.switch == SWITCH_CLIENT_REQUESTS:
            for i in range(_WARMUP_SAMPLES):
                self._requested(1, empty=i % 2 == 0, hint="warm-up", dry=True)
            return
        for i in range(_WARMUP_SAMPLES):
            self.worker.sample(
                1,
                empty=i % 2 == 0,
                on_region_start=lambda: None,
                on_region_end=lambda: None,
                timed=False,
            )

    def measure(self, loops: int | None, repeats: int) -> _StatementPlan:
        self.warm_up()
        if self.toggle:
            self._collect_only()
        if loops is None:
            loops = choose_loops(self._calibrate("perflab-calibrate", _CALIBRATION_LOOPS))
            refine = refining_loops(loops)
            if refine is not None:
                loops = choose_loops(self._calibrate("perflab-calibrate-again", refine))
        repeats = max(1, repeats)
        counts: list[float] = []
        while True:
            repeat = len(counts)
            empty, stmt = _hint(KIND_EMPTY, repeat), _hint(KIND_STATEMENT, repeat)
            self.counted(loops, empty=True, hint=empty)
            self.counted(loops, empty=False, hint=stmt)
            counts.append(self._per_iteration(empty, stmt, loops))
            if len(counts) >= repeats and (
                len(counts) >= repeats + _MAX_SETTLING_REPEATS or settled(counts[-2:])
            ):
                break
        if self.toggled:
            self._no_thread_started()
        # repeats before the allocator settled are warm-up (stored, not compared)
        warmup = len(counts) - repeats if settled(counts[-2:]) else 0
        return _StatementPlan(
            loops, len(counts), warmup, self.switch, self.toggled, self.why_not_toggled
        )

    def _collect_only(self) -> None:
        """Instrumentation on for the rest of the worker, collection toggled around each loop
        (worker/callgrind_ops.py: callgrind_collect_only), unless the worker runs other threads."""
        reply = self.worker.call({"op": "callgrind_collect_only"})
        if not reply.get("ok"):
            raise self.worker.failure(reply)
        self.toggled = bool(reply.get("toggled"))
        self.why_not_toggled = None if self.toggled else str(reply.get("why"))

    def _no_thread_started(self) -> None:
        """Collection is the toggling thread's: a thread the statement started after the
        worker chose to toggle was counted nowhere."""
        reply = self.worker.call({"op": "callgrind_threads"})
        if not reply.get("ok"):
            raise self.worker.failure(reply)
        if reply.get("threads") != 1 or reply.get("started"):
            raise self.run.error(
                f"the statement started threads while it was counted ({reply.get('threads')} "
                f"threads at the end, {reply.get('started') or 0} Python threads started): "
                "collection was toggled in the worker's thread only, so their work was not "
                "counted",
                hint="start the statement's threads in the setup, or report this",
            )

    def _calibrate(self, name: str, loops: int) -> float:
        """Instructions per iteration from a pair of `loops`-long loops."""
        self.counted(loops, empty=True, hint=f"{name}-empty")
        self.counted(loops, empty=False, hint=f"{name}-stmt")
        return self._per_iteration(f"{name}-empty", f"{name}-stmt", loops)

    def _per_iteration(self, empty: str, stmt: str, loops: int) -> float:
        """The statement's instructions per iteration from a counted pair's dumps."""
        # the dumps are already on disk: callgrind writes them before the request (or vgdb)
        # returns
        totals: dict[str, float] = {}
        for _, text in _read_dumps(self.directory, self.worker.pid):
            trigger = _trigger_of(text) or ""
            for kind, hint in (("empty", empty), ("stmt", stmt)):
                if trigger.endswith(hint):
                    totals[kind] = _totals_of(text)[SAMPLE_NAME]
        return (totals.get("stmt", 0.0) - totals.get("empty", 0.0)) / loops


def _analysis_cache(run: _Run) -> AnalysisCache:
    return AnalysisCache.default(
        enabled=lens_option(run.context.experiment.settings, "analysis_cache")
    )


def symbolise_inline_frames(
    runner: ProcessRunner, instructions: InstructionCosts, cache: AnalysisCache | None = None
) -> dict[str, dict[str, list[list[object]]]]:
    """Inline frames (innermost first) of every executed address of every object with debug
    info, one symboliser process per object. JSON-ready: object -> hex address -> frames.
    Kept in the analysis `cache` under the object's identity and the addresses (the same
    statement in the same build asks the same again: ~0.2 s of each torch.add variant)."""
    out: dict[str, dict[str, list[list[object]]]] = {}
    for obj, addresses in instructions.addresses_by_object().items():
        frames = symbolise(runner, obj, addresses, cache=cache)
        if frames is not None:
            out[obj] = frames_to_json(frames)
    return out


def object_identities(paths: Iterable[str]) -> dict[str, str | None]:
    """Build-id (or content hash) of every object that ran, taken when it ran: an object
    rebuilt before the analysis must not pass for the one measured."""
    return {path: object_identity(path) for path in sorted(set(paths)) if path.startswith("/")}
