"""plan -> run -> store: runs an experiment, writing every measurement as it arrives; and
store -> analyse: turns a stored run into comparisons."""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab.budget import (
    BudgetPlan,
    LensCost,
    MachineSpeed,
    elastic_share,
    lens_costs,
    plan_budget,
)
from perflab.design_analysis import interactions_of, stack_summaries
from perflab.designs import budget_plan
from perflab.errors import (
    BenchmarkFailedError,
    ConfigError,
    PerflabError,
    RunInterrupted,
    StoreError,
)
from perflab.explanation import summaries, summary_section
from perflab.git.prepare import VariantPreparer
from perflab.host import (
    default_measurement_cpu,
    interpreter_differences,
    machine_facts,
    online_cpus,
    process_command,
    variant_differences,
)
from perflab.lenses.registry import descriptor_for, lens_for
from perflab.lenses.sections import lens_sections
from perflab.measure import cpu_lock, output_check
from perflab.measure.caches import CACHE_VARIABLES, IsolatedCaches, writes_no_bytecode
from perflab.measure.fork_server import ForkServers
from perflab.measure.lens import (
    BenchmarkData,
    Lens,
    LensContext,
    NullProgress,
    PlanReporter,
    ProgressReporter,
)
from perflab.measure.probe import probe_benchmark
from perflab.measure.worker_client import check_interpreter, check_variant_paths
from perflab.model import (
    Benchmark,
    BenchmarkKind,
    Comparison,
    Experiment,
    Measurement,
    Metric,
    Note,
    RunStatus,
    Sample,
    Severity,
    Variant,
    Verdict,
)
from perflab.proc import (
    ProcessRunner,
    SubprocessRunner,
    stop_all_contained,
    stopped_processes,
)
from perflab.results import RunResult as RunResult  # re-exported: it was defined here
from perflab.stats.outputs import output_difference
from perflab.store import RunWriter, Store, StoredRun
from perflab.version import __version__


@dataclass(frozen=True)
class _Failure:
    benchmark: str
    error: BenchmarkFailedError


def measurement_cpu(experiment: Experiment) -> int | None:
    settings = experiment.settings
    if not settings.pin:
        return None
    cpu = default_measurement_cpu() if settings.cpu is None else settings.cpu
    if cpu not in online_cpus():
        raise ConfigError(
            f"CPU {cpu} is not available to perflab (available: {online_cpus()})",
            hint="choose --cpu from the available ones, or --no-pin",
        )
    return cpu


class _OrchestratorOffCpu:
    """Keep perflab itself off the measuring CPU, where there is another one."""

    def __init__(self, cpu: int | None) -> None:
        self.cpu = cpu
        self.saved = os.sched_getaffinity(0)

    def __enter__(self) -> None:
        others = self.saved - {self.cpu}
        if self.cpu is not None and others:
            os.sched_setaffinity(0, others)

    def __exit__(self, *exc: object) -> None:
        os.sched_setaffinity(0, self.saved)


def needs_quiet_cpu(experiment: Experiment) -> bool:
    """Whether a lens of the run measures something a busy measuring CPU changes (wall time,
    hardware counters); instruction counts, simulated caches and disassembly do not."""
    return any(descriptor_for(m).needs_quiet_cpu for m in experiment.settings.metrics)


def _holders(pids: Iterable[int]) -> str:
    """Other perflab runs, in words: "perflab pid 123 (`perflab run ...`)"."""
    described = []
    for pid in pids:
        command = process_command(pid)
        described.append(
            f"perflab pid {pid or '?'}" + (f" (`{command}`)" if command is not None else "")
        )
    return ", ".join(described)


def claim_measurement_cpu(
    experiment: Experiment, progress: ProgressReporter
) -> cpu_lock.CpuClaim | None:
    """Lock the measuring CPU against other perflab runs (measure/cpu_lock.py): the default one,
    else another free one; with --cpu that one, shared if another run holds it. None: no pinning.
    A run whose lenses do not need a quiet CPU takes a free one if there is one and never waits.
    """
    cpu = measurement_cpu(experiment)
    if cpu is None:
        return None
    preferred = [cpu] + [c for c in reversed(online_cpus()) if c != cpu]
    first = experiment.benchmarks[0].name if experiment.benchmarks else ""
    metric = experiment.settings.metrics[0] if experiment.settings.metrics else Metric.TIME

    def waiting(held: dict[int, int], left_s: float) -> None:
        holders = ", ".join(f"CPU {c}: {_holders([pid])}" for c, pid in sorted(held.items()))
        progress.update(
            benchmark=first,
            metric=metric,
            detail=f"waiting for a CPU no other perflab run measures on ({holders}); "
            f"≤{left_s:.0f} s, then sharing CPU {cpu}; the wait is not counted in the budget",
        )

    return cpu_lock.claim_cpu(
        preferred,
        forced=experiment.settings.cpu is not None,
        on_wait=waiting,
        wait_s=cpu_lock.WAIT_S if needs_quiet_cpu(experiment) else 0.0,
    )


