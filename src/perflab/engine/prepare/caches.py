"""Isolated on-disk caches: each variant gets its own fresh directories for the caches that
change what runs, filled natively before a tool slows the code down.

A torch.compile'd variant run with another ATEN_CPU_CAPABILITY found the other variant's kernel
in the shared inductor cache and ran it (wrong results, a wrong speed). So, per experiment, each
variant's processes see their own empty directory for each variable below, unless the variant
sets the variable itself or the user shares them (--share-caches); they are removed at the end.
The same mix-up within one variant: valgrind hides AVX-512, so where the CPU has it, a lens's
processes that all run under valgrind get an inductor cache of their own
(`IsolatedCaches.for_valgrind`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from perflab.machine.parallel import (
    Cancelled,
    LiveSet,
    counting_cpus,
    other_runs_cpus,
    run_on_cpus,
)
from perflab.machine.proc import Completed, LaunchSpec, LiveProcess, ProcessRunner
from perflab.machine.scratch import make_private_folder
from perflab.measure.lens import LensContext
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerLaunch,
    interpreter_for,
    variant_environment,
)
from perflab.records.errors import PerflabError
from perflab.records.model import Benchmark, Variant

# the caches whose content decides which code runs
CACHE_VARIABLES = (
    "TORCHINDUCTOR_CACHE_DIR",  # torch.compile's generated kernels
    "TRITON_CACHE_DIR",  # Triton's compiled kernels
    "XDG_CACHE_HOME",  # many tools' caches (pip, numba's fallbacks, JIT caches ...)
    "NUMBA_CACHE_DIR",  # numba's cache=True functions
    "PYTHONPYCACHEPREFIX",  # __pycache__ of every imported module
)
# the caches a just-in-time compiler fills (every import fills the bytecode cache)
JIT_CACHE_VARIABLES = tuple(name for name in CACHE_VARIABLES if name != "PYTHONPYCACHEPREFIX")
# valgrind hides AVX-512 from the CPU's features (CPUID): torch inductor, which picks its vector
# ISA from them unless ATEN_CPU_CAPABILITY names one, generates AVX2 code under valgrind, under
# another cache key than its native AVX-512 code. A native fill with this set, into valgrind's
# own cache (IsolatedCaches.for_valgrind), compiles what valgrind's processes look up (checked:
# bench/results/jit_avx512_2026-11-29.md)
VALGRIND_ISA_ENV = {"ATEN_CPU_CAPABILITY": "avx2"}
# the ATEN_CPU_CAPABILITY values under which inductor picks the same ISA natively and under
# valgrind on an AVX-512 host
_ISAS_VALGRIND_SEES = frozenset({"avx2", "default"})


def writes_no_bytecode(variant: Variant) -> bool:
    """Whether the variant's processes write no `__pycache__` (PYTHONDONTWRITEBYTECODE set, in
    perflab's environment or the variant's). Then an empty PYTHONPYCACHEPREFIX would make every
    process compile every module it imports from source, every time (a large import takes about
    twice as long, in each worker and each fork server), and isolation buys nothing: a cache no
    variant writes cannot carry one variant's code to the other."""
    return bool(variant_environment(variant).get("PYTHONDONTWRITEBYTECODE"))


