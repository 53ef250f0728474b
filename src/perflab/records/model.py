"""The records perflab's pipeline passes along: plan -> run -> store -> analyse -> render.

All records are frozen. Raw samples are the truth; statistics are derived from them on demand.
"""

from __future__ import annotations

import enum
import shlex
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from perflab.compat import moved
from perflab.records.document import TimeSeries
from perflab.records.kinds import BenchmarkKind, Metric, TimeReport, Verdict
from perflab.records.settings import Settings


def __getattr__(name: str) -> object:
    return moved(__name__, name)  # an old import path (perflab.compat)


@dataclass(frozen=True)
class Variant:
    """A named way to run the same benchmark. The first variant of an experiment is the baseline."""

    name: str
    python: str | None = None  # interpreter for statement benchmarks; None: the one running perflab
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    cmd: str | None = None  # overrides the benchmark's command for this variant
    build: str | None = None  # shell command run once in cwd before measuring
    # a ref of the experiment's repository, checked out (and built) in its own worktree; cwd=
    # and a relative python= are then inside that checkout
    git: str | None = None
    apply: tuple[str, ...] = ()  # changes applied on top of git=: commits or patch files

    def describe(self) -> str:
        words = [self.name]
        for spec in VARIANT_FIELDS:
            words += spec.words(getattr(self, spec.name))
        return " ".join(words)

    def at(self, params: Mapping[str, str]) -> Variant:
        """This variant at one parameter point: `$name`/`${name}` substituted in every field
        (others, such as `$HOME`, are left alone)."""
        if not params:
            return self

        def fill(text: str) -> str:
            return string.Template(text).safe_substitute(params)

        filled = {spec.name: spec.filled(getattr(self, spec.name), fill) for spec in VARIANT_FIELDS}
        return Variant(name=self.name, **filled)

    def to_json(self) -> dict[str, Any]:
        """Every field but the name, in the order of the dataclass."""
        return {
            f.name: VARIANT_FIELD_BY_NAME[f.name].to_json(getattr(self, f.name))
            for f in fields(self)
            if f.name != "name"
        }


class VariantFieldKind(enum.Enum):
    """How a `Variant` field is written in a spec (`NAME key=value ...`)."""

    TEXT = "text"  # key=VALUE
    TEXTS = "texts"  # key=A,B: a tuple, comma-separated
    TABLE = "table"  # key.NAME=VALUE, one word per entry: a mapping


def short_commit(ref: str) -> str:
    """A full commit id as git shows it short; any other ref as it is."""
    if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref):
        return ref[:10]
    return ref


def _file_name(change: str) -> str:
    """A patch file by its name (a commit id has none)."""
    return change.rsplit("/", 1)[-1]


def _as_is(text: str) -> str:
    return text


@dataclass(frozen=True)
class VariantField:
    """Everything perflab knows about one `Variant` field besides its name. A spec's words,
    `describe`, `at`, the JSON export and the differences between variants (host.py, the
    same-work note) are derived from these, so a field is added here and in the dataclass."""

    name: str
    kind: VariantFieldKind
    # what a difference in it asks of the benchmark (the same-work note); a table's names
    # `{key}`, the entry that differs
    question: str
    short: Callable[[str], str] = _as_is  # one value as the reports show it
    prepares: bool = False  # set: the variant is checked out or built before it runs

    def words(self, value: Any) -> list[str]:
        """The value as a spec writes it; [] when unset."""
        if self.kind is VariantFieldKind.TABLE:
            return [f"{self.name}.{k}={v}" for k, v in sorted(value.items())]
        if self.kind is VariantFieldKind.TEXTS:
            return [f"{self.name}=" + ",".join(value)] if value else []
        return [f"{self.name}={value}"] if value else []

    def from_text(self, text: str) -> Any:
        """A spec word's value (`key=TEXT`) as the field holds it."""
        if self.kind is VariantFieldKind.TEXTS:
            return tuple(v for v in text.split(",") if v)
        return text

    def filled(self, value: Any, fill: Callable[[str], str]) -> Any:
        """The value with `fill` applied to every text in it."""
        if self.kind is VariantFieldKind.TABLE:
            return {key: fill(text) for key, text in value.items()}
        if self.kind is VariantFieldKind.TEXTS:
            return tuple(fill(text) for text in value)
        return None if value is None else fill(value)

    def to_json(self, value: Any) -> Any:
        if self.kind is VariantFieldKind.TABLE:
            return dict(value)
        if self.kind is VariantFieldKind.TEXTS:
            return list(value)
        return value

    def joined(self, value: Any) -> str | None:
        """A text or texts field's value as one text, None when unset."""
        if self.kind is VariantFieldKind.TEXTS:
            return ",".join(value) or None
        return value if value is None else str(value)

    def shown(self, value: Any) -> str | None:
        """A text or texts field's value as the reports show it, None when unset."""
        if self.kind is VariantFieldKind.TEXTS:
            return ",".join(self.short(v) for v in value) or None
        return None if value is None else self.short(value)