def run_experiment(
    experiment: Experiment,
    *,
    store: Store | None = None,
    runner: ProcessRunner | None = None,
    progress: ProgressReporter | None = None,
    default_python: str | None = None,
    cache_dir: str | Path | None = None,
    started_at_s: float | None = None,
) -> RunResult:
    """Measure every benchmark with every lens and variant; return the analysed run.

    `started_at_s` (time.monotonic()) is when the process running perflab started: the `perflab`
    command's own start-up then counts in its first benchmark's budget, as the user waits for it.

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
    progress = progress or NullProgress()
    claim = claim_measurement_cpu(experiment, progress)
    try:
        return _run_experiment(
            experiment,
            claim=claim,
            store=store,
            runner=runner,
            progress=progress,
            default_python=default_python,
            cache_dir=cache_dir,
            started_at_s=started_at_s,
        )
    finally:
        if claim is not None:
            claim.release()


def _run_experiment(
    experiment: Experiment,
    *,
    claim: cpu_lock.CpuClaim | None,
    store: Store | None,
    runner: ProcessRunner | None,
    progress: ProgressReporter,
    default_python: str | None,
    cache_dir: str | Path | None,
    started_at_s: float | None,
) -> RunResult:
    runner = runner or SubprocessRunner()
    store = store or Store.in_memory()
    cpu = None if claim is None else claim.cpu
    check_paths(experiment, runner)
    lenses = [lens_for(metric) for metric in experiment.settings.metrics]
    preflight_notes = [n for lens in lenses for n in lens.preflight(experiment, runner)]
    python = default_python or sys.executable
    # the probes run in the caches the measurements will use (removed when the run ends)
    caches = IsolatedCaches(enabled=not experiment.settings.share_caches).__enter__()
    try:
        # the budget's plans, before anything is stored: a budget too small refuses here
        plans: dict[str, BudgetPlan] = {}
        # the machine's speed is measured with the first probe, and holds for the run's others
        speed: MachineSpeed | None = None
        waited_s = claim.waited_s if claim is not None else 0.0
        for index, b in enumerate(experiment.benchmarks):
            if _needs_preparation(experiment.baseline.at(b.params)):
                continue
            plans[b.name] = _plan(
                b,
                _at_point(experiment, b, caches),
                runner,
                python,
                cpu,
                # the first benchmark's budget holds perflab's own start-up, when known; the
                # wait for a CPU other perflab runs held is theirs, not charged to it
                before_s=_since(started_at_s) - waited_s if index == 0 else 0.0,
                waited_s=waited_s if index == 0 else 0.0,
                speed=speed,
            )
            speed = plans[b.name].probe.speed
        writer = store.begin_run(experiment, machine_facts(runner, cpu=cpu), __version__)
    except BaseException:
        caches.__exit__(None, None, None)
        raise
    for note in preflight_notes:
        writer.add_note(note)
    _note_cpu_claim(writer, claim, needs_quiet_cpu(experiment))
    context = LensContext(
        experiment=experiment,
        runner=runner,
        sink=writer,
        progress=progress,
        cpu=cpu,
        default_python=python,
    )
    failures: list[_Failure] = []
    preparer = VariantPreparer(
        runner,
        repository=experiment.repository,
        cache_dir=cache_dir,
        build_timeout_s=experiment.settings.build_timeout_s,
    )
    for planned in experiment.plan_notes:
        writer.add_note(Note(severity=Severity.INFO, message=planned))
    if experiment.pairs or experiment.interactions:
        writer.add_note(Note(severity=Severity.INFO, message=budget_plan(experiment)))
    _note_isolated_caches(writer, experiment, caches)
    try:
        with _OrchestratorOffCpu(cpu), caches:
            for benchmark in experiment.benchmarks:
                ready = _prepare_variants(experiment, benchmark, preparer, writer, failures)
                if ready is None:
                    continue
                ready = replace(ready, variants=tuple(caches.applied(v) for v in ready.variants))
                bench_context = replace(context, experiment=ready)
                if output_check.wanted(benchmark, bench_context):
                    try:
                        output_check.check_outputs(benchmark, bench_context)
                    except BenchmarkFailedError as error:
                        failures.append(_Failure(benchmark.name, error))
                        writer.add_note(_failure_note(error, benchmark.name, None))
                        continue  # an output that cannot be checked: nothing to compare
                    finally:
                        stop_all_contained()
                plan = plans.get(benchmark.name)
                if plan is None:  # its variants had to be prepared first: planned now
                    plan = _plan(benchmark, ready, runner, python, cpu, speed=speed)
                    speed = plan.probe.speed
                # the lenses measure until the budget less what runs after measuring; it began
                # with the probe (and perflab's start-up, for the first benchmark)
                begun_s = time.monotonic() - plan.probe.probe_s - plan.before_s
                deadline_s = begun_s + plan.measuring_s
                _show_plan(progress, benchmark.name, plan)
                ordered = _run_order(lenses, plan)
                took_s: dict[Metric, float] = {}  # what each lens really took
                given_s: dict[Metric, float] = {}  # and the share it was given
                failed_s: dict[Metric, float] = {}  # when a lens failed: after how long
                for index, lens in enumerate(ordered):
                    stopped_before = stopped_processes()
                    cost = plan.share_of(lens.metric).cost
                    servers: ForkServers | None = None
                    share_s = cost.minimum_s
                    measured = False
                    try:
                        servers_started_s = time.monotonic()  # its fork servers are its own
                        servers = _fork_servers(cost, benchmark, bench_context)
                        started_s = time.monotonic()
                        # a sampling lens's share is re-planned from what is really left
                        share_s = (
                            elastic_share(
                                plan,
                                lens.metric,
                                deadline_s - started_s,
                                [other.metric for other in ordered[index:]],
                            )
                            if cost.elastic
                            else plan.share_of(lens.metric).share_s
                        )
                        given_s[lens.metric] = share_s
                        lens_context = replace(
                            bench_context,
                            budget_s=share_s,
                            fork_servers=servers,
                            server_rounds=cost.server_rounds,
                        )
                        lens.measure(benchmark, lens_context)
                        measured = True
                        _note_slow_lens(
                            writer,
                            lens,
                            benchmark.name,
                            servers_started_s,
                            share_s,
                            plan.share_of(lens.metric).share_s,
                        )
                        _note_forked(writer, lens, benchmark.name, servers)
                    except BenchmarkFailedError as error:
                        failures.append(_Failure(benchmark.name, error))
                        writer.add_note(_failure_note(error, benchmark.name, lens))
                        break  # the other lenses would fail the same way
                    finally:
                        if servers is not None:
                            servers.close()
                        stop_all_contained()  # what escaped its worker's session, orphaned
                        # closing its servers is the lens's time too
                        spent = took_s if measured else failed_s
                        spent[lens.metric] = time.monotonic() - servers_started_s
                        if measured:
                            # after a failure the lens's own workers were stopped too: what
                            # was stopped then is no sign of the benchmark leaving any
                            _note_leftovers(writer, lens, benchmark.name, stopped_before)
                _note_budget_used(
                    writer, benchmark.name, plan, deadline_s, took_s, given_s, failed_s
                )
    except BaseException as error:
        stop_all_contained()
        with contextlib.suppress(StoreError):  # the store may be what failed
            writer.finish(RunStatus.INCOMPLETE, error=_describe(error))
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, RunInterrupted):
            raise RunInterrupted(writer.run_id) from error
        raise
    finally:
        preparer.close()
    _note_joiners(writer, claim)
    status = RunStatus.INCOMPLETE if failures else RunStatus.COMPLETE
    writer.finish(status, error="; ".join(_describe(f.error) for f in failures) or None)
    result = analyse_run(store.load_run(writer.run_id))
    return replace(result, failures=tuple(f.error for f in failures))


SLOW_LENS_FACTOR = 1.5


def _note_cpu_claim(writer: RunWriter, claim: cpu_lock.CpuClaim | None, quiet: bool) -> None:
    """Say when another perflab run measured on the same CPU, or when this one waited (who
    held the CPUs, how long; the wait is not charged to the budget). `quiet`: a lens of the
    run needs a quiet CPU (else sharing one changes none of its results)."""
    if claim is None:
        return
    if claim.shared_with and not quiet:
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"CPU {claim.cpu} was shared with another perflab run, "
                f"{_holders(claim.shared_with)}: these lenses' results do not depend on a "
                "quiet CPU, so this run did not wait for one",
            )
        )
    elif claim.shared_with:
        writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"these results share CPU {claim.cpu} with another perflab run, "
                f"{_holders(claim.shared_with)}, which was measuring on it when this run "
                "started"
                + (
                    f", after waiting {claim.waited_s:.1f} s for a free CPU (not counted in "
                    "the budget)"
                    if claim.waited_s >= 0.1
                    else ""
                )
                + ": while both ran, they took turns on the CPU",
                hint="run one at a time, or give each its own CPU (--cpu N); without --cpu a "
                "run picks a CPU no other run holds",
            )
        )
    elif claim.waited_s >= 1.0:
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message=f"waited {claim.waited_s:.0f} s for CPU {claim.cpu}: other perflab "
                f"runs were measuring on every CPU ({_holders(claim.waited_for)}); the wait "
                "is not counted in the budget",
            )
        )


def _note_joiners(writer: RunWriter, claim: cpu_lock.CpuClaim | None) -> None:
    """Say when another perflab run shared the CPU this run held (it could not wait)."""
    if claim is None or claim.lock is None:
        return
    others = cpu_lock.joined(claim.cpu, claim.lock.since_s)
    if others:
        who = ", ".join(f"pid {p}" for p in others)
        writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=f"another perflab run ({who}) measured on CPU {claim.cpu} while this "
                "run held it: while both ran, they took turns on the CPU",
                hint="run one at a time, or give each its own CPU (--cpu N); without --cpu a "
                "run picks a CPU no other run holds",
            )
        )


def _needs_preparation(variant: Variant) -> bool:
    """A variant checked out or built before it runs: probed once it is ready."""
    return bool(variant.git or variant.build or variant.apply)


def _at_point(experiment: Experiment, benchmark: Benchmark, caches: IsolatedCaches) -> Experiment:
    variants = tuple(caches.applied(v.at(benchmark.params)) for v in experiment.variants)
    return replace(experiment, variants=variants)


def _since(started_at_s: float | None) -> float:
    return 0.0 if started_at_s is None else max(0.0, time.monotonic() - started_at_s)


def _plan(
    benchmark: Benchmark,
    experiment: Experiment,
    runner: ProcessRunner,
    default_python: str,
    cpu: int | None,
    *,
    before_s: float = 0.0,
    waited_s: float = 0.0,
    speed: MachineSpeed | None = None,
) -> BudgetPlan:
    """Probe the benchmark and split its budget between the lenses (perflab/budget.py);
    raises BudgetError when a minimum does not fit and the settings ask for --strict-budget.
    `speed`: the machine's, measured with an earlier probe of the run (None: measure it)."""
    settings = experiment.settings
    probe = probe_benchmark(
        benchmark,
        experiment,
        runner,
        default_python=default_python,
        cpu=cpu,
        valgrind=any(descriptor_for(m).runs_valgrind for m in settings.metrics),
        speed=speed,
    )
    models = {metric: descriptor_for(metric).cost for metric in settings.metrics}
    try:
        return plan_budget(
            settings.budget_s,
            probe,
            lens_costs(probe, settings, models),
            strict=settings.strict_budget,
            before_s=max(0.0, before_s),
            waited_s=waited_s,
        )
    except ConfigError as error:
        error.benchmark = error.benchmark or benchmark.name
        raise


