"""The records perflab's pipeline passes along: plan -> run -> store -> analyse -> render.

All records are frozen. Raw samples are the truth; statistics are derived from them on demand.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Metric(enum.StrEnum):
    """A lens: one way of measuring a benchmark."""

    TIME = "time"
    INSTRUCTIONS = "instructions"
    COUNTERS = "counters"
    PROFILE = "profile"
    ASM = "asm"
    TORCH = "torch"


class Verdict(enum.StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"  # interrupted or a benchmark failed; what was measured is kept


class BenchmarkKind(enum.StrEnum):
    STATEMENT = "statement"  # a Python statement run by a worker inside the variant's interpreter
    COMMAND = "command"  # a whole process, hyperfine style


@dataclass(frozen=True)
class Variant:
    """A named way to run the same benchmark. The first variant of an experiment is the baseline."""

    name: str
    python: str | None = None  # interpreter for statement benchmarks; None: the one running perflab
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    cmd: str | None = None  # overrides the benchmark's command for this variant
    build: str | None = None  # shell command run once in cwd before measuring

    def describe(self) -> str:
        words = [self.name]
        if self.python:
            words.append(f"python={self.python}")
        words += [f"env.{k}={v}" for k, v in sorted(self.env.items())]
        for key in ("cwd", "cmd", "build"):
            value = getattr(self, key)
            if value:
                words.append(f"{key}={value}")
        return " ".join(words)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark at one parameter point: either a statement (with setup) or a command."""

    name: str
    stmt: str | None = None
    setup: str = "pass"
    cmd: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> BenchmarkKind:
        return BenchmarkKind.STATEMENT if self.stmt is not None else BenchmarkKind.COMMAND

    def command_for(self, variant: Variant) -> str:
        command = variant.cmd or self.cmd
        if command is None:
            raise ValueError(f"benchmark {self.name!r} has no command")
        return command


@dataclass(frozen=True)
class Settings:
    """How to measure. Defaults are chosen for a noisy 2-core VM (see docs/statistics.md)."""

    metrics: tuple[Metric, ...] = (Metric.TIME,)
    budget_s: float = 20.0  # wall-clock budget for the time lens, per benchmark
    target_precision: float = (
        0.005  # stop early once the 95% CI half-width is below this (relative)
    )
    equivalence_band: float = 0.01  # |ratio - 1| inside this band counts as equivalent
    confidence: float = 0.95
    pin: bool = True
    cpu: int | None = None  # None: the last online CPU
    min_generations: int = 6  # fresh worker processes per variant: per-process effects are sampled
    sample_target_ms: float = 10.0  # one statement sample: long for the clock, short to interleave
    warmup_blocks: int = 2  # blocks discarded at the start of every generation
    sample_timeout_s: float = 60.0
    # Within a generation all variants' workers share one random layout (ASLR off, one random
    # environment padding and hash seed); across generations it changes. Per-process effects are
    # thus sampled, but no longer differ between the variants being compared.
    paired_layout: bool = True
    seed: int | None = None
    # lens options
    events: tuple[str, ...] = ()
    region: str | None = None
    cache_sim: bool = False
    symbols: tuple[str, ...] = ()
    layers: tuple[tuple[str, str], ...] = ()  # (layer name, regex on function or object name)


@dataclass(frozen=True)
class Experiment:
    benchmarks: tuple[Benchmark, ...]
    variants: tuple[Variant, ...]
    settings: Settings = field(default_factory=Settings)

    @property
    def baseline(self) -> Variant:
        return self.variants[0]


@dataclass(frozen=True)
class Sample:
    """One raw measurement, as stored. `value` is in the unit named by `name` (e.g. wall_ns)
    for `loops` iterations of the benchmark."""

    benchmark: str
    variant: str
    metric: Metric
    name: str  # what was measured: "wall_ns", an event name, "instructions" ...
    value: float
    loops: int = 1
    generation: int = 0  # which worker process (statement) or batch (command)
    block: int = 0  # interleaving block: one sample of each variant, in random order
    position: int = 0  # place inside the block
    cpu: int | None = None
    at_ns: int = 0  # monotonic time since the run started
    warmup: bool = False

    @property
    def per_iteration(self) -> float:
        return self.value / self.loops


@dataclass(frozen=True)
class Artifact:
    """A file-like result of a lens (a callgrind profile, folded stacks, a disassembly ...)."""

    benchmark: str
    variant: str
    metric: Metric
    kind: str
    content: str
    generation: int = 0


class Details(Protocol):
    """Lens-specific part of a comparison; its JSON fields are merged into the comparison's."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Comparison:
    """variant / baseline for one benchmark and metric (and event), with a CI and a verdict."""

    benchmark: str
    metric: Metric
    baseline: str
    variant: str
    ratio: float
    ci_low: float
    ci_high: float
    verdict: Verdict
    baseline_value: float  # per iteration, in `unit`
    variant_value: float
    unit: str
    event: str | None = None
    details: Details | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "metric": str(self.metric),
            "baseline": self.baseline,
            "variant": self.variant,
            "ratio": self.ratio,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "verdict": str(self.verdict),
            "unit": self.unit,
            "baseline_value": self.baseline_value,
            "variant_value": self.variant_value,
        }
        if self.event is not None:
            out["event"] = self.event
        if self.details is not None:
            out.update(self.details.to_json())
        return out


class Severity(enum.StrEnum):
    INFO = "info"
    WARNING = "warning"


@dataclass(frozen=True)
class Note:
    """What the reader must know to trust the numbers: noise, a missing event, an ISA caveat."""

    severity: Severity
    message: str
    hint: str | None = None
    benchmark: str | None = None
    variant: str | None = None
    metric: Metric | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"severity": str(self.severity), "message": self.message}
        for key in ("hint", "benchmark", "variant"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.metric is not None:
            out["metric"] = str(self.metric)
        return out