class IsolatedCaches:
    """Fresh cache directories per variant (a context manager: removed on exit)."""

    def __init__(self, *, enabled: bool = True, parent: str | None = None) -> None:
        self.enabled = enabled
        self._parent = parent
        self._root: Path | None = None

    def __enter__(self) -> IsolatedCaches:
        # entered again (the engine's probes, then its measurements): the same folders
        if self.enabled and self._root is None:
            self._root = make_private_folder("caches", self._parent)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def isolated(self, variant: Variant) -> tuple[str, ...]:
        """The variables isolated for this variant (those it does not set itself; not the
        bytecode cache where its processes write no bytecode, see `writes_no_bytecode`)."""
        if not self.enabled:
            return ()
        skipped = {"PYTHONPYCACHEPREFIX"} if writes_no_bytecode(variant) else set()
        return tuple(
            name for name in CACHE_VARIABLES if name not in variant.env and name not in skipped
        )

    def environment(self, variant: Variant) -> dict[str, str]:
        """The variant's own cache directories, created, by variable."""
        if self._root is None:
            return {}
        env: dict[str, str] = {}
        for name in self.isolated(variant):
            path = self._folder(variant, name)
            path.mkdir(parents=True, exist_ok=True)
            env[name] = str(path)
        return env

    def for_valgrind(
        self,
        variant: Variant,
        cpu_flags: frozenset[str],
        base_env: Mapping[str, str] | None = None,
    ) -> Variant:
        """The variant `applied`, as its processes under valgrind run it: where valgrind hides
        AVX-512, in an inductor cache of their own. Inductor's graph cache does not key on
        the vector ISA: a graph generated for AVX-512 natively and loaded for valgrind's AVX2
        computes half of its elements (bench/results/jit_avx512_2026-11-29.md). Unchanged
        where the variant sets the cache or its environment (`base_env` standing for perflab's)
        names an ISA valgrind sees too."""
        name = "TORCHINDUCTOR_CACHE_DIR"
        if self._root is None or not hides_avx512(cpu_flags):
            return variant
        if variant.env.get(name) != str(self._folder(variant, name)):
            return variant  # the variant's own cache, or not isolated
        isa = variant_environment(variant, base_env).get("ATEN_CPU_CAPABILITY")
        if isa in _ISAS_VALGRIND_SEES:
            return variant
        path = self._folder(variant, name).with_name(f"{name.lower()}-valgrind")
        path.mkdir(parents=True, exist_ok=True)
        return replace(variant, env={**variant.env, name: str(path)})

    def valgrind_fill(
        self,
        variant: Variant,
        filled: Sequence[str],
        cpu_flags: frozenset[str],
        base_env: Mapping[str, str] | None = None,
    ) -> Variant | None:
        """The variant to run natively a second time, for valgrind's processes
        (`for_valgrind_isa` of `for_valgrind`); None where they share the native cache."""
        own = self.for_valgrind(variant, cpu_flags, base_env)
        return None if own is variant else for_valgrind_isa(own, filled, cpu_flags, base_env)

    def _folder(self, variant: Variant, name: str) -> Path:
        assert self._root is not None
        # the same length for every variant: the environment's size moves the stack, and
        # variants must differ only in what the user asked for
        folder = hashlib.sha256(variant.name.encode()).hexdigest()[:12]
        return self._root / folder / name.lower()

    def filled(self, variant: Variant) -> tuple[str, ...]:
        """The JIT caches (JIT_CACHE_VARIABLES) of a variant with its caches `applied` that
        hold a file: its statement compiled code into them when it ran."""
        return tuple(
            name
            for name in JIT_CACHE_VARIABLES
            if name in variant.env and any(p.is_file() for p in Path(variant.env[name]).rglob("*"))
        )

    def applied(self, variant: Variant) -> Variant:
        """The variant with its cache directories in its environment (its own settings win)."""
        extra = self.environment(variant)
        if not extra:
            return variant
        env: Mapping[str, str] = {**extra, **variant.env}
        return replace(variant, env=env)


def hides_avx512(cpu_flags: frozenset[str]) -> bool:
    """Whether valgrind shows its processes fewer vector features than this host's CPU has
    (flags from /proc/cpuinfo, `machine.host.cpu_flags`): it hides AVX-512."""
    return "avx512f" in cpu_flags


def for_valgrind_isa(
    variant: Variant,
    filled: Sequence[str],
    cpu_flags: frozenset[str],
    base_env: Mapping[str, str] | None = None,
) -> Variant | None:
    """The variant to run natively a second time, with VALGRIND_ISA_ENV added, so that
    torch.compile's kernel for the ISA valgrind shows is in its cache; None where the first
    fill serves valgrind already: no AVX-512 to hide, no inductor code compiled (`filled`:
    the JIT caches the first fill filled), or an ISA the variant's environment (perflab's and
    its own, `base_env` standing for perflab's) names itself."""
    if not hides_avx512(cpu_flags) or "TORCHINDUCTOR_CACHE_DIR" not in filled:
        return None
    if any(name in variant_environment(variant, base_env) for name in VALGRIND_ISA_ENV):
        return None
    return replace(variant, env={**variant.env, **VALGRIND_ISA_ENV})


def may_compile_under_valgrind(
    variant: Variant,
    filled: Sequence[str],
    cpu_flags: frozenset[str],
    *,
    refilled: bool,
    base_env: Mapping[str, str] | None = None,
) -> bool:
    """Whether a JIT may compile again under valgrind although the variant's statement ran
    natively first: valgrind hides AVX-512, and a JIT keyed on the CPU's features (numba, or
    inductor where no fill was made for the ISA valgrind shows) looks up another key there."""
    if not hides_avx512(cpu_flags) or not filled:
        return False
    if any(name != "TORCHINDUCTOR_CACHE_DIR" for name in filled):
        return True
    isa = variant_environment(variant, base_env).get("ATEN_CPU_CAPABILITY")
    return not refilled and isa not in _ISAS_VALGRIND_SEES


@dataclass(frozen=True)
class NativeRuns:
    """What running the variants' statements natively once took: in all (side by side), and
    each variant's set-up and statement."""

    took_s: float
    by_variant: Mapping[str, float]