def _fork_servers(cost: LensCost, benchmark: Benchmark, context: LensContext) -> ForkServers | None:
    """A lens's fork servers when its workers are forked: one per variant, started before the
    lens (its first generation would otherwise count their imports as its workers' start-up,
    and size its generations by them)."""
    if not cost.forked:
        return None
    settings = context.experiment.settings
    rng = random.Random(None if settings.seed is None else f"{settings.seed}:{benchmark.name}")
    return ForkServers(
        context.runner,
        benchmark,
        context.experiment.variants,
        default_python=context.default_python,
        cpu=context.cpu,
        timeout_s=settings.sample_timeout_s,
        layout={"PYTHONHASHSEED": str(rng.randrange(1, 2**32 - 1))}
        if settings.paired_layout
        else {},
        disable_aslr=settings.paired_layout,
    ).started()


def _note_forked(
    writer: RunWriter, lens: Lens, benchmark: str, servers: ForkServers | None
) -> None:
    if servers is None or not servers.forked:
        return
    writer.add_note(
        Note(
            severity=Severity.INFO,
            message=f"the {lens.metric.value} lens forked its {servers.forked} workers from one "
            "process per variant that imported the set-up's modules once: each generation's "
            "workers shared that process's hash seed and address-space layout, with heap and "
            "stack moved by a random padding",
            hint="the set-up's imports took long enough to dominate fresh workers' start-up; "
            "docs/statistics.md (the budget) has what forking does to the statistics",
            benchmark=benchmark,
            metric=lens.metric,
        )
    )


