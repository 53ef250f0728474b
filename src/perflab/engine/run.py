"""plan -> run -> store: runs an experiment, writing every measurement as it arrives. Each
benchmark is planned (benchmark_plan.py), its variants prepared and their outputs checked, then
measured lens by lens within its budget (ledger.py)."""

from __future__ import annotations

import contextlib
import random
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from perflab.analyse.run import analyse_run
from perflab.budget.costs import CostProbe, LensCost
from perflab.budget.plan import BudgetPlan
from perflab.engine.benchmark_plan import (
    BenchmarkPlanner,
    by_its_lenses,
    plans_before_run,
    show_plan,
)
from perflab.engine.cpu import (
    OrchestratorOffCpu,
    claim_measurement_cpu,
    kept_off_cpu,
    needs_quiet_cpu,
    note_cpu_claim,
    note_joiners,
    note_turns,
)
from perflab.engine.failures import (
    RunFailures,
    comparable,
    describe,
    failed_variants,
    without_failed,
)
from perflab.engine.ledger import BudgetLedger, run_order
from perflab.engine.native_fill import InBackground
from perflab.engine.prepare import output_check
from perflab.engine.prepare.caches import (
    IsolatedCaches,
    NativeFill,
    NativeRuns,
    NativeRunsAhead,
    fill_natively,
)
from perflab.engine.prepare.git_prepare import VariantPreparer, measures_working_tree
from perflab.engine.prepare.recent_probes import RecentProbes
from perflab.engine.run_notes import (
    native_fill_note,
    note_forked,
    note_isolated_caches,
    note_leftovers,
    unprobed_setup_note,
)
from perflab.engine.services import RunServices
from perflab.lenses.registry import descriptor_for, lens_for
from perflab.machine import cpu_lock
from perflab.machine.host import machine_facts
from perflab.machine.proc import (
    ProcessRunner,
    counting_stopped,
    stop_all_contained,
)
from perflab.measure.fork_server import ForkServers
from perflab.measure.lens import (
    Lens,
    LensContext,
    PlanReporter,
)
from perflab.measure.worker_client import WorkerLaunch, check_interpreter, check_variant_paths
from perflab.plan.designs import budget_plan
from perflab.records.errors import (
    BenchmarkFailedError,
    PerflabError,
    RunInterrupted,
    StoreError,
    VariantsFailed,
)
from perflab.records.kinds import BenchmarkKind, RunStatus
from perflab.records.model import Benchmark, Experiment, Note, Severity, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import VariantInfo
from perflab.records.version import __version__
from perflab.store import RunRecorder, RunSink, RunStore, SqliteStore


def run_experiment(
    experiment: Experiment,
    *,
    store: RunStore | None = None,
    services: RunServices | None = None,
) -> RunResult:
    """Measure every benchmark with every lens and variant; return the analysed run.

    `services` is what the run reaches the outside through (processes, progress, the clock
    budgets are spent by, the process's start; None: the real ones): tests give fakes, and
    spend no real time.

    A failing benchmark does not stop the others: its error is recorded (a note, and
    `RunResult.failures`), and the run is marked incomplete; `result.raise_on_failure()` turns
    that into an exception. So does a variant that cannot be prepared (a git ref that does not
    exist, a change that does not apply, a failing build): the other variants are measured.
    Bad configuration raises at once, before the run is stored. A budget that cannot hold a
    lens's minimum measurement is a target missed, not an error: every lens measures its minimum
    and a warning note says what took longer and why; with `strict_budget` such a budget raises
    `BudgetError` before anything is measured.
    Ctrl-C marks the run incomplete and propagates. Either way what was measured stays in the
    store.

    The measuring CPU is locked against other perflab runs on the machine while it runs (a run
    that finds every CPU taken waits up to 30 s, then shares one and says so in a note; the wait
    is reported as waiting and not charged to the budget)."""
    store = store or SqliteStore.in_memory()
    measured = measure_experiment(experiment, store=store, services=services)
    result = analyse_run(store.load_run(measured.run_id))
    return replace(result, failures=measured.failures)


