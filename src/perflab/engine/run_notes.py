"""What the engine says about a run besides the budget: the variants' isolated caches, the
processes a benchmark left running, the fork servers a lens used, a failure."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from perflab.budget.costs import VALGRIND_SETUP_SLOWDOWN_RANGE
from perflab.engine.prepare.caches import (
    CACHE_VARIABLES,
    VALGRIND_ISA_ENV,
    IsolatedCaches,
    writes_no_bytecode,
)
from perflab.measure.fork_server import ForkServers
from perflab.measure.lens import Lens
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Experiment, Note, Severity
from perflab.records.run_facts import VariantInfo
from perflab.store import RunSink

# code that compiles into an on-disk cache a second variant could run (torch.compile,
# Triton, numba, JAX ...): where none is named, the caches note would only be noise
_CACHING_CODE = re.compile(r"torch|triton|inductor|numba|jax|tensorflow|cupy", re.IGNORECASE)


def caches_matter(experiment: Experiment) -> bool:
    """Whether the isolated caches are worth a note: two variants or more, and code that
    compiles into an on-disk cache, or a variant that sets a cache directory itself."""
    if len(experiment.variants) < 2:
        return False
    if any(name in v.env for v in experiment.variants for name in CACHE_VARIABLES):
        return True
    texts = [t for b in experiment.benchmarks for t in (b.stmt, b.setup, b.cmd) if t]
    texts += [t for v in experiment.variants for t in (v.cmd, v.build, v.python) if t]
    return any(_CACHING_CODE.search(text) for text in texts)


def note_isolated_caches(writer: RunSink, experiment: Experiment, caches: IsolatedCaches) -> None:
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
        writer.add_variant_info(
            variant.name, VariantInfo(isolated_caches=tuple(caches.isolated(variant)))
        )
    if not caches_matter(experiment):
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


def native_fill_note(
    benchmark: str,
    filled: Mapping[str, Sequence[str]],
    took_s: float,
    *,
    refilled: Sequence[str] = (),
    refill_s: float = 0.0,
    may_compile_again: Sequence[str] = (),
) -> Note:
    """What running the statements natively before valgrind did: which variants compiled into
    which JIT caches (`filled`, by variant), which ran again for the ISA valgrind shows
    (`refilled`), and where valgrind's processes may still compile (`may_compile_again`):
    only the others are promised that they load what was compiled."""
    caches = sorted({name for names in filled.values() for name in names})
    message = (
        f"{', '.join(filled)} compiled code into {', '.join(caches)}: each variant ran its "
        f"statement once natively first ({took_s:.1f} s)"
    )
    if refilled:
        setting = " ".join(f"{k}={v}" for k, v in VALGRIND_ISA_ENV.items())
        message += (
            f", and {', '.join(refilled)} again with {setting} into an inductor cache of "
            f"valgrind's processes' own ({refill_s:.1f} s): valgrind hides AVX-512, and "
            "torch.compile keys its kernels on the vector ISA it sees, not its graphs"
        )
    served = [name for name in filled if name not in may_compile_again]
    if served:
        whose = "" if len(served) == len(filled) else f" for {', '.join(served)}"
        message += f", so that processes under valgrind load what it compiled{whose}"
        message += " rather than compile it"
    if may_compile_again:
        message += (
            "; valgrind hides AVX-512, so a JIT keyed on the CPU's features may compile again "
            f"under valgrind, at valgrind's speed, for {', '.join(may_compile_again)}"
        )
    return Note(severity=Severity.INFO, message=message, benchmark=benchmark)


# a variant whose native set-up and statement took this many times the probe's (and
# UNPROBED_MIN_S more) set up other code than the probed baseline: the plan did not price it
UNPROBED_RATIO = 3.0
UNPROBED_MIN_S = 10.0


def unprobed_setup_note(
    benchmark: str,
    probed: tuple[str, float],
    native_s: Mapping[str, float],
    under_valgrind: Sequence[tuple[str, float]],
) -> Note | None:
    """A warning, before measuring, where a variant's set-up and statement ran natively (the
    JIT fill, `native_s` by variant) much longer than the probe of the baseline did (`probed`:
    its name and seconds): the plan priced every variant's processes under valgrind
    (`under_valgrind`: each lens and its planned seconds) on the
    baseline's set-up, and each of them runs this variant's again, several times slower."""
    name, probe_s = probed
    slow = {
        variant: took_s
        for variant, took_s in native_s.items()
        if took_s >= UNPROBED_RATIO * probe_s and took_s - probe_s >= UNPROBED_MIN_S
    }
    if not slow or not under_valgrind:
        return None
    low, high = VALGRIND_SETUP_SLOWDOWN_RANGE
    ran = ", ".join(f"{variant}'s took {took_s:.0f} s" for variant, took_s in slow.items())
    lenses = ", ".join(f"{lens} (planned {planned_s:.0f} s)" for lens, planned_s in under_valgrind)
    return Note(
        severity=Severity.WARNING,
        message=(
            f"the plan cannot hold what it did not probe: it timed {name}'s start-up, set-up "
            f"and statement ({probe_s:.1f} s natively), while, run natively before valgrind, "
            f"{ran} (compiling included). Each process of {lenses} runs that "
            f"set-up again under valgrind, {low}-{high}x slower than natively (a JIT's imports, "
            "tracing and graph loading), which the plan did not price: expect those lenses to "
            "take several times their share"
        ),
        benchmark=benchmark,
    )


def note_leftovers(writer: RunSink, lens: Lens, benchmark: str, stopped: int) -> None:
    """Processes a benchmark started and left running are stopped when its sample or worker
    ends (LiveProcess.stop_leftovers); say how many (`stopped`, the lens's own tally: see
    `proc.counting_stopped`), since the code measured did not do what the user expects of it."""
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


def note_forked(writer: RunSink, lens: Lens, benchmark: str, servers: ForkServers | None) -> None:
    """Adds a note that the lens forked its workers from fork servers, and what that means for the
    statistics."""
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


def failure_note(error: BenchmarkFailedError, benchmark: str, lens: Lens | None) -> Note:
    return Note(
        severity=Severity.WARNING,
        message=f"failed: {error.message}" + (f"\n{error.detail}" if error.detail else ""),
        hint=error.hint,
        benchmark=benchmark,
        variant=error.variant,
        metric=lens.metric if lens is not None else None,
    )