def _note_budget_used(
    writer: RunWriter,
    benchmark: str,
    plan: BudgetPlan,
    deadline_s: float,
    took_s: Mapping[Metric, float],
    given_s: Mapping[Metric, float],
    failed_s: Mapping[Metric, float],
) -> None:
    """The plan, and what the benchmark really took against its budget (its probe and every
    lens included), each lens's time beside its share: one note per benchmark; and, when it
    ran over its budget (a target, not a wall), a warning that says what took longer and why."""
    used_s = time.monotonic() - (deadline_s - plan.measuring_s)
    anyway = (
        ""
        if plan.fits
        else f"; the minimums were measured anyway (they need about {plan.needed_s:.0f} s)"
    )
    writer.add_note(
        Note(
            severity=Severity.INFO,
            message=f"used {used_s:.1f} s of the {plan.describe(took_s, given_s, failed_s)}"
            f"{anyway}",
            benchmark=benchmark,
        )
    )
    over = None if failed_s or plan.probe.failed else plan.overrun(used_s, took_s, given_s)
    if over is not None:
        writer.add_note(
            Note(
                severity=Severity.WARNING,
                message=over,
                hint=f"--budget {max(plan.fitting_budget_s, math.ceil(used_s * 1.1)):g} "
                "would hold it on this machine now, "
                "or measure fewer lenses (--metric); --strict-budget refuses before measuring "
                "rather than run over",
                benchmark=benchmark,
            )
        )


