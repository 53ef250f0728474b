"""How the variants are counted under callgrind (pure). It holds the counter's options
(`CountOptions`), the environment fixed for determinism, the loop counts of a statement's counted
loops, when a process's repeats have settled, and one variant's measurement in progress
(`CountRun`). valgrind's and vgdb's command lines are tool_drivers/valgrind.py's.

The counting itself is `count.CallgrindCounter`'s (see its docstring); this module, `dumps`,
`switching`, `workers` and `store` are its parts.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perflab.machine.parallel import other_runs_cpus
from perflab.measure.lens import LensContext
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Sample, Variant
from perflab.records.settings import Settings

# loops of the first calibration pair: few, since a loop under callgrind runs far slower than
# native; refining_loops adds a longer pair when this one chose many loops
CALIBRATION_LOOPS = 10
_TARGET_INSTRUCTIONS = 20_000_000  # per measured loop: ~1 s under callgrind
# loops of one counted loop at most, also for a statement that counts as nothing: keeps a near-empty
# statement's run short
_MAX_LOOPS = 10_000
# repeats of one process within this (relative) have settled: above the handshake's residue at
# the calibrated loop count (even on a loaded machine), below a change of the allocator's level
_SETTLED = 1e-3
MAX_SETTLING_REPEATS = 2  # counted pairs added at most while waiting for them to settle
# statements: worker processes per variant at most, the last added only when a variant's first
# processes counted at different levels (count.CallgrindCounter.count)
MAX_PROCESSES = 3


@dataclass(frozen=True)
class CountOptions:
    """How the variants of a benchmark are counted under callgrind: the counter's one
    parameter object. `metric`, `cache_sim`, `region` and `analysis_cache` are what the
    counting lens asks for: each lens sets them from itself and its own settings before it
    counts, since measure/ reads no lens's option by name and files nothing under a lens's
    metric of its own accord (so `metric` has no default)."""

    # the counting lens's metric: its samples, artifacts, notes and progress are filed under
    # it, and what each variant was counted with is its variant info under this key
    metric: Metric
    # how the progress line names the counting ("callgrind: a, b")
    progress_label: str = "callgrind"

    repeats: int = 2  # counted pairs per worker process (a command: processes)
    # worker processes per variant for statements, each under its own valgrind: the unit of
    # the interval, since a process can settle at a level of its own
    processes: int = 2
    loops: int | None = None  # per counted loop; None: calibrated
    inline_frames: bool | None = None  # None: when the command's executable has debug info
    # the variants' valgrind processes side by side, one per free CPU (counts do not depend
    # on the machine being quiet); False: one after another on the measuring CPU
    parallel: bool = True
    allowed_cpus: Callable[[], Iterable[int]] = lambda: os.sched_getaffinity(0)
    # CPUs other perflab runs on this machine measure on (their advisory locks): never used
    other_runs_cpus: Callable[[Sequence[int]], Iterable[int]] = lambda cpus: other_runs_cpus(cpus)
    # statements: the worker switches callgrind with client requests where every variant
    # can; False, or why not: always through vgdb from the parent
    client_requests: bool | str = True
    # statements: a variant's processes as children of fork servers (two where one starts
    # quickly, budget/costs.py's fork_servers_for; each importing the set-up's modules under
    # callgrind once) instead of fresh processes; None: when fresh ones would not all fit on the
    # CPUs at once (each pays the import then, in turn)
    fork: bool | None = None
    # a variant whose code valgrind cannot execute (SIGILL at an AVX-512 instruction) is
    # stored as such and the others counted, so that the lenses after this one still
    # measure; False: the error is raised (for a caller that catches it itself)
    note_unexecutable: bool = True
    # statements switched with client requests and no cache simulation: instrumentation on
    # once per worker, collection toggled around each counted loop (no translations thrown
    # away per loop); False: instrumentation switched around each loop, so that a cache
    # simulation starts cold in every loop
    toggle_collection: bool = True
    # simulated D1/LL misses and branch mispredictions, with the fixed `CACHE_GEOMETRY`
    cache_sim: bool = False
    # commands: count only inside this function (callgrind's --toggle-collect); None: all
    region: str | None = None
    # inline frames read from and kept in the analysis cache (by build-id)
    analysis_cache: bool = True


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
    statement leaves behind has settled (glibc's malloc can do less work per call in a
    process's first repeat than in every later one)."""
    return len(counts) >= 2 and abs(counts[-1] - counts[-2]) <= _SETTLED * abs(counts[-1])