@dataclass(frozen=True)
class MeasuredRun:
    """A run as measured into its store, before any analysis: which run, how it ended, and the
    benchmarks that failed while measuring."""

    run_id: int
    status: RunStatus
    failures: tuple[BenchmarkFailedError, ...]


def measure_experiment(
    experiment: Experiment, *, store: RunRecorder, services: RunServices | None = None
) -> MeasuredRun:
    """Measure and store the run as run_experiment does, without analysing it: for a caller
    that analyses elsewhere (a cluster's cell, analysed with the whole run by its driver)."""
    services = services or RunServices()
    claim = claim_measurement_cpu(experiment, services.progress)
    try:
        return _run_experiment(experiment, claim, store, services)
    finally:
        if claim is not None:
            claim.release()


def _run_experiment(
    experiment: Experiment,
    claim: cpu_lock.CpuClaim | None,
    store: RunRecorder,
    services: RunServices,
) -> MeasuredRun:
    check_paths(experiment, services.runner)
    with contextlib.ExitStack() as stack:
        run = _open_run(stack, experiment, claim, store, services)
        failures = RunFailures(run.writer)
        for benchmark in experiment.benchmarks:
            _run_benchmark(run, benchmark, failures)
            if run.ahead is not None:  # served the first benchmark, or it failed before them
                run.ahead.stop()
    writer = run.writer
    note_joiners(writer, claim, needs_quiet_cpu(experiment))
    status = RunStatus.INCOMPLETE if failures.errors else RunStatus.COMPLETE
    writer.finish(status, error=failures.summary())
    return MeasuredRun(writer.run_id, status, tuple(failures.errors))


def _open_run(
    stack: contextlib.ExitStack,
    experiment: Experiment,
    claim: cpu_lock.CpuClaim | None,
    store: RunRecorder,
    services: RunServices,
) -> _Run:
    """What the run's benchmarks are measured with, set up in the order they depend on one
    another; `stack` undoes each when the run ends, the last set up first."""
    runner = services.runner
    cpu = None if claim is None else claim.cpu
    lenses = tuple(lens_for(metric) for metric in experiment.settings.metrics)
    preflight_notes = [n for lens in lenses for n in lens.preflight(experiment, runner)]
    planner = _planner(services, cpu)
    caches, ahead, plans = _planned(stack, experiment, lenses, claim, services, planner)
    machine = machine_facts(runner, cpu=cpu)
    writer = store.begin_run(experiment, machine, __version__)
    preparer = _preparer(stack, experiment, services)
    stack.enter_context(OrchestratorOffCpu(kept_off_cpu(experiment, cpu)))
    # first to exit: what the run started is stopped before its caches are removed
    stack.enter_context(_incomplete_on_error(writer))
    _note_run_setup(writer, experiment, preflight_notes, claim, caches)
    turns = _cpu_turns(stack, experiment, writer, cpu)
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=writer,
        progress=services.progress,
        cpu=cpu,
        default_python=planner.default_python,
        turns=turns,
        clock_ns=_in_ns(services.clock),
    )
    return _Run(
        experiment=experiment,
        lenses=lenses,
        context=context,
        writer=writer,
        preparer=preparer,
        caches=caches,
        planner=planner,
        plans=plans,
        ahead=ahead,
        cpu_flags=frozenset(machine.cpu_flags or ()),
        clock=services.clock,
    )


def _planned(
    stack: contextlib.ExitStack,
    experiment: Experiment,
    lenses: tuple[Lens, ...],
    claim: cpu_lock.CpuClaim | None,
    services: RunServices,
    planner: BenchmarkPlanner,
) -> tuple[IsolatedCaches, NativeRunsAhead | None, dict[str, BudgetPlan]]:
    """The run's caches, the native runs started beside the probes, and the plans made before
    the run is stored."""
    waited_s = 0.0 if claim is None else claim.waited_s
    # the probes run in the caches the measurements will use (removed when the run ends)
    caches = stack.enter_context(IsolatedCaches(enabled=not experiment.settings.share_caches))
    ahead = _native_runs_ahead(stack, experiment, lenses, caches, planner)
    plans = plans_before_run(
        experiment, planner, caches, services.started_at_s, waited_s, services.clock, ahead
    )
    return caches, ahead, plans


