"""The processes that count under callgrind. For a statement, its worker processes (fresh, or the
children of fork servers that imported the set-up under callgrind, two per variant where one
starts quickly), each switched by a `switching.CallgrindWorkerSession` and its dumps read in the
process's own job; for a command, its runs under valgrind (whole, or the measured region a
program reports). Nothing here writes to the sink: the jobs may run in threads, and `store`
stores what they hand back."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from perflab.budget.costs import FORK_SERVERS, fork_servers_for
from perflab.machine.parallel import LiveSet
from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_STATEMENT, SAMPLE_NAME
from perflab.measure.callgrind.count_options import CountOptions, CountRun, worker_timeout_s
from perflab.measure.callgrind.dumps import (
    analysis_cache,
    dump_hint,
    instructions_of,
    object_identities,
    read_dumps,
    symbolise_inline_frames,
    totals_of,
    trigger_of,
)
from perflab.measure.callgrind.switching import CallgrindWorkerSession, StatementPlan
from perflab.measure.commands import command_argv
from perflab.measure.fork_server import ForkServerClient
from perflab.measure.reported_time import (
    last_region_dump,
    region_dump_options,
    report_arguments,
    reported_iterations,
)
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerInfo,
    WorkerLaunch,
    WorkerOps,
    interpreter_for,
)
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import TimeReport
from perflab.records.model import Benchmark, Variant
from perflab.tool_drivers.debuginfo import has_debug_info
from perflab.tool_drivers.valgrind import CallgrindOptions
from perflab.tool_output.callgrind import combine_parts
from perflab.tool_output.callgrind_format import CallgrindFormatError, parse_callgrind

WORKER_OPS = "perflab.worker.callgrind_ops"  # the source sent to the workers, run there
# a whole command under callgrind (20-100x slower than native); only a hung one reaches this
_COMMAND_TIMEOUT_S = 3600.0


# a worker's counted loops as measured, before its dumps are read: its info, how its loops
# were run, and its dumps by file name
Measured = tuple[WorkerInfo, StatementPlan, dict[str, str]]


@dataclass(frozen=True)
class CountJob:
    """Worker processes of a variant (a statement: one fresh process, or every process as
    children of the variant's fork servers), or all of a command's repeats (processes (0,))."""

    run: CountRun
    processes: tuple[int, ...]
    fork: bool = False
    requests: bool = False  # statements: switched with client requests (else through vgdb)
    # what a statement's counting starts and reads (the real ones; tests give fakes)
    parts: CountingParts = field(default_factory=lambda: CountingParts())


def count_statements(
    options: CountOptions,
    job: CountJob,
    cpu: int | None,
    workers: LiveSet[StatementWorker],
    done: Callable[[int, StatementCounts], None],
) -> None:
    """The worker processes of `job` under callgrind: warm-up, calibration and every repeat of
    each, each handed to `done` as soon as it is counted (may run in a thread of its own: it
    writes nothing to the sink). Fresh processes, or (`job.fork`) children of fork servers
    that imported the set-up's modules under callgrind (`_StatementWorkers.forked`).
    `workers`: those alive, for a stop to kill."""
    with private_folder("callgrind") as directory:
        counting = _StatementWorkers(options, job.run, cpu, workers, directory, job.parts)
        if job.fork:
            counting.forked(job.processes, done)
            return
        job.run.context.native_fill_done()
        for process in job.processes:
            done(process, counting.fresh(process, requests=job.requests))


@dataclass(frozen=True)
class _StatementWorkers:
    """One variant's statement workers on one CPU, under valgrind writing into `directory`."""

    options: CountOptions
    run: CountRun
    cpu: int | None
    workers: LiveSet[StatementWorker]
    directory: str
    parts: CountingParts

    def launch(self) -> tuple[str, ...]:
        """valgrind and its options, for a worker (or a fork server)."""
        return CallgrindOptions(
            out_file=os.path.join(self.directory, "callgrind.out.%p"),
            instr_at_start=False,
            vgdb_prefix=os.path.join(self.directory, "vgdb"),
            cache_sim=self.options.cache_sim,
            # per-instruction costs: the evidence for inlining claims (None: wherever an
            # object has debug info)
            dump_instr=self.options.inline_frames is not False,
        ).command()

    def fresh(self, process: int, *, requests: bool) -> StatementCounts:
        run = self.run
        worker = StatementWorker.start(
            run.context.runner,
            run.benchmark,
            run.variant,
            WorkerLaunch(
                interpreter_for(run.variant, run.context.default_python),
                cpu=self.cpu,
                timeout_s=worker_timeout_s(run.context.experiment.settings),
                prefix=self.launch(),
                disable_aslr=True,
                extra_env=run.env,
            ),
            # top-level code, as torch's collect_callgrind runs a statement: global names
            # are looked up as a module's are, so counts compare with torch's
            scope="module",
            ops=(WorkerOps.from_module(WORKER_OPS),),
        )
        return self.count_in(process, worker, requests=requests)

    def forked(
        self, processes: Sequence[int], done: Callable[[int, StatementCounts], None]
    ) -> None:
        """Each process a child of a fork server started under callgrind (instrumentation
        off): the set-up's modules are imported once per server instead of once per process
        (an expensive import is most of what counting under callgrind costs). The processes
        are split among two servers where the first started quickly (`server_groups`,
        `fork_servers_for`), one alive at a time. The children switch callgrind with client
        requests (vgdb is not used for them)."""
        ops = WorkerOps.from_module(WORKER_OPS)
        server = self.fork_server(ops)
        # a server whose imports left threads running (OpenBLAS's where it is not pinned to
        # one CPU, --no-pin) has a heap their timing shaped: one server per process then. A
        # second server only where the first's start was cheap (budget/costs.py's rule: the
        # cause of differing heaps found is fixed, and a second `import torch` costs ~9 s)
        groups = server_groups(
            processes,
            own_servers=server.threads > 1,
            servers=fork_servers_for(
                server.startup_s if server.start_cpu_s is None else server.start_cpu_s
            ),
        )
        counted_with = self.run.counted_with
        counted_with.server_threads = server.threads
        counted_with.server_per_process = all(len(group) == 1 for group in groups)
        counted_with.servers = (counted_with.servers or 0) + len(groups)
        # the server imported while the variants ran natively; its children run the set-up
        self.run.context.native_fill_done()
        # a child's dumps are read beside the next child's counting (forked ahead: unchanged)
        reading = ThreadPoolExecutor(1, thread_name_prefix="perflab-dumps")
        read: list[Future[None]] = []
        try:
            for index, group in enumerate(groups):
                if index > 0:
                    server.kill()
                    server.close()
                    server = self.fork_server(ops)
                read += self.children_of(server, ops, group, (reading, done))
        finally:
            server.kill()  # its teardown under valgrind would count for nothing
            server.close()  # its pipes and the thread draining them
            # what was counted is handed over, also when a later child failed
            reading.shutdown(wait=True)
        for future in read:
            future.result()  # a dump that could not be read fails the variant

    def hand_over(
        self, process: int, measured: Measured, done: Callable[[int, StatementCounts], None]
    ) -> None:
        """A child's dumps read, and its counts handed to `done`."""
        done(process, self.digested(process, measured))

    def children_of(
        self,
        server: ForkServerClient,
        ops: WorkerOps,
        processes: Sequence[int],
        handing: tuple[ThreadPoolExecutor, Callable[[int, StatementCounts], None]],
    ) -> list[Future[None]]:
        """`processes`, each a child of `server`, counted in turn; each one's dumps read in
        `handing`'s thread (beside the next child's counting) and handed to its callback."""
        reading, done = handing
        read: list[Future[None]] = []
        for index, process in enumerate(processes):
            # fork keeps the address-space layout (no ASLR anyway) and the hash seed; the
            # padding is 0: nothing is moved. Every child is forked at once, before the first
            # counts, and waits its turn: a child forked after the one before it had exited
            # would start from a server state that child's reply had changed, and count at a
            # level of its own
            try:
                ahead = len(processes) - 1 if index == 0 else 0
                child = server.worker(ops=(ops,), scope="module", ahead=ahead)
                # each child calibrates as a fresh process does: one that reused the first
                # child's loop count would count at a level of its own
                measured = self.measured_in(child, requests=True)
            except BenchmarkFailedError as error:
                # a child's stderr is the server's: valgrind's words on why it stopped the
                # child (an instruction it cannot execute) are in the server's tail
                error.detail = error.detail or server.stderr_tail() or None
                raise
            read.append(reading.submit(self.hand_over, process, measured, done))
        return read

    def fork_server(self, ops: WorkerOps) -> ForkServerClient:
        """One of the variant's fork servers under callgrind, the translations of its imports thrown
        away once, here, rather than by each child's first switch (worker/callgrind_ops.py:
        callgrind_discard); killed if client requests do not reach callgrind."""
        run = self.run
        server = self.parts.fork_server(
            run.context.runner,
            run.benchmark,
            run.variant,
            WorkerLaunch(
                interpreter_for(run.variant, run.context.default_python),
                cpu=self.cpu,
                timeout_s=worker_timeout_s(run.context.experiment.settings),
                extra_env=run.env,
                disable_aslr=True,
                prefix=self.launch(),
            ),
        )
        try:
            run.counted_with.import_under_callgrind_s = round(server.import_s, 2)
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

    def count_in(self, process: int, worker: StatementWorker, *, requests: bool) -> StatementCounts:
        return self.digested(process, self.measured_in(worker, requests=requests))

    def digested(self, process: int, measured: Measured) -> StatementCounts:
        # the objects and their inline frames are the same in every process of a variant (the
        # same files, no ASLR): read once, in the first
        info, plan, dumps = measured
        return self.parts.digest(self.options, self.run, info, plan, dumps, objects=process == 0)

    def measured_in(self, worker: StatementWorker, *, requests: bool) -> Measured:
        """The worker's counted loops under callgrind, its dumps as callgrind wrote them."""
        run, options = self.run, self.options
        with worker:
            self.workers.add(worker)
            try:
                toggle = options.toggle_collection and not options.cache_sim
                session = self.parts.session(run, worker, self.directory, requests, toggle=toggle)
                plan = session.measure(options.loops, options.repeats)
                # every dump is on disk once its request returned: the interpreter's shutdown
                # under valgrind (seconds with torch's destructors) counts for nothing
                dumps = dict(self.parts.read_dumps(self.directory, worker.pid))
                worker.kill()
            finally:
                self.workers.discard(worker)
        return worker.info, plan, dumps


def digest_statement(
    options: CountOptions,
    run: CountRun,
    info: WorkerInfo,
    plan: StatementPlan,
    dumps: Mapping[str, str],
    *,
    objects: bool = True,
) -> StatementCounts:
    """Each repeat's dumps and totals, the objects that ran and their inline frames: read in
    the variant's own job, so that two variants' symbolisers run side by side too."""
    by_hint: dict[str, str] = {}
    for text in dumps.values():
        trigger = trigger_of(text)
        if trigger is not None:
            by_hint[trigger] = text
    texts: list[dict[str, str]] = []
    totals: list[tuple[dict[str, float], dict[str, float]]] = []
    identities: dict[str, str | None] = {}
    frames: dict[str, dict[str, list[list[object]]]] | None = None
    for repeat in range(plan.repeats):
        found: dict[str, str] = {}
        for kind in (KIND_EMPTY, KIND_STATEMENT):
            hint = dump_hint(kind, repeat)
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
                if options.inline_frames is not False and instructions is not None:
                    frames = symbolise_inline_frames(
                        run.context.runner, instructions, analysis_cache(options)
                    )
            totals.append((totals_of(found[KIND_STATEMENT]), totals_of(found[KIND_EMPTY])))
        except CallgrindFormatError as error:
            raise run.error(f"cannot read callgrind's output: {error}") from error
        texts.append(found)
    return StatementCounts(info, plan, tuple(texts), tuple(totals), identities, frames)


class CountsLoops(Protocol):
    """A worker's loops counted under callgrind (`switching.CallgrindWorkerSession`)."""

    def measure(self, loops: int | None, repeats: int) -> StatementPlan: ...


class StartsSession(Protocol):
    """How a worker's callgrind session is started (`CallgrindWorkerSession`'s constructor)."""

    def __call__(
        self,
        run: CountRun,
        worker: StatementWorker,
        directory: str,
        client_requests: bool,
        *,
        toggle: bool = False,
    ) -> CountsLoops: ...


class DigestsStatement(Protocol):
    """How a worker's dumps are read into its counts (`digest_statement`)."""

    def __call__(
        self,
        options: CountOptions,
        run: CountRun,
        info: WorkerInfo,
        plan: StatementPlan,
        dumps: Mapping[str, str],
        *,
        objects: bool = True,
    ) -> StatementCounts: ...


@dataclass(frozen=True)
class CountingParts:
    """What counting a statement's workers starts and reads, beside the workers themselves: the
    fork servers, each worker's callgrind session, its dump files and their digest. A value
    with the real ones, so that a test can count fork servers' children (and see the reading of
    one beside the next one's counting) with fakes, no valgrind started."""

    fork_server: Callable[[ProcessRunner, Benchmark, Variant, WorkerLaunch], ForkServerClient] = (
        ForkServerClient
    )
    session: StartsSession = CallgrindWorkerSession
    read_dumps: Callable[[str, int], list[tuple[str, str]]] = read_dumps
    digest: DigestsStatement = digest_statement


def count_command(options: CountOptions, run: CountRun, cpu: int | None) -> CommandCounts:
    """Every repeat of the command under callgrind (may run in a thread of its own: it
    writes nothing to the sink)."""
    command = run.benchmark.command_for(run.variant)
    argv = command_argv(command, shell=run.context.experiment.settings.shell)
    through_shell = argv[0] == "/bin/sh"
    inline = options.inline_frames
    if inline is None:
        # through a shell the program is not known before it runs: keep the per-instruction
        # costs, and read debug info from whichever objects have it
        executable = resolve_program(argv[0], run.variant.cwd, run.env)
        inline = through_shell or (executable is not None and has_debug_info(executable))
    repeats: list[list[tuple[str, str]]] = []
    loops: list[int] = []
    for _ in range(max(1, options.repeats)):
        dumps, iterations = _command_once(options, run, cpu, dump_instr=inline, shell=through_shell)
        if iterations is not None:
            loops.append(iterations)
        repeats.append(dumps)
    return CommandCounts(tuple(tuple(dumps) for dumps in repeats), inline, tuple(loops))


def _command_once(
    options: CountOptions, run: CountRun, cpu: int | None, *, dump_instr: bool, shell: bool
) -> tuple[list[tuple[str, str]], int | None]:
    """One run of the command under callgrind: its dumps, and (a program that reports its
    measured region) the dump of that region alone with the iterations it holds."""
    report = run.benchmark.reports  # a program that says where its measured region is
    with private_folder("callgrind") as directory:
        report_path = os.path.join(directory, "report.json")
        argv = command_under_callgrind(
            options, run, directory, report_path, dump_instr=dump_instr, shell=shell
        )
        completed = run.context.runner.run(
            LaunchSpec(argv=argv, env=run.env, cwd=run.variant.cwd, cpu=cpu, disable_aslr=True),
            timeout_s=_COMMAND_TIMEOUT_S,
        )
        dumps = _dumps_of(run, completed, directory)
        if report is None:
            return dumps, None
        return region_dump(run, report, dumps, report_path, completed)


def command_under_callgrind(
    options: CountOptions,
    run: CountRun,
    directory: str,
    report_path: str,
    *,
    dump_instr: bool,
    shell: bool,
) -> tuple[str, ...]:
    """valgrind, its options and the command; a program that reports its measured region is
    asked to write its report to `report_path`."""
    settings = run.context.experiment.settings
    command = run.benchmark.command_for(run.variant)
    argv = command_argv(command, shell=settings.shell)
    report = run.benchmark.reports
    valgrind = CallgrindOptions(
        out_file=os.path.join(directory, "callgrind.out.%p"),
        instr_at_start=True,
        vgdb_prefix=None,
        cache_sim=options.cache_sim,
        dump_instr=dump_instr,
        region=options.region,
        trace_children=shell,
    )
    if report is None:
        return valgrind.command(*argv)
    reporting = f"{command} {report_arguments(report, report_path)}"
    argv = command_argv(reporting, shell=settings.shell)
    return valgrind.command(*argv, more=region_dump_options(report))


def _dumps_of(run: CountRun, completed: Completed, directory: str) -> list[tuple[str, str]]:
    """callgrind's dumps of a run that ended well; a failed run, or one that left no dump, is
    the benchmark's failure."""
    if not completed.ok:
        raise run.error(
            f"the command {completed.describe_failure()} under callgrind",
            hint="run it without --metric instructions to see whether it fails on its own",
            detail=completed.stderr[-4000:],
        )
    dumps = read_dumps(directory)
    if not dumps:
        # a process killed and reaped from outside reads as exited 0 (Popen's wait gets
        # ECHILD): no profile is no count, never zero instructions
        raise run.error(
            "callgrind wrote no profile: the command was stopped before it ended",
            hint="run it again; if it recurs, run it by hand under valgrind",
            detail=completed.stderr[-4000:] or None,
        )
    return dumps


def region_dump(
    run: CountRun,
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


def resolve_program(program: str, cwd: str | None, env: Mapping[str, str]) -> str | None:
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd or os.getcwd(), program)
        return path if os.path.isfile(path) else None
    for directory in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def server_groups(
    processes: Sequence[int], *, own_servers: bool, servers: int = FORK_SERVERS
) -> tuple[tuple[int, ...], ...]:
    """The processes each fork server of a variant forks, in order: one per server
    (`own_servers`), else split in contiguous groups among `servers` servers (fewer only where
    there are fewer processes). Children of one server inherit its heap and agree with each
    other, while another server of the same code can settle 1.6% apart in glibc's malloc
    (PyWavelets's asv `time_idwt`, bench/results/asv_aa_2026-11-30.md): processes of two servers
    put such a difference into the processes' spread instead of between the variants."""
    if own_servers:
        return tuple((process,) for process in processes)
    count = min(max(1, servers), len(processes))
    size, extra = divmod(len(processes), max(1, count))
    groups: list[tuple[int, ...]] = []
    start = 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        groups.append(tuple(processes[start:end]))
        start = end
    return tuple(groups)


@dataclass(frozen=True)
class StatementCounts:
    """What one statement worker counted, read: per repeat the dumps (kind -> text) and the
    totals (statement, empty loop); the objects that ran and their inline frames."""

    info: WorkerInfo
    plan: StatementPlan
    texts: tuple[Mapping[str, str], ...]
    totals: tuple[tuple[dict[str, float], dict[str, float]], ...]
    identities: Mapping[str, str | None]
    frames: Mapping[str, Mapping[str, list[list[object]]]] | None

    def per_iteration_by_repeat(self) -> tuple[float, ...]:
        """The measured repeats' instructions per iteration (statement minus empty loop), as
        they are stored (warm-up, i.e. settling, repeats left out)."""
        return tuple(
            (stmt.get(SAMPLE_NAME, 0.0) - empty.get(SAMPLE_NAME, 0.0)) / self.plan.loops
            for repeat, (stmt, empty) in enumerate(self.totals)
            if repeat >= self.plan.warmup
        )


@dataclass(frozen=True)
class CommandCounts:
    """Every repeat's callgrind files ((file name, text) per process) of one command."""

    repeats: tuple[tuple[tuple[str, str], ...], ...]
    inline: bool
    # iterations each repeat's dumps hold (a program that reports them); () : one run each
    loops: tuple[int, ...] = ()


Counted = StatementCounts | CommandCounts