def _run_order(lenses: list[Lens], plan: BudgetPlan) -> list[Lens]:
    """Lenses with a fixed cost first, then those that sample until their share is used: each
    of those gets what is really left, so the fixed costs' estimates need not be exact."""
    return sorted(lenses, key=lambda lens: plan.share_of(lens.metric).cost.elastic)


def _show_plan(progress: ProgressReporter, benchmark: str, plan: BudgetPlan) -> None:
    if isinstance(progress, PlanReporter):
        progress.plan(benchmark=benchmark, text=plan.describe(), eta_s=plan.eta_s)


# code that compiles into an on-disk cache a second variant could run (torch.compile,
# Triton, numba, JAX ...): where none is named, the caches note would only be noise
_CACHING_CODE = re.compile(r"torch|triton|inductor|numba|jax|tensorflow|cupy", re.IGNORECASE)


def _caches_matter(experiment: Experiment) -> bool:
    """Whether the isolated caches are worth a note: two variants or more, and code that
    compiles into an on-disk cache, or a variant that sets a cache directory itself."""
    if len(experiment.variants) < 2:
        return False
    if any(name in v.env for v in experiment.variants for name in CACHE_VARIABLES):
        return True
    texts = [t for b in experiment.benchmarks for t in (b.stmt, b.setup, b.cmd) if t]
    texts += [t for v in experiment.variants for t in (v.cmd, v.build, v.python) if t]
    return any(_CACHING_CODE.search(text) for text in texts)


def _note_isolated_caches(
    writer: RunWriter, experiment: Experiment, caches: IsolatedCaches
) -> None:
    """Say which caches each variant had to itself (a fact of the variant, and one note)."""
    if not caches.enabled:
        writer.add_note(
            Note(
                severity=Severity.INFO,
                message="the variants shared their on-disk caches (--share-caches): a variant "
                "may run code another one compiled",
            )
        )
        return
    for variant in experiment.variants:
        writer.add_variant_info(variant.name, {"isolated_caches": list(caches.isolated(variant))})
    if not _caches_matter(experiment):
        return
    own = sorted(
        f"{variant.name} sets {name}"
        for variant in experiment.variants
        for name in CACHE_VARIABLES
        if name in variant.env
    )
    no_bytecode = sorted(v.name for v in experiment.variants if writes_no_bytecode(v))
    shared_bytecode = (
        f"; the bytecode cache stayed shared for {', '.join(no_bytecode)}: "
        "PYTHONDONTWRITEBYTECODE is set, so no variant writes bytecode, and an empty "
        "PYTHONPYCACHEPREFIX would compile every import in every process"
        if no_bytecode
        else ""
    )
    listed = [
        name
        for name in CACHE_VARIABLES
        if any(name in caches.isolated(v) or name in v.env for v in experiment.variants)
    ]
    writer.add_note(
        Note(
            severity=Severity.INFO,
            message="each variant had its own fresh cache directories ("
            + ", ".join(listed)
            + "), removed at the end"
            + (f"; not isolated where a variant sets its own: {', '.join(own)}" if own else "")
            + shared_bytecode,
            hint="--share-caches lets the variants share them",
        )
    )


def _note_leftovers(writer: RunWriter, lens: Lens, benchmark: str, stopped_before: int) -> None:
    """Processes a benchmark started and left running are stopped when its sample or worker
    ends (LiveProcess.stop_leftovers); say how many, since the code measured did not do what the
    user expects of it."""
    stopped = stopped_processes() - stopped_before
    if stopped <= 0:
        return
    writer.add_note(
        Note(
            severity=Severity.WARNING,
            message=f"the benchmark left {stopped} process{'es' if stopped != 1 else ''} "
            f"running; {'they were' if stopped != 1 else 'it was'} stopped",
            hint="a statement or command should wait for the processes it starts; perflab "
            "stops what is left when each sample (command) or worker (statement) ends",
            benchmark=benchmark,
            metric=lens.metric,
        )
    )


def _note_slow_lens(
    writer: RunWriter,
    lens: Lens,
    benchmark: str,
    started_s: float,
    share_s: float,
    planned_s: float,
) -> None:
    """The plan gives each lens its share of the budget; when a lens's minimum (generations,
    tool start-up, callgrind) took much longer than its share, say so rather than surprise:
    the plan's estimate was short, or (a sampling lens, its share re-planned from what was
    left) the lenses before it took part of its share."""
    elapsed_s = time.monotonic() - started_s
    if descriptor_for(lens.metric).reports_overruns or elapsed_s <= SLOW_LENS_FACTOR * max(
        share_s, 1.0
    ):
        return
    if elapsed_s <= SLOW_LENS_FACTOR * max(planned_s, 1.0):
        why = (
            f"the lenses before it left it {share_s:.1f} s of its planned {planned_s:.1f} s, "
            "less than its minimum measurement"
        )
    else:
        why = (
            f"its minimum measurement (fresh workers, tool start-up) is longer than the plan "
            f"estimated ({planned_s:.1f} s)"
        )
    writer.add_note(
        Note(
            severity=Severity.INFO,
            message=f"the {lens.metric.value} lens took {elapsed_s:.0f} s, more than its share "
            f"of the budget ({share_s:.1f} s): {why}",
            hint="the plan's estimates come from a probe of the benchmark; see the lens's "
            "page in docs/lenses/ and docs/statistics.md (the budget)",
            benchmark=benchmark,
            metric=lens.metric,
        )
    )


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