_CODE_QUESTION = "does the change touch the code the benchmark runs?"


# in the order a spec and `describe` write them
VARIANT_FIELDS: tuple[VariantField, ...] = (
    VariantField("python", VariantFieldKind.TEXT, "are the two interpreters the same build?"),
    VariantField("env", VariantFieldKind.TABLE, "is `{key}` read by the benchmark?"),
    VariantField("git", VariantFieldKind.TEXT, _CODE_QUESTION, short=short_commit, prepares=True),
    VariantField(
        "cwd", VariantFieldKind.TEXT, "does the benchmark run anything from its working directory?"
    ),
    VariantField("cmd", VariantFieldKind.TEXT, "do the two commands run the same program?"),
    VariantField(
        "build",
        VariantFieldKind.TEXT,
        "does the build step change what the benchmark runs?",
        prepares=True,
    ),
    VariantField("apply", VariantFieldKind.TEXTS, _CODE_QUESTION, short=_file_name, prepares=True),
)


# each variant field by its key
VARIANT_FIELD_BY_NAME = {spec.name: spec for spec in VARIANT_FIELDS}


@dataclass(frozen=True)
class Benchmark:
    """One benchmark at one parameter point: either a statement (with setup) or a command."""

    name: str
    stmt: str | None = None
    setup: str = "pass"
    cmd: str | None = None
    params: Mapping[str, str] = field(default_factory=dict)
    # shell words after the program, a variant's cmd= included: a suite's program runs one of
    # its benchmarks by arguments (--benchmark_filter=...), and cmd= names each variant's program
    cmd_args: str = ""
    reports: TimeReport | None = None  # the command reports its own time (the lenses read it)
    # the lenses that measure it, of the run's; None: all of them (a suite's benchmark whose
    # figure one lens alone gives, as asv's peakmem_ the rss lens's)
    measured_by: tuple[Metric, ...] | None = None
    # `cmd` is the default interpreter: a variant's python= replaces it, as its cmd= would
    # (a suite's command that runs code in each variant's interpreter)
    cmd_is_python: bool = False

    def __post_init__(self) -> None:
        if self.reports is not None:  # stored runs give the text
            object.__setattr__(self, "reports", TimeReport(self.reports))
        if self.measured_by is not None:  # stored runs give a list of texts
            object.__setattr__(self, "measured_by", tuple(Metric(m) for m in self.measured_by))

    def lenses_among(self, metrics: tuple[Metric, ...]) -> tuple[Metric, ...]:
        """The run's lenses (`metrics`) that measure this benchmark, in the run's order."""
        if self.measured_by is None:
            return metrics
        return tuple(m for m in metrics if m in self.measured_by)

    @property
    def kind(self) -> BenchmarkKind:
        return BenchmarkKind.STATEMENT if self.stmt is not None else BenchmarkKind.COMMAND

    def command_for(self, variant: Variant) -> str:
        interpreter = shlex.quote(variant.python) if self.cmd_is_python and variant.python else None
        command = variant.cmd or interpreter or self.cmd
        if command is None:
            raise ValueError(f"benchmark {self.name!r} has no command")
        return f"{command} {self.cmd_args}" if self.cmd_args else command


@dataclass(frozen=True)
class InteractionSpec:
    """A change measured on two bases: its effect on `base` over its effect on `reference_base`
    (variant names: the bases, and the change applied on each)."""

    change: str
    base: str
    reference_base: str
    on_base: str
    on_reference: str


@dataclass(frozen=True)
class Experiment:
    """What a run measures: the benchmarks, the variants, the settings, and which variants are
    compared with which."""

    benchmarks: tuple[Benchmark, ...]
    variants: tuple[Variant, ...]
    settings: Settings = field(default_factory=Settings)
    # (baseline, variant) name pairs to compare; empty: every variant against the first
    pairs: tuple[tuple[str, str], ...] = ()
    stack: tuple[str, ...] = ()  # a stack's variants in order: base, step 1, ... (perflab stack)
    interactions: tuple[InteractionSpec, ...] = ()  # perflab matrix
    repository: str | None = None  # the git repository git= refs belong to (its top level)
    plan_notes: tuple[str, ...] = ()  # what planning chose, said before measuring (a stack's line)

    @property
    def baseline(self) -> Variant:
        return self.variants[0]

    @property
    def comparison_pairs(self) -> tuple[tuple[str, str], ...]:
        if self.pairs:
            return self.pairs
        first = self.variants[0].name
        return tuple((first, v.name) for v in self.variants[1:])


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
    # Scheduler accounting of the measuring process during the sample (None: not available):
    # time it waited runnable while another process had the CPU, its CPU time, and how often
    # it was switched out involuntarily (stats.preemption derives the time lost from them).
    run_queue_ns: int | None = None
    cpu_ns: int | None = None
    involuntary_switches: int | None = None

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