def _native_runs_ahead(
    stack: contextlib.ExitStack,
    experiment: Experiment,
    lenses: tuple[Lens, ...],
    caches: IsolatedCaches,
    planner: BenchmarkPlanner,
) -> NativeRunsAhead | None:
    """Where the statements run natively before valgrind (`_compile_natively_first`), the
    runs that start beside each probe; stopped when the run ends, before its caches go."""
    if not caches.enabled:
        return None
    if not any(descriptor_for(lens.metric).planning.runs_valgrind for lens in lenses):
        return None
    ahead = NativeRunsAhead(
        planner.runner, planner.default_python, experiment.settings.sample_timeout_s
    )
    stack.callback(ahead.stop)
    return ahead


def _planner(services: RunServices, cpu: int | None) -> BenchmarkPlanner:
    """The run's planner: the machine's recent probes joined, the speeds `services` keep reused,
    on its clock."""
    return BenchmarkPlanner(
        services.runner,
        services.default_python or sys.executable,
        cpu,
        recent=RecentProbes(),
        speeds=services.speeds,
        clock=services.clock,
    )


def _cpu_turns(
    stack: contextlib.ExitStack, experiment: Experiment, writer: RunSink, cpu: int | None
) -> cpu_lock.CpuTurns | None:
    """Turns on the measuring CPU with other perflab runs on it (none when unpinned); closed
    when the run ends, and what the turns cost noted."""
    if cpu is None:
        return None
    turns = cpu_lock.CpuTurns(cpu)
    stack.callback(turns.close)
    stack.callback(note_turns, writer, turns, needs_quiet_cpu(experiment))
    return turns


def _preparer(
    stack: contextlib.ExitStack, experiment: Experiment, services: RunServices
) -> VariantPreparer:
    """What builds the variants (a git ref's checkout and build), closed when the run ends."""
    preparer = VariantPreparer(
        services.runner,
        repository=experiment.repository,
        cache_dir=services.cache_dir,
        build_timeout_s=experiment.settings.build_timeout_s,
        working_tree_measured=measures_working_tree(experiment.variants),
    )
    stack.callback(preparer.close)
    return preparer


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What every benchmark of a run is measured with."""

    experiment: Experiment
    lenses: tuple[Lens, ...]
    context: LensContext
    writer: RunSink
    preparer: VariantPreparer
    caches: IsolatedCaches
    planner: BenchmarkPlanner
    plans: dict[str, BudgetPlan]  # planned before the run; the others once prepared
    # the variants' native runs started beside the probes (None: no lens runs valgrind)
    ahead: NativeRunsAhead | None = None
    # the machine's CPU features, as the run stores them: valgrind hides some (caches.py)
    cpu_flags: frozenset[str] = frozenset()
    clock: Callable[[], float] = time.monotonic  # seconds: what budgets are spent by


def _in_ns(clock: Callable[[], float]) -> Callable[[], int]:
    """The run's clock as the lenses read it (nanoseconds); the real one unconverted."""
    if clock is time.monotonic:
        return time.monotonic_ns
    return lambda: int(clock() * 1e9)


@contextlib.contextmanager
def _incomplete_on_error(writer: RunSink) -> Iterator[None]:
    """An error or Ctrl-C marks the run incomplete and propagates; what was measured stays."""
    try:
        yield
    except BaseException as error:
        stop_all_contained()
        with contextlib.suppress(StoreError):  # the store may be what failed
            writer.finish(RunStatus.INCOMPLETE, error=describe(error))
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, RunInterrupted):
            raise RunInterrupted(writer.run_id) from error
        raise


def _note_run_setup(
    writer: RunSink,
    experiment: Experiment,
    preflight_notes: list[Note],
    claim: cpu_lock.CpuClaim | None,
    caches: IsolatedCaches,
) -> None:
    """The notes a run begins with: the lenses' preflight, its CPU, its design's plan, its
    caches."""
    for note in preflight_notes:
        writer.add_note(note)
    note_cpu_claim(writer, claim, needs_quiet_cpu(experiment))
    for planned in experiment.plan_notes:
        writer.add_note(Note(severity=Severity.INFO, message=planned))
    if experiment.pairs or experiment.interactions:
        writer.add_note(Note(severity=Severity.INFO, message=budget_plan(experiment)))
    note_isolated_caches(writer, experiment, caches)