def _describe(error: BaseException) -> str:
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    return str(error) or type(error).__name__


def _failure_note(error: BenchmarkFailedError, benchmark: str, lens: Lens | None) -> Note:
    return Note(
        severity=Severity.WARNING,
        message=f"failed: {error.message}" + (f"\n{error.detail}" if error.detail else ""),
        hint=error.hint,
        benchmark=benchmark,
        variant=error.variant,
        metric=lens.metric if lens is not None else None,
    )


def _prepare_variants(
    experiment: Experiment,
    benchmark: Benchmark,
    preparer: VariantPreparer,
    writer: RunWriter,
    failures: list[_Failure],
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
            if not any(_same_failure(f.error, failed) for f in failures):
                failures.append(_Failure(benchmark.name, failed))
                writer.add_note(
                    Note(
                        severity=Severity.WARNING,
                        message=f"not measured: {failed.message}"
                        + (f"\n{failed.detail}" if failed.detail else ""),
                        hint=failed.hint,
                        variant=planned.name,
                    )
                )
            continue
        for note in prepared.notes:
            writer.add_note(note)
        if prepared.provenance:
            writer.add_variant_info(planned.name, {"provenance": prepared.provenance})
        ready.append(prepared.variant)
    names = {v.name for v in ready}
    alone = len(experiment.variants) == 1 and bool(ready)  # one variant, measured alone
    if not alone and not any(a in names and b in names for a, b in experiment.comparison_pairs):
        return None
    return replace(experiment, variants=tuple(ready))


def _same_failure(a: PerflabError, b: PerflabError) -> bool:
    return (a.variant, a.message) == (b.variant, b.message)


def analyse_run(run: StoredRun) -> RunResult:
    """Derive every comparison of a stored run from its raw samples and artifacts."""
    experiment = run.experiment
    names = [v.name for v in experiment.variants]
    comparisons: list[Comparison] = []
    notes: list[Note] = list(run.notes)
    top_level: dict[str, Any] = {}
    data_of: dict[tuple[str, Metric], BenchmarkData] = {}
    measurements: dict[tuple[str, Metric, str], Measurement] = {}
    for metric in experiment.settings.metrics:
        lens = lens_for(metric)
        for benchmark in experiment.benchmarks:
            data = run.data_for(benchmark.name, metric)
            if not data.samples and not data.artifacts:
                continue
            data_of[(benchmark.name, metric)] = data
            found: list[Comparison] = []
            for group in _comparison_groups(experiment, names, data):
                analysis = lens.analyse(benchmark, group, data, experiment)
                found += analysis.comparisons
                for own in analysis.measurements:
                    measurements.setdefault((own.benchmark, own.metric, own.variant), own)
                notes += analysis.notes
                _merge_top_level(top_level, analysis.top_level)
            order = {pair: i for i, pair in enumerate(experiment.comparison_pairs)}
            comparisons += sorted(found, key=lambda c: order.get((c.baseline, c.variant), 0))
    comparisons, check_notes = judge_outputs(run, comparisons)
    notes += check_notes
    # imported here: it reads the instructions and asm lenses' analysis types, whose modules
    # take seconds to import on a loaded machine, and perflab's start-up is in the budget
    from perflab.same_work import disagreement_notes, same_work_notes

    notes += same_work_notes(experiment, comparisons, run.machine)
    notes += disagreement_notes(comparisons)
    variant_info = {k: dict(v) for k, v in run.variant_info.items()}
    differences = variant_differences(experiment.variants) + interpreter_differences(variant_info)
    notes = dedupe_notes(notes)
    return with_sections(
        RunResult(
            run_id=run.run_id,
            status=run.status,
            created_at=run.created_at,
            experiment=experiment,
            machine=dict(run.machine),
            comparisons=tuple(comparisons),
            notes=tuple(notes),
            variant_info=variant_info,
            differences=tuple(differences),
            error=run.error,
            top_level=top_level,
            samples=run.samples,
            measurements=tuple(measurements.values()),
            stacks=stack_summaries(experiment, comparisons),
            interactions=interactions_of(experiment, comparisons, data_of),
        )
    )


def judge_outputs(
    run: StoredRun, comparisons: list[Comparison]
) -> tuple[list[Comparison], list[Note]]:
    """The output checks' verdicts: a variant whose value differs from its baseline's makes
    every comparison of that benchmark between the two `invalid`; a value that changed within
    one variant (after setup / after measuring) is not compared, and said to be unstable."""
    experiment = run.experiment
    rtol = experiment.settings.check_rtol
    notes: list[Note] = []
    invalid: dict[tuple[str, str, str], dict[str, Any]] = {}
    for benchmark in experiment.benchmarks:
        stored = run.data_for(benchmark.name, output_check.CHECK).artifacts
        values = {a.variant: json.loads(a.content) for a in stored}
        if not values:
            continue
        stable = set()
        for name, value in values.items():
            unstable = _unstable_output(value, rtol)
            if unstable is None:
                stable.add(name)
                continue
            notes.append(
                Note(
                    severity=Severity.WARNING,
                    message=f"the output check `{value['expression']}` is not deterministic: "
                    f"{unstable}; it was not compared with the other variants",
                    hint="seed the randomness in the setup (random.seed, torch.manual_seed, "
                    "numpy.random.seed; PYTHONHASHSEED for the order of sets), check a value "
                    "the statement does not change, or allow a tolerance (--check-rtol)",
                    benchmark=benchmark.name,
                    variant=name,
                )
            )
        same: list[str] = []
        for baseline, variant in experiment.comparison_pairs:
            if baseline not in stable or variant not in stable:
                continue
            expression = values[variant]["expression"]
            difference = output_difference(
                values[baseline]["after_setup"], values[variant]["after_setup"], rtol
            )
            if difference is None:
                same.append(variant)
                continue
            invalid[(benchmark.name, baseline, variant)] = {
                "expression": expression,
                **difference.to_json(),
            }
            notes.append(
                Note(
                    severity=Severity.WARNING,
                    message=f"{variant} computes something else than {baseline}: "
                    f"`{expression}` differs at {difference.describe()}; its comparisons "
                    "are marked invalid (the variants did not do the same work)",
                    hint="fix the variant, or compare what it computes (on-disk caches such "
                    "as TORCHINDUCTOR_CACHE_DIR shared between variants can run stale code); "
                    "--check-rtol allows a relative tolerance for floats and arrays",
                    benchmark=benchmark.name,
                    variant=variant,
                )
            )
        if same:
            notes.append(
                Note(
                    severity=Severity.INFO,
                    message=f"output check `{values[same[0]]['expression']}`: "
                    f"{', '.join(same)} computed the same value as the baseline",
                    benchmark=benchmark.name,
                )
            )
    if not invalid:
        return comparisons, notes
    marked = [
        replace(c, verdict=Verdict.INVALID, output_check=invalid[key])
        if (key := (c.benchmark, c.baseline, c.variant)) in invalid
        else c
        for c in comparisons
    ]
    return marked, notes


def _unstable_output(value: dict[str, Any], rtol: float) -> str | None:
    """How one variant's check value moved within the variant, in words, or None when it did
    not: after measuring vs after setup (one process), and in a second process (statements;
    runs before that was checked have no `another_process`)."""
    moved = output_difference(value["after_setup"], value["after_measuring"], rtol)
    if moved is not None:
        return f"its value after measuring differs from its value after setup ({moved.describe()})"
    if "another_process" in value:
        moved = output_difference(value["after_setup"], value["another_process"], rtol)
        if moved is not None:
            return (
                f"two processes of the same variant computed different values ({moved.describe()})"
            )
    return None


def with_sections(result: RunResult) -> RunResult:
    """The result with every lens's report section built from its analysis, after the summary
    of each pair that joins them (perflab.explanation)."""
    found = summaries(result.comparisons)
    summary = summary_section(found)
    sections = lens_sections(
        result.experiment,
        result.comparisons,
        top_level=result.top_level,
        variant_info=result.variant_info,
        notes=result.notes,
        cross_run=result.cross_run,
        measurements=result.measurements,
    )
    if summary is not None:
        sections = (summary, *sections)
    return replace(result, sections=sections, summaries=found)


def _comparison_groups(
    experiment: Experiment, names: list[str], data: BenchmarkData
) -> list[list[str]]:
    """The variant lists to hand a lens's analyse (which compares list[1:] with list[0]): all
    variants when the plan names no pairs; else one list per baseline, with the variants it is
    compared with, leaving out variants with no data (they failed to build or measure)."""
    if not experiment.pairs:
        return [names]
    measured = {s.variant for s in data.samples} | {a.variant for a in data.artifacts}
    grouped: dict[str, list[str]] = defaultdict(list)
    for baseline, variant in experiment.pairs:
        if baseline in measured and variant in measured and variant not in grouped[baseline]:
            grouped[baseline].append(variant)
    return [[baseline, *variants] for baseline, variants in grouped.items() if variants]


def dedupe_notes(notes: list[Note]) -> list[Note]:
    """Drop repeats, and run-level notes (from preflight, before anything was measured) that a
    benchmark's analysis says again, more precisely, with the same hint."""
    said_per_benchmark = {
        (n.metric, n.hint) for n in notes if n.benchmark is not None and n.hint is not None
    }
    kept: list[Note] = []
    for note in notes:
        if note in kept:
            continue
        if note.benchmark is None and (note.metric, note.hint) in said_per_benchmark:
            continue
        kept.append(note)
    return kept


def _merge_top_level(into: dict[str, Any], extra: Any) -> None:
    for key, value in dict(extra).items():
        if isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = into[key] + [v for v in value if v not in into[key]]
        else:
            into.setdefault(key, value)


def compare_runs(baseline: StoredRun, candidate: StoredRun) -> RunResult:
    """Compare two stored runs variant by variant: for every variant name and benchmark present in
    both, the candidate run's measurements against the baseline run's.

    Samples of two runs were not interleaved, so machine drift between the runs is not cancelled;
    the result says so. Time samples are matched by generation, and the CI is still computed over
    generations."""
    shared_variants = [
        v.name
        for v in baseline.experiment.variants
        if v.name in {c.name for c in candidate.experiment.variants}
    ]
    shared_benchmarks = [
        b
        for b in baseline.experiment.benchmarks
        if b.name in {c.name for c in candidate.experiment.benchmarks}
    ]
    shared_metrics = [
        m
        for m in baseline.experiment.settings.metrics
        if m in candidate.experiment.settings.metrics
    ]
    if not shared_variants or not shared_benchmarks or not shared_metrics:
        raise ConfigError(
            f"runs {baseline.run_id} and {candidate.run_id} share no variant, benchmark and metric",
            hint="compare runs of the same experiment (same variant and benchmark names)",
        )
    comparisons: list[Comparison] = []
    notes: list[Note] = [
        Note(
            severity=Severity.WARNING,
            message=f"run {candidate.run_id} is compared with run {baseline.run_id}: their samples "
            "were not interleaved, so a change of the machine's speed between the runs shows "
            "up as a difference",
            hint="for a fair A/B, measure both variants in one run",
        )
    ]
    if baseline.run_id == candidate.run_id:
        notes.append(
            Note(
                severity=Severity.WARNING,
                message=f"run {baseline.run_id} is compared with itself: the ratios are 1 by "
                "construction",
                hint="give two different run ids (perflab list shows them)",
            )
        )
    top_level: dict[str, Any] = {}
    compared_samples: list[Sample] = []
    for variant_name in shared_variants:
        names = [f"run{baseline.run_id}:{variant_name}", f"run{candidate.run_id}:{variant_name}"]
        variants = tuple(
            replace(v, name=name)
            for v, name in zip(
                (
                    _variant_of(baseline.experiment, variant_name),
                    _variant_of(candidate.experiment, variant_name),
                ),
                names,
                strict=True,
            )
        )
        experiment = replace(
            baseline.experiment,
            variants=variants,
            benchmarks=tuple(shared_benchmarks),
            settings=replace(baseline.experiment.settings, metrics=tuple(shared_metrics)),
            # the stored run's pairs name its own variants: here each variant meets itself
            # (the family level counts these comparisons, stats.family)
            pairs=(),
            stack=(),
            interactions=(),
        )
        for metric in shared_metrics:
            lens = lens_for(metric)
            for benchmark in shared_benchmarks:
                data = _relabelled(baseline, names[0], variant_name, benchmark.name, metric)
                data2 = _relabelled(candidate, names[1], variant_name, benchmark.name, metric)
                merged = BenchmarkData(
                    samples=data.samples + data2.samples, artifacts=data.artifacts + data2.artifacts
                )
                compared_samples += merged.samples
                if not data.samples and not data.artifacts:
                    continue
                analysis = lens.analyse(benchmark, names, merged, experiment)
                comparisons += analysis.comparisons
                notes += analysis.notes
                _merge_top_level(top_level, analysis.top_level)
    return with_sections(
        RunResult(
            run_id=candidate.run_id,
            status=candidate.status,
            created_at=candidate.created_at,
            experiment=candidate.experiment,
            machine=dict(candidate.machine),
            comparisons=tuple(comparisons),
            notes=tuple(notes),
            variant_info={k: dict(v) for k, v in candidate.variant_info.items()},
            differences=(f"runs {baseline.run_id} and {candidate.run_id}, measured apart",),
            top_level=top_level,
            cross_run=True,
            baseline_run_id=baseline.run_id,
            samples=tuple(compared_samples),
        )
    )


def _variant_of(experiment: Experiment, name: str) -> Variant:
    return next(v for v in experiment.variants if v.name == name)


def _relabelled(
    run: StoredRun, label: str, variant: str, benchmark: str, metric: Metric
) -> BenchmarkData:
    data = run.data_for(benchmark, metric)
    return BenchmarkData(
        samples=tuple(replace(s, variant=label) for s in data.samples if s.variant == variant),
        artifacts=tuple(replace(a, variant=label) for a in data.artifacts if a.variant == variant),
    )