def refining_loops(loops: int) -> int | None:
    """The length of a second calibration pair, when the first (10 loops) chose many loops.

    Each counted loop switched through vgdb carries a residue of up to a few thousand
    instructions (its ptrace interrupting the worker's read; more on a loaded machine): over 10
    loops of a ~10,000 instruction statement that is a few percent, enough to cross a 1-2-5
    step, so two runs of one statement could count different loop lengths. A tenth of the
    chosen loops (at most 2 million instructions) makes it ten times smaller."""
    refine = loops // 10
    return refine if refine > CALIBRATION_LOOPS else None


def why_not(variant: str, reasons: Mapping[str, str]) -> str:
    """Why `variant` is not switched with client requests: its own reason, else the others'."""
    return reasons.get(variant) or "; ".join(f"{name}: {why}" for name, why in reasons.items())


def worker_timeout_s(settings: Settings) -> float:
    """A worker's (or fork server's) longest wait for a reply under callgrind."""
    return max(settings.sample_timeout_s * 10, 600.0)


@dataclass
class CountedWith:
    """What one variant was counted with, learnt as its count goes (mutable, private): the
    environment fixed up front, how its processes were started and switched, and what each
    process counted with. Stored as the variant's info under the counting lens's metric
    (`to_json`); `collection_toggled` is read back as the processes are stored. None (or
    empty): not learnt, and not stored."""

    python_hash_seed: str | None = None
    aslr: str | None = None
    environment_bytes: int | None = None
    cache_geometry: dict[str, str] | None = None
    why_not_client_requests: str | None = None
    forked: bool | None = None  # a statement's processes are children of fork servers
    import_under_callgrind_s: float | None = None  # a fork server's import of the set-up (the last)
    server_threads: int | None = None  # the fork server's OS threads after its imports
    server_per_process: bool | None = None  # each process had a server of its own
    servers: int | None = None  # fork servers its processes were children of
    inline_frames: list[str] | None = None  # the objects whose inline frames were read
    loops_by_process: dict[str, int] = field(default_factory=dict)
    loops: int | None = None  # the first process's
    repeats: int | None = None
    processes: int | None = None
    switched_by: str | None = None
    # every process of the variant toggled collection around its loops (else why not)
    collection_toggled: bool | None = None
    why_not_collection_toggled: str | None = None
    settling_repeats: dict[str, int] = field(default_factory=dict)  # by process
    region: str | None = None  # a command's --region function
    cpus: list[int | None] = field(default_factory=list)  # its jobs', as they ended

    def to_json(self) -> dict[str, Any]:
        """The stored form: the keys in the order they are learnt (a stored variant info
        keeps its keys in the order they first came), `cpu` the first job's."""
        stored: dict[str, Any] = {}
        for name, value in vars(self).items():
            if value is not None and value != {} and value != []:
                stored[_STORED_NAMES.get(name, name)] = value
        if self.cpus:
            stored["cpu"] = self.cpus[0]
        return stored


_STORED_NAMES = {"python_hash_seed": "PYTHONHASHSEED"}


@dataclass
class CountRun:
    """One variant's measurement in progress (mutable, private)."""

    benchmark: Benchmark
    variant: Variant
    context: LensContext
    env: dict[str, str]
    metric: Metric  # its samples' and artifacts' (CountOptions.metric)
    counted_with: CountedWith = field(default_factory=CountedWith)

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
            metric=self.metric,
            name=name,
            value=value,
            loops=loops,
            generation=generation,
            block=block,
            cpu=cpu,
            warmup=warmup,
        )