def compile_natively(
    benchmark: Benchmark, variants: Sequence[Variant], context: LensContext
) -> NativeRuns:
    """Run each variant's set-up and statement once, natively, in its own caches: a JIT then
    compiles there at native speed, and the processes a tool slows down (valgrind: 20-50x)
    load what it compiled rather than compile again. The variants run side by side on the CPUs
    no other perflab run measures on (nothing is timed: a statement that compiles nothing
    costs one set-up, not one per variant). Seconds taken; a failure is left to the lens,
    which reports it with its phase."""
    started = time.monotonic()
    workers: LiveSet[StatementWorker] = LiveSet(lambda worker: worker.kill())
    by_variant: dict[str, float] = {}

    def once(variant: Variant, cpu: int | None) -> None:
        launch = WorkerLaunch(
            interpreter_for(variant, context.default_python),
            cpu=cpu,
            timeout_s=context.experiment.settings.sample_timeout_s,
        )
        by_variant[variant.name] = run_natively(context.runner, benchmark, variant, launch, workers)

    # perflab's affinity leaves out the measuring CPU while it measures: add it back (as counting)
    allowed = set(os.sched_getaffinity(0)) | ({context.cpu} if context.cpu is not None else set())
    cpus = counting_cpus(allowed, other_runs_cpus(sorted(allowed)), context.cpu)
    run_on_cpus(list(variants), cpus, once, lambda _variant, _result: None, on_stop=workers.stop)
    return NativeRuns(time.monotonic() - started, by_variant)


# the cache of torch.compile's kernels: the one a second fill, for the ISA valgrind shows, fills
_INDUCTOR_CACHE = "TORCHINDUCTOR_CACHE_DIR"


@dataclass(frozen=True, kw_only=True)
class NativeFill:
    """What running the variants' statements natively before valgrind did (`fill_natively`):
    the first runs, those that ran before it included; the JIT caches each variant filled
    (`compiled`, by variant; empty: nothing compiled); the variants run again for the ISA
    valgrind shows, and how long that took; and where valgrind's processes may still compile."""

    runs: NativeRuns
    compiled: Mapping[str, tuple[str, ...]]
    refilled: tuple[str, ...] = ()
    refill_s: float = 0.0
    may_compile_again: tuple[str, ...] = ()


def fill_natively(
    benchmark: Benchmark,
    context: LensContext,
    caches: IsolatedCaches,
    cpu_flags: frozenset[str],
    *,
    isa_apart: bool,
    ran_before: NativeRuns | None = None,
) -> NativeFill | None:
    """Each variant of `context` whose JIT caches are empty runs its statement once natively
    (`compile_natively`): compiling under valgrind would take minutes of the budget. Those in
    `ran_before` ran so already, in their caches (the probe's baseline, `NativeRunsAhead`'s):
    only the rest run now, and the record counts both. Where a lens runs every variant under
    valgrind in caches of its own (`isa_apart`: `IsolatedCaches.for_valgrind`), a variant that
    compiled inductor code runs once more for the ISA valgrind shows. None where no variant
    ran natively."""
    before = ran_before or NativeRuns(0.0, {})
    variants = context.experiment.variants
    # a cache filled before this run's native runs: the variant's own, or a shared one
    cold = [v for v in variants if v.name not in before.by_variant and not caches.filled(v)]
    now = compile_natively(benchmark, cold, context) if cold else NativeRuns(0.0, {})
    runs = NativeRuns(before.took_s + now.took_s, {**before.by_variant, **now.by_variant})
    ran = [v for v in variants if v.name in runs.by_variant]
    if not ran:
        return None
    compiled = {v.name: names for v in ran if (names := caches.filled(v))}
    again = [
        for_isa
        for v in ran
        if isa_apart
        and v.name in compiled
        and (for_isa := caches.valgrind_fill(v, compiled[v.name], cpu_flags)) is not None
    ]
    # only the fill runs with the ISA valgrind shows: the variant measured keeps its environment
    refill_s = compile_natively(benchmark, again, context).took_s if again else 0.0
    refilled = {v.name for v in again if _INDUCTOR_CACHE in caches.filled(v)}
    doubtful = tuple(
        v.name
        for v in ran
        if v.name in compiled
        and may_compile_under_valgrind(v, compiled[v.name], cpu_flags, refilled=v.name in refilled)
    )
    return NativeFill(
        runs=runs,
        compiled=compiled,
        refilled=tuple(sorted(refilled)),
        refill_s=refill_s,
        may_compile_again=doubtful,
    )