def _run_benchmark(run: _Run, benchmark: Benchmark, failures: RunFailures) -> None:
    """Prepare the benchmark's variants, check that their outputs agree, then measure it lens
    by lens within its budget. A failure of the benchmark is recorded and ends it: the other
    lenses would fail the same way. A failure of some variants is recorded and the others are
    measured on, while a planned comparison is left among them."""
    ready = _prepare_variants(
        by_its_lenses(run.experiment, benchmark), benchmark, run.preparer, failures
    )
    if ready is None:
        return
    ready = replace(ready, variants=tuple(run.caches.applied(v) for v in ready.variants))
    context = replace(run.context, experiment=ready)
    error = _check_outputs(benchmark, context)
    if error is not None:  # an output that cannot be checked: that variant is not compared
        failed = error.failures if isinstance(error, VariantsFailed) else ()
        for one in failed or (error,):
            failures.add(benchmark.name, one, None)
        left = without_failed(run.experiment, context, failed) if failed else None
        if left is None:
            return
        context = left
    plan = run.plans.get(benchmark.name)
    if plan is None:  # its variants had to be prepared first: planned now
        plan = run.planner.plan(benchmark, ready)
    measuring = ready.settings.metrics
    ordered = run_order([lens for lens in run.lenses if lens.metric in measuring], plan)
    ledger = BudgetLedger.begun(plan, ordered, run.clock)
    show_plan(context.progress, benchmark.name, plan)
    filling = _native_fill(run, benchmark, context, plan, beside=ordered[0] if ordered else None)
    if filling is not None:
        context = replace(context, native_fill_done=filling.wait)
    try:
        for lens in ordered:
            if filling is not None and not _starts_before_fill(lens):
                _note_native_fill(run, benchmark, context, plan, filling.result())
                filling = None
            measured = _measure_lens_on(run, lens, benchmark, context, ledger, failures)
            if measured is None:
                break
            context = measured
            if lens.metric in ledger.took_s:
                run.planner.learn(plan, lens.metric, ledger.took_s[lens.metric])
        if filling is not None:
            _note_native_fill(run, benchmark, context, plan, filling.result())
            filling = None
    finally:
        if filling is not None:  # the run ends before the native runs did
            filling.stop()
    ledger.note_used(run.writer, benchmark.name)


def _starts_before_fill(lens: Lens) -> bool:
    return descriptor_for(lens.metric).planning.starts_before_native_fill


def _measure_lens_on(
    run: _Run,
    lens: Lens,
    benchmark: Benchmark,
    context: LensContext,
    ledger: BudgetLedger,
    failures: RunFailures,
) -> LensContext | None:
    """Measure with one lens; a variant that fails is recorded and left out. Returns the
    context the next lenses measure in, or None when the benchmark failed or no planned
    comparison is left. A lens that stopped at a variant's failure before it stored a sample
    (a statement that raises while its loop is calibrated) measures the others again."""
    while True:
        error = _measure_lens(
            lens, benchmark, _as_lens_runs(run, lens, context), ledger, run.writer
        )
        if error is None:
            return context
        failed = failed_variants(error, context.experiment)
        if not failed:  # the benchmark itself failed: the other lenses would fail the same way
            failures.add(benchmark.name, error, lens)
            return None
        failures.variants_failed(benchmark, lens, failed)
        left = without_failed(run.experiment, context, failed)
        if left is None:
            return None
        stopped_early = not isinstance(error, VariantsFailed)
        if not stopped_early or run.writer.data_for(benchmark.name, lens.metric).samples:
            return left  # the others' samples so far are kept: measuring again would mix them
        context = left


def _as_lens_runs(run: _Run, lens: Lens, context: LensContext) -> LensContext:
    """The context a lens measures in: under valgrind, each variant in its caches for the CPU
    features valgrind shows (`IsolatedCaches.for_valgrind`)."""
    if not descriptor_for(lens.metric).planning.all_under_valgrind:
        return context
    variants = tuple(run.caches.for_valgrind(v, run.cpu_flags) for v in context.experiment.variants)
    return replace(context, experiment=replace(context.experiment, variants=variants))