@dataclass(frozen=True)
class BenchmarkData:
    """Everything one lens stored for one benchmark, all variants."""

    samples: tuple[Sample, ...] = ()
    artifacts: tuple[Artifact, ...] = ()

    def samples_of(self, variant: str, name: str | None = None) -> list[Sample]:
        return [
            s for s in self.samples if s.variant == variant and (name is None or s.name == name)
        ]

    def artifacts_of(self, variant: str, kind: str | None = None) -> list[Artifact]:
        return [
            a for a in self.artifacts if a.variant == variant and (kind is None or a.kind == kind)
        ]


def merge_info(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """Variant facts accumulate: nested tables (e.g. per benchmark) merge, values replace."""
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_info(merged[key], value)
        else:
            merged[key] = value
    return merged


class Details(Protocol):
    """Lens-specific part of a comparison; its JSON fields are merged into the comparison's."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Withhold:
    """A lens's reason to claim nothing where its interval decides: it knows of something the
    interval cannot see (a few stray events deciding the ratio, other processes' turns in a
    profile, a measure that is not the memory that changed). `reason` is the stable name the
    JSON's `withheld_reason` gives; `differences_only`: `faster` and `slower` are withheld and
    `equivalent` stands (the blind spot can fake a difference, not hide one). The rule that
    applies it is `stats.comparison.withhold_verdict`."""

    reason: str
    differences_only: bool = False


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
    # the output check that made the verdict `invalid`: the expression and where the values
    # first differ (`OutputDifference.to_json()` and "expression")
    output_check: Mapping[str, Any] | None = None
    # the verdict its interval gave, where the lens withheld it (`verdict` is then
    # `inconclusive`, and `withheld` says why: stats.comparison.withhold_verdict) or an output
    # check made it `invalid` (stats.comparison.invalidate). The JSON gives it, beside
    # `withheld_reason`, only when withheld: an invalid verdict's reason is `output_check`
    interval_verdict: Verdict | None = None
    withheld: Withhold | None = None

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
        if self.output_check is not None:
            out["output_check"] = dict(self.output_check)
        if self.withheld is not None and self.interval_verdict is not None:
            out["interval_verdict"] = str(self.interval_verdict)
            out["withheld_reason"] = self.withheld.reason
        return out


@dataclass(frozen=True)
class Measurement:
    """One variant's own figure for one benchmark and metric, without a baseline: what a run of
    a single variant answers (and what the hyperfine-style exports hold for every variant).
    `value` is the interval's centre, per iteration in `unit`, by `estimator` with the
    `preempted` policy applied (perflab's estimate); `times` and the plain figures (mean to
    max) are the measured samples' per-iteration values, as measured (warm-up left out)."""

    benchmark: str
    metric: Metric
    variant: str
    value: float
    ci_low: float
    ci_high: float
    unit: str
    n_groups: int
    group_name: str
    mean: float
    stddev: float
    median: float
    min: float
    max: float
    cpu_mean: float | None = None  # user + system time per iteration, in `unit`
    # what `value` and its interval are: the estimator over the groups (the same words as a
    # time comparison's `value_estimator`) and the --preempted policy it was applied after
    estimator: str = "mean of group medians"
    preempted: str = "keep"
    times: tuple[float, ...] = field(default=(), compare=False)
    # the samples over the run, for the HTML report's plot (not the JSON)
    series: TimeSeries | None = field(default=None, compare=False)
    # each of `times`' runs' exit status (commands: 0 but where --ignore-failure measured a
    # failing run; () where not known)
    exit_codes: tuple[int, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "metric": str(self.metric),
            "variant": self.variant,
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "unit": self.unit,
            "n_groups": self.n_groups,
            "group": self.group_name,
            "n_samples": len(self.times),
            "mean": self.mean,
            "stddev": self.stddev,
            "median": self.median,
            "min": self.min,
            "max": self.max,
            "cpu_mean": self.cpu_mean,
            "value_estimator": self.estimator,
            "value_preempted": self.preempted,
        }


class Severity(enum.StrEnum):
    """How much a note matters to trusting the numbers."""

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