def run_natively(
    runner: ProcessRunner,
    benchmark: Benchmark,
    variant: Variant,
    launch: WorkerLaunch,
    workers: LiveSet[StatementWorker],
) -> float:
    """The variant's set-up and statement run once, natively, in a fresh worker (`workers`
    holds it while it runs, for a stop to kill): the seconds it took. A failure is left to the
    lens, which meets it again and reports it with its phase."""
    began = time.monotonic()
    try:
        with StatementWorker.start(runner, benchmark, variant, launch) as worker:
            workers.add(worker)
            worker.sample(1)
            workers.discard(worker)
    except PerflabError:
        pass
    return time.monotonic() - began


class NativeRunsAhead:
    """The variants' native runs (`compile_natively`'s) started ahead, beside each benchmark's
    probe: the probe times the baseline natively on the measuring CPU, in its caches, while the
    CPU beside it is idle once the machine's speed is measured there. The other variants run
    there then, one after another, so that the benchmark finds them done (torch.add's A/B:
    0.9 s less before valgrind starts); those not started by then are left to
    `compile_natively`. Stopped, with whatever it runs, when the run ends."""

    def __init__(self, runner: ProcessRunner, default_python: str, timeout_s: float) -> None:
        self.runner = runner
        self.default_python = default_python
        self.timeout_s = timeout_s  # a native run's (--sample-timeout)
        self._by_benchmark: dict[str, _RunsAhead] = {}

    def beside_probe(
        self, benchmark: Benchmark, variants: Sequence[Variant]
    ) -> Callable[[int | None], None]:
        """What the probe of `benchmark` starts on the CPU beside it (None: unpinned): the
        native runs of `variants`, in a thread of their own."""
        ahead = _RunsAhead(self, benchmark, list(variants))
        self._by_benchmark[benchmark.name] = ahead
        return ahead.start

    def taken(self, benchmark: str) -> dict[str, float]:
        """The variants of `benchmark` that ran natively ahead, with the seconds each took:
        none starts after this call, and the one running is waited for."""
        ahead = self._by_benchmark.pop(benchmark, None)
        return {} if ahead is None else ahead.finish()

    def stop(self) -> None:
        """Every run ahead stopped (its worker killed), its thread ended."""
        for ahead in self._by_benchmark.values():
            ahead.stop()
        self._by_benchmark.clear()


class _SpawnsKept:
    """A runner that keeps the processes it spawned, so that a stop kills a worker still in its
    set-up too (a `LiveSet` holds it only once set up: a minutes-long set-up would hold the
    stop)."""

    def __init__(self, runner: ProcessRunner) -> None:
        self.runner = runner
        self.spawned: list[LiveProcess] = []
        self.lock = threading.Lock()
        self.stopped = False

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        return self.runner.run(spec, timeout_s=timeout_s, stdin_text=stdin_text)

    def which(self, tool: str) -> str | None:
        return self.runner.which(tool)

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> LiveProcess:
        process = self.runner.spawn(spec, pass_fds=pass_fds)
        with self.lock:
            self.spawned.append(process)
            stopped = self.stopped
        if stopped:
            process.kill()
        return process

    def kill_all(self) -> None:
        with self.lock:
            self.stopped = True
            spawned = list(self.spawned)
        for process in spawned:
            if process.poll() is None:
                process.kill()


class _RunsAhead:
    """One benchmark's variants run natively ahead, one after another in a thread."""

    def __init__(self, owner: NativeRunsAhead, benchmark: Benchmark, variants: list[Variant]):
        self.owner = owner
        self.benchmark = benchmark
        self.pending = variants
        self.by_variant: dict[str, float] = {}
        self.workers: LiveSet[StatementWorker] = LiveSet(lambda worker: worker.kill())
        self.runner = _SpawnsKept(owner.runner)
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def start(self, cpu: int | None) -> None:
        self.thread = threading.Thread(
            target=self._run, args=(cpu,), name="perflab-native-ahead", daemon=True
        )
        self.thread.start()

    def _run(self, cpu: int | None) -> None:
        while True:
            with self.lock:
                if not self.pending:
                    return
                variant = self.pending.pop(0)
            launch = WorkerLaunch(
                interpreter_for(variant, self.owner.default_python),
                cpu=cpu,
                timeout_s=self.owner.timeout_s,
            )
            try:
                took_s = run_natively(self.runner, self.benchmark, variant, launch, self.workers)
            except Cancelled:
                return
            with self.lock:
                self.by_variant[variant.name] = took_s

    def finish(self) -> dict[str, float]:
        with self.lock:
            self.pending.clear()
        if self.thread is not None:
            self.thread.join()
        return dict(self.by_variant)

    def stop(self) -> None:
        with self.lock:
            self.pending.clear()
        self.workers.stop()
        self.runner.kill_all()
        if self.thread is not None:
            self.thread.join()