def _native_fill(
    run: _Run, benchmark: Benchmark, context: LensContext, plan: BudgetPlan, *, beside: Lens | None
) -> InBackground[NativeFill | None] | None:
    """Where a lens runs the code under valgrind, each variant runs its statement once natively
    first (caches.fill_natively): compiling under valgrind would take minutes of the budget.
    The probe ran the baseline so, in its caches, and the others may have run beside it
    (`NativeRunsAhead`): only the rest run now, in a thread of their own, beside the first lens
    where it waits for them itself (`starts_before_native_fill`), else before it. None where
    nothing runs."""
    if benchmark.kind is not BenchmarkKind.STATEMENT or not run.caches.enabled:
        return None
    # the benchmark's lenses (`by_its_lenses`), not all of the run's
    plannings = [descriptor_for(m).planning for m in context.experiment.settings.metrics]
    if not any(planning.runs_valgrind for planning in plannings):
        return None
    isa_apart = any(planning.all_under_valgrind for planning in plannings)
    probe_s = plan.probe.startup_s + plan.probe.sample_s
    probed_s = {name: probe_s for name in probed_natively(context.experiment, plan.probe)}

    def fill() -> NativeFill | None:
        ahead_s = run.ahead.taken(benchmark.name) if run.ahead is not None else {}
        # the probe's run is the baseline's fill: it ran anyway, so it adds nothing to its time
        before = NativeRuns(sum(ahead_s.values()), {**probed_s, **ahead_s})
        return fill_natively(
            benchmark, context, run.caches, run.cpu_flags, isa_apart=isa_apart, ran_before=before
        )

    filling = InBackground(fill)
    if beside is None or not _starts_before_fill(beside):
        filling.wait()
    return filling


def _note_native_fill(
    run: _Run, benchmark: Benchmark, context: LensContext, plan: BudgetPlan, fill: NativeFill | None
) -> None:
    """What the native runs did, said: the plan's blind spot where a variant's run took far
    longer than the probe, and the JIT caches they filled."""
    if fill is None:
        return
    _warn_unprobed(run, benchmark, context, plan, fill.runs.by_variant)
    if fill.compiled:
        run.writer.add_note(
            native_fill_note(
                benchmark.name,
                fill.compiled,
                fill.runs.took_s,
                refilled=fill.refilled,
                refill_s=fill.refill_s,
                may_compile_again=fill.may_compile_again,
            )
        )


def probed_natively(experiment: Experiment, probe: CostProbe) -> set[str]:
    """The variant whose statement the benchmark's probe ran natively in its caches, as
    `compile_natively` would (a fork server's child ran its set-up, then its statement): the
    baseline, where its statement was probed and the probe did not fail."""
    if probe.kind is not BenchmarkKind.STATEMENT or probe.failed:
        return set()
    return {experiment.baseline.name}


def _warn_unprobed(
    run: _Run,
    benchmark: Benchmark,
    context: LensContext,
    plan: BudgetPlan,
    native_s: Mapping[str, float],
) -> None:
    """Said once the native runs are done (the progress shows it beside the plan) and kept as a
    warning: a variant whose statement ran natively far longer than the probe of the baseline,
    which the plan's lenses under valgrind did not price."""
    probe = plan.probe
    under_valgrind = [
        (share.metric.value, share.share_s)
        for share in plan.shares
        if descriptor_for(share.metric).planning.runs_valgrind
    ]
    probed = (context.experiment.baseline.name, probe.startup_s + probe.sample_s)
    note = unprobed_setup_note(benchmark.name, probed, native_s, under_valgrind)
    if note is None:
        return
    run.writer.add_note(note)
    if isinstance(context.progress, PlanReporter):
        context.progress.plan(benchmark=benchmark.name, text=note.message, eta_s=plan.eta_s)


def _check_outputs(benchmark: Benchmark, context: LensContext) -> BenchmarkFailedError | None:
    """The output check, where one is wanted: None, or why it failed."""
    if not output_check.wanted(benchmark, context):
        return None
    try:
        output_check.check_outputs(benchmark, context)
    except BenchmarkFailedError as error:
        return error
    finally:
        stop_all_contained()
    return None


