"""The small vocabularies every record uses: metrics (lenses by name), the scopes artifacts no
lens measured are filed under, verdicts, how a run ended, what kind a benchmark is, and where a
command's own time comes from."""

from __future__ import annotations

import enum
import re
from typing import ClassVar, Final


class Metric(str):
    """A lens's name: one way of measuring a benchmark.

    Not an enum: a lens is added by registering its descriptor (perflab/lenses/registry.py),
    without touching this module. Which metrics exist is the registry's answer. A lens spells
    its own name once, in `lenses/<lens>/metric.py`; the constants below are the public
    spelling of six built-in ones for code outside the lenses (the API, workflows), the same
    objects (tests/unit/cross/test_lens_metric_names.py). Instances are interned, so
    `metric is Metric.TIME` holds for a metric read back from the store."""

    __slots__ = ()
    _interned: ClassVar[dict[str, Metric]] = {}
    TIME: ClassVar[Metric]
    INSTRUCTIONS: ClassVar[Metric]
    COUNTERS: ClassVar[Metric]
    PROFILE: ClassVar[Metric]
    ASM: ClassVar[Metric]
    TORCH: ClassVar[Metric]

    def __new__(cls, name: str) -> Metric:
        known = cls._interned.get(name)
        if known is None:
            if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"{name!r} is not a metric name")
            known = super().__new__(cls, name)
            cls._interned[str(name)] = known
        return known

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"Metric({str.__str__(self)!r})"


Metric.TIME = Metric("time")
Metric.INSTRUCTIONS = Metric("instructions")
Metric.COUNTERS = Metric("counters")
Metric.PROFILE = Metric("profile")
Metric.ASM = Metric("asm")
Metric.TORCH = Metric("torch")


class ArtifactScope:
    """Where the store files artifacts that no lens measured: the run's output checks and the
    cluster's record of which node measured a cell.

    Not lenses: no lens is registered under these names. They are `Metric`s only because the
    store files every artifact under a metric name (its `metric` column), so these are read,
    filtered and exported like a lens's. The strings are stored: never rename them."""

    OUTPUT_CHECK: Final = Metric("check")
    CLUSTER: Final = Metric("cluster")


class Verdict(enum.StrEnum):
    """What a comparison concludes about the variant against its baseline."""

    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"
    # the variants' outputs (--check, --check-output) differ: they did not do the same work,
    # so their speeds do not compare
    INVALID = "invalid"


class RunStatus(enum.StrEnum):
    """Where a stored run stands: running, complete, incomplete or interrupted."""

    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"  # interrupted or a benchmark failed; what was measured is kept
    # stored as running, but the process writing it is gone (SIGKILL, full disk, power cut):
    # derived when the run is read, never written
    INTERRUPTED = "interrupted"


class BenchmarkKind(enum.StrEnum):
    """How a benchmark runs: a statement inside a worker, or a whole command."""

    STATEMENT = "statement"  # a Python statement run by a worker inside the variant's interpreter
    COMMAND = "command"  # a whole process, hyperfine style


class TimeReport(enum.StrEnum):
    """A command that reports its own time: the time lens samples what it says it measured
    instead of the process's wall time, and callgrind counts that region alone (its start-up
    and set-up are not the benchmark)."""

    GBENCH = "gbench"  # Google Benchmark's JSON report: real time per iteration