def _measure_lens(
    lens: Lens,
    benchmark: Benchmark,
    context: LensContext,
    ledger: BudgetLedger,
    writer: RunSink,
) -> BenchmarkFailedError | None:
    """Measure with one lens in its share of the budget; its fork servers, started and closed,
    are its own time. None, or why it failed."""
    cost = ledger.plan.share_of(lens.metric).cost
    started_s = ledger.clock()
    with counting_stopped() as stopped:
        try:
            with _fork_servers(cost, benchmark, context) as servers:
                share_s = ledger.give(lens.metric)
                lens_context = replace(
                    context,
                    budget_s=share_s,
                    fork_servers=servers,
                    server_rounds=cost.server_rounds,
                )
                lens.measure(benchmark, lens_context)
                ledger.note_slow_lens(writer, lens, benchmark.name, started_s)
                note_forked(writer, lens, benchmark.name, servers)
        except BenchmarkFailedError as error:
            stop_all_contained()
            ledger.spent(lens.metric, started_s, failed=True)
            return error
        stop_all_contained()  # what escaped its worker's session, orphaned
    ledger.spent(lens.metric, started_s)
    # only after a success: a failure stops the lens's own workers too, which is no sign of the
    # benchmark leaving any
    note_leftovers(writer, lens, benchmark.name, stopped.count)
    return None


def _fork_servers(
    cost: LensCost, benchmark: Benchmark, context: LensContext
) -> contextlib.AbstractContextManager[ForkServers | None]:
    """A lens's fork servers when its workers are forked: one per variant, started before the
    lens (its first generation would otherwise count their imports as its workers' start-up,
    and size its generations by them)."""
    if not cost.forked:
        return contextlib.nullcontext()
    settings = context.experiment.settings
    rng = random.Random(None if settings.seed is None else f"{settings.seed}:{benchmark.name}")
    return ForkServers(
        context.runner,
        benchmark,
        context.experiment.variants,
        WorkerLaunch(
            context.default_python,
            cpu=context.cpu,
            timeout_s=settings.sample_timeout_s,
            extra_env={"PYTHONHASHSEED": str(rng.randrange(1, 2**32 - 1))}
            if settings.paired_layout
            else {},
            disable_aslr=settings.paired_layout,
        ),
    ).started()


def check_paths(experiment: Experiment, runner: ProcessRunner | None = None) -> None:
    """Variants' directories and interpreters exist, and the interpreters are Python, before a
    run is created for them."""
    has_statements = any(b.kind is BenchmarkKind.STATEMENT for b in experiment.benchmarks)
    for variant in experiment.variants:
        if variant.git or "$" in (variant.cwd or "") + (variant.python or ""):
            continue  # inside a checkout, or at a parameter point: checked when prepared
        check_variant_paths(variant, variant.python if has_statements else None)
        if has_statements and variant.python and runner is not None:
            check_interpreter(runner, variant, variant.python)


def _prepare_variants(
    experiment: Experiment,
    benchmark: Benchmark,
    preparer: VariantPreparer,
    failures: RunFailures,
) -> Experiment | None:
    """The experiment this benchmark is measured with: every variant at the benchmark's
    parameter point, checked out and built. A variant that cannot be prepared is reported (once)
    and left out; the others are measured when a planned comparison remains."""
    ready: list[Variant] = []
    for planned in experiment.variants:
        variant = planned.at(benchmark.params)
        try:
            prepared = preparer.prepare(variant, benchmark)
        except PerflabError as error:
            failed = BenchmarkFailedError(
                error.message, hint=error.hint, variant=planned.name, detail=error.detail
            )
            failed.exit_code = max(error.exit_code, BenchmarkFailedError.exit_code)
            failures.not_prepared(failed)
            continue
        for note in prepared.notes:
            failures.writer.add_note(note)
        if prepared.provenance:
            failures.writer.add_variant_info(
                planned.name, VariantInfo(provenance=prepared.provenance)
            )
        ready.append(prepared.variant)
    if not comparable(experiment, {v.name for v in ready}):
        return None
    return replace(experiment, variants=tuple(ready))
