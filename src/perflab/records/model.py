"""The records perflab's pipeline passes along: plan -> run -> store -> analyse -> render.

All records are frozen. Raw samples are the truth; statistics are derived from them on demand.
"""

from __future__ import annotations

import enum
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Protocol

from perflab.records.document import TimeSeries


class Metric(str):
    """A lens's name: one way of measuring a benchmark.

    Not an enum: a lens is added by registering its descriptor (perflab/lenses/registry.py),
    without touching this module. Which metrics exist is the registry's answer; the constants
    below name the built-in ones for code that refers to them. Instances are interned, so
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


class Verdict(enum.StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"
    # the variants' outputs (--check, --check-output) differ: they did not do the same work,
    # so their speeds do not compare
    INVALID = "invalid"


class RunStatus(enum.StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    INCOMPLETE = "incomplete"  # interrupted or a benchmark failed; what was measured is kept
    # stored as running, but the process writing it is gone (SIGKILL, full disk, power cut):
    # derived when the run is read, never written
    INTERRUPTED = "interrupted"


class BenchmarkKind(enum.StrEnum):
    STATEMENT = "statement"  # a Python statement run by a worker inside the variant's interpreter
    COMMAND = "command"  # a whole process, hyperfine style


class TimeReport(enum.StrEnum):
    """A command that reports its own time: the time lens samples what it says it measured
    instead of the process's wall time, and callgrind counts that region alone (its start-up
    and set-up are not the benchmark)."""

    GBENCH = "gbench"  # Google Benchmark's JSON report: real time per iteration


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
            f.name: _VARIANT_FIELD[f.name].to_json(getattr(self, f.name))
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
_VARIANT_FIELD = {spec.name: spec for spec in VARIANT_FIELDS}


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

    def __post_init__(self) -> None:
        if self.reports is not None:  # stored runs give the text
            object.__setattr__(self, "reports", TimeReport(self.reports))

    @property
    def kind(self) -> BenchmarkKind:
        return BenchmarkKind.STATEMENT if self.stmt is not None else BenchmarkKind.COMMAND

    def command_for(self, variant: Variant) -> str:
        command = variant.cmd or self.cmd
        if command is None:
            raise ValueError(f"benchmark {self.name!r} has no command")
        return f"{command} {self.cmd_args}" if self.cmd_args else command


class SettingKind(enum.StrEnum):
    """What a setting's value is: decides its TOML type check, CLI parsing and normalisation."""

    NUMBER = "number"
    WHOLE = "whole number"
    OPTIONAL_WHOLE = "whole number or nothing"
    BOOLEAN = "boolean"
    TEXT = "string"
    TEXTS = "list of strings"
    METRICS = "list of metrics"
    LAYERS = "table of NAME = REGEX"


@dataclass(frozen=True)
class SettingSpec:
    """Everything perflab knows about one setting: a core `Settings` field, or a lens's option
    (declared by its descriptor, `perflab.lenses.descriptor.LensOption`). The CLI options, the
    experiment-file keys and their type checks, the API's keyword arguments and the JSON
    encoding are derived from these, so a setting is added in one place."""

    kind: SettingKind
    help: str  # the CLI's help text
    key: str | None  # experiment-file key (None: internal, not settable by users)
    flags: tuple[str, ...] = ()  # CLI options; () when the CLI has none
    unit: str | None = None
    lens: Metric | None = None  # the lens that reads it (None: every lens / the time lens)
    repeat: bool = False  # TEXTS/LAYERS/METRICS on the CLI: the option is repeatable
    metavar: str | None = None
    check: Callable[[Any], str | None] | None = None  # a problem with a value, in words
    # a switch that takes an optional value (--check-output [FILE]): the TEXT setting the value
    # goes to; the switch is on either way
    value_setting: str | None = None

    @property
    def flag(self) -> str | None:
        """The long CLI option, as error messages name it."""
        return self.flags[-1] if self.flags else None


_SPEC = "perflab"


def _setting(default: Any, spec: SettingSpec) -> Any:
    return field(default=default, metadata={_SPEC: spec})


def _positive(what: str) -> Callable[[Any], str | None]:
    return lambda value: None if value > 0 else what


# the longest duration a setting may give: beyond it timers overflow (1e10 s ended in an
# OverflowError) and a run would never end anyway
MAX_SECONDS = 7 * 24 * 3600.0


def _duration(name: str, unit: str = "s") -> Callable[[Any], str | None]:
    most = MAX_SECONDS * (1000 if unit == "ms" else 1)

    def check(value: Any) -> str | None:
        if not value > 0:
            return f"{name} must be positive ({'milliseconds' if unit == 'ms' else 'seconds'})"
        if value > most:
            return f"{name} must be at most {most:g} {unit} (a week), not {value:g}"
        return None

    return check


# a warm-up past this settles nothing a few hundred samples do not, and is days of work: at
# the default 10 ms sample it is 100 s per worker generation of each variant before one sample
# is kept (a statement's six generations, two variants: 20 min); --warmup 1000000000 was years
MAX_WARMUP = 10_000


def _warmup(value: int) -> str | None:
    if value < 0:
        return "warmup_blocks (--warmup) cannot be negative"
    if value > MAX_WARMUP:
        return (
            f"warmup_blocks (--warmup) must be at most {MAX_WARMUP:,}, not {value:,}: that many "
            "discarded samples is hours to years of work for no steadier state (a few settle "
            "caches and JITs)"
        )
    return None


@dataclass(frozen=True)
class Settings:
    """How to measure. Defaults are chosen for a noisy 2-core VM (see docs/statistics.md).

    Each core field's metadata is its `SettingSpec` (see `setting_specs`); the lenses' own
    options are their descriptors', their values in `lens_options`."""

    metrics: tuple[Metric, ...] = _setting(
        (Metric.TIME,),
        SettingSpec(
            SettingKind.METRICS,
            "lenses, comma-separated or repeated (default: time)",
            key="metrics",
            flags=("-m", "--metric"),
            repeat=True,
        ),
    )
    # wall-clock budget per benchmark, across all its lenses (perflab/budget.py splits it)
    budget_s: float = _setting(
        20.0,
        SettingSpec(
            SettingKind.NUMBER,
            "seconds per benchmark, all lenses, start-up and imports included; a target: "
            "minimums that need more take more, with a warning (20; 5 for one variant timed alone)",
            key="budget",
            flags=("--budget",),
            unit="s",
            check=_duration("budget"),
        ),
    )
    # the budget is a target: a budget too small for a lens's minimum measurement measures the
    # minimums anyway and warns at the end; refusing before starting is asked for explicitly
    strict_budget: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "refuse before measuring anything when --budget cannot hold every lens's minimum "
            "measurement (default: measure the minimums anyway and warn at the end)",
            key="strict_budget",
            flags=("--strict-budget",),
        ),
    )
    target_precision: float = _setting(  # stop early once the confidence sequence is this narrow
        0.005,
        SettingSpec(
            SettingKind.NUMBER,
            "stop early once the confidence sequence's half-width is below this and it settles "
            "the verdict (0.005 = ±0.5%%)",
            key="precision",
            flags=("--precision",),
            unit="fraction",
            check=_positive("precision must be a positive fraction, e.g. 0.005"),
        ),
    )
    equivalence_band: float = _setting(  # |ratio - 1| inside this band counts as equivalent
        0.01,
        SettingSpec(
            SettingKind.NUMBER,
            "equivalence band: a CI inside 1±band is 'equivalent' (0.01)",
            key="equivalence_band",
            flags=("--band",),
            unit="fraction",
            check=lambda v: (
                None if 0 <= v < 1 else "equivalence band must be a fraction, e.g. 0.01 for ±1%"
            ),
        ),
    )
    confidence: float = _setting(
        0.95,
        SettingSpec(
            SettingKind.NUMBER,
            "confidence level (0.95)",
            key="confidence",
            flags=("--confidence",),
            unit="fraction",
            check=lambda v: None if 0 < v < 1 else "confidence must be between 0 and 1, e.g. 0.95",
        ),
    )
    pin: bool = _setting(
        True,
        SettingSpec(
            SettingKind.BOOLEAN,
            "do not pin measuring processes",
            key="pin",
            flags=("--no-pin",),
        ),
    )
    cpu: int | None = _setting(  # None: the last online CPU
        None,
        SettingSpec(
            SettingKind.OPTIONAL_WHOLE,
            "the CPU to pin measurements to (default: the last)",
            key="cpu",
            flags=("--cpu",),
        ),
    )
    # worker generations (fresh processes, or forked in server rounds when the set-up's imports
    # are expensive): per-process effects are sampled
    min_generations: int = _setting(
        6,
        SettingSpec(
            SettingKind.WHOLE,
            "worker generations per variant, at least (6)",
            key="min_generations",
            flags=("--min-generations",),
            check=lambda v: (
                None if v >= 2 else "min_generations must be at least 2 (a CI needs two)"
            ),
        ),
    )
    # one statement sample: long for the clock, short to interleave
    sample_target_ms: float = _setting(
        10.0,
        SettingSpec(
            SettingKind.NUMBER,
            "target length of one sample (10 ms)",
            key="sample_ms",
            flags=("--sample-ms",),
            unit="ms",
            check=_duration("sample_ms", "ms"),
        ),
    )
    # blocks discarded at the start of every generation (statements) or of the run (commands)
    warmup_blocks: int = _setting(
        2,
        SettingSpec(
            SettingKind.WHOLE,
            "warm-up: samples of each variant discarded before measuring, at the start of every "
            "worker generation (statements) or of the run (commands: runs of each command) (2)",
            key="warmup_blocks",
            flags=("--warmup",),
            metavar="N",
            check=_warmup,
        ),
    )
    # commands: a command run before every sample, not timed (dropping caches, resetting state)
    prepare: str | None = _setting(
        None,
        SettingSpec(
            SettingKind.TEXT,
            "commands: a shell command run before every run of a command, not timed (e.g. "
            "'sync; echo 3 | sudo tee /proc/sys/vm/drop_caches'); its failure stops the run",
            key="prepare",
            flags=("--prepare",),
            metavar="CMD",
        ),
    )
    # commands: bounds on the measured runs of each command (warm-up not counted); the budget
    # and the precision stop a run between them
    runs: int | None = _setting(
        None,
        SettingSpec(
            SettingKind.OPTIONAL_WHOLE,
            "commands: exactly this many measured runs of each command (wins over --min-runs "
            "and --max-runs; the budget does not stop it early); 1: a quick look, each time "
            "shown without an interval (which needs two runs)",
            key="runs",
            flags=("--runs",),
            metavar="N",
            check=lambda v: None if v is None or v >= 1 else "runs must be at least 1",
        ),
    )
    min_runs: int | None = _setting(
        None,
        SettingSpec(
            SettingKind.OPTIONAL_WHOLE,
            "commands: at least this many measured runs of each command, even past the budget "
            "(default: --min-generations)",
            key="min_runs",
            flags=("--min-runs",),
            metavar="N",
            check=lambda v: None if v is None or v >= 2 else "min_runs must be at least 2",
        ),
    )
    max_runs: int | None = _setting(
        None,
        SettingSpec(
            SettingKind.OPTIONAL_WHOLE,
            "commands: at most this many measured runs of each command, even within the budget",
            key="max_runs",
            flags=("--max-runs",),
            metavar="N",
            check=lambda v: None if v is None or v >= 2 else "max_runs must be at least 2",
        ),
    )
    # commands: hyperfine's -N; "auto" runs a command with shell syntax through `sh -c`
    shell: str = _setting(
        "auto",
        SettingSpec(
            SettingKind.TEXT,
            "commands: none runs every command without a shell, its words split as a shell "
            "splits them (hyperfine's -N/--shell=none); auto (the default) uses /bin/sh -c only "
            "for a command with shell syntax (pipes, redirections, variables, quotes ...)",
            key="shell",
            flags=("--shell",),
            metavar="auto|none",
            check=lambda v: (
                None
                if v in ("auto", "none")
                else f"shell must be auto or none, not {v!r} (a command that needs another "
                "shell can name it: --cmd \"bash -c '...'\")"
            ),
        ),
    )
    # commands: hyperfine's --show-output (else a command's output is discarded)
    show_output: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "commands: the commands' output goes to the terminal instead of being discarded "
            "(the time lens's runs; it interleaves with perflab's progress)",
            key="show_output",
            flags=("--show-output",),
        ),
    )
    # commands: hyperfine's -i; a non-zero exit is measured like a zero one, and said
    ignore_failure: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "commands: the time lens measures a command that exits with a non-zero status "
            "instead of stopping (a warning says which did); a command killed by a signal or "
            "timed out still fails, and so does a failure under the other lenses",
            key="ignore_failure",
            flags=("-i", "--ignore-failure"),
        ),
    )
    # what the time lens's decision does with samples other processes interrupted
    preempted: str = _setting(
        "correct",
        SettingSpec(
            SettingKind.TEXT,
            "time: what to do with the time other processes took from a sample (its "
            "run-queue wait): correct (take it out, the default), exclude (drop every pair "
            "with a sample that lost more than 2%%), keep (as measured)",
            key="preempted",
            flags=("--preempted",),
            metavar="exclude|correct|keep",
            check=lambda v: (
                None
                if v in ("exclude", "correct", "keep")
                else "preempted must be exclude, correct or keep"
            ),
        ),
    )
    sample_timeout_s: float = _setting(
        60.0,
        SettingSpec(
            SettingKind.NUMBER,
            "kill a sample that takes longer than this many seconds (60)",
            key="sample_timeout",
            flags=("--sample-timeout",),
            unit="s",
            check=_duration("sample_timeout"),
        ),
    )
    build_timeout_s: float = _setting(
        3600.0,
        SettingSpec(
            SettingKind.NUMBER,
            "kill a variant's build (build=, --build, a git= ref's) after this many seconds "
            "(3600); the variant is then reported and left out",
            key="build_timeout",
            flags=("--build-timeout",),
            unit="s",
            check=_duration("build_timeout"),
        ),
    )
    # Within a generation all variants' workers share one random layout (ASLR off, one random
    # environment padding and hash seed); across generations it changes. Per-process effects are
    # thus sampled, but no longer differ between the variants being compared.
    paired_layout: bool = _setting(
        True, SettingSpec(SettingKind.BOOLEAN, "one shared layout per generation", key=None)
    )
    seed: int | None = _setting(
        None,
        SettingSpec(
            SettingKind.OPTIONAL_WHOLE,
            "seed of the interleaving schedule",
            key="seed",
            flags=("--seed",),
        ),
    )
    # output checks: the variants must compute the same thing for their speeds to compare
    check: str | None = _setting(
        None,
        SettingSpec(
            SettingKind.TEXT,
            "an expression evaluated in each variant's worker after setup and after measuring; "
            "variants whose values differ get the verdict 'invalid'",
            key="check",
            flags=("--check",),
            metavar="EXPR",
        ),
    )
    check_rtol: float = _setting(
        1e-6,
        SettingSpec(
            SettingKind.NUMBER,
            "relative tolerance of --check for floats and arrays (1e-6)",
            key="check_rtol",
            flags=("--check-rtol",),
            unit="fraction",
            check=lambda v: None if v >= 0 else "check_rtol cannot be negative",
        ),
    )
    check_output: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "commands: compare the variants' standard output, or with FILE the file each "
            "variant's command writes (relative to its cwd); a difference is 'invalid'",
            key="check_output",
            flags=("--check-output",),
            metavar="FILE",
            value_setting="check_output_file",
        ),
    )
    # --check-output FILE: the file compared instead of stdout (no option of its own)
    check_output_file: str | None = _setting(
        None,
        SettingSpec(
            SettingKind.TEXT,
            "commands: the file --check-output compares (relative to the variant's cwd)",
            key="check_output_file",
        ),
    )
    ray: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "measure each benchmark (a cell: its variants interleaved on one node) as a task on "
            "a Ray cluster, the results streamed into this store; ADDRESS: the cluster's "
            "(host:port, or auto), else a local cluster is started (docs/scale.md)",
            key="ray",
            flags=("--ray",),
            metavar="ADDRESS",
            value_setting="ray_address",
        ),
    )
    # --ray ADDRESS: the cluster to connect to (no option of its own)
    ray_address: str | None = _setting(
        None,
        SettingSpec(
            SettingKind.TEXT,
            "the Ray cluster --ray connects to (host:port or auto); none: a local one",
            key="ray_address",
        ),
    )
    share_caches: bool = _setting(
        False,
        SettingSpec(
            SettingKind.BOOLEAN,
            "let the variants share their on-disk caches (inductor, Triton, XDG, numba, "
            "__pycache__); by default each variant gets its own fresh ones",
            key="share_caches",
            flags=("--share-caches",),
        ),
    )
    # the lenses' own options by name, sorted: each lens declares its options, their defaults
    # and specs (lenses/<lens>/options.py, named by its descriptor), so that a lens is added
    # without touching this module; lens code reads them through its options.py accessors
    # (code shared by lenses through `perflab.lenses.registry.lens_option`)
    lens_options: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str, default: Any = None) -> Any:
        """A lens option's value, `default` when not given (the catalogue knows the defaults)."""
        return dict(self.lens_options).get(name, default)

    def with_options(self, **values: Any) -> Settings:
        """These settings with lens options given or replaced (lists become tuples)."""
        merged = {**dict(self.lens_options), **{k: _frozen(v) for k, v in values.items()}}
        return replace(self, lens_options=tuple(sorted(merged.items())))

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON values, by field name (the store and the JSON export); the lens
        options sit beside the other fields, each under its own name, as they always did."""
        out: dict[str, Any] = {}
        for name, spec in setting_specs().items():
            value = getattr(self, name)
            if spec.kind is SettingKind.METRICS:
                value = [str(m) for m in value]
            out[name] = value
        out.update((name, _thawed(value)) for name, value in self.lens_options)
        out.update(RETIRED_SETTINGS)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Settings:
        """The inverse of `to_json`: a field that is not a core setting is a lens option (from a
        newer perflab: an option this one has no lens for, kept and ignored)."""
        specs = setting_specs()
        core = {
            name: normalise_setting(specs[name].kind, value)
            for name, value in data.items()
            if name in specs
        }
        options = {
            name: value
            for name, value in data.items()
            if name not in specs and name not in RETIRED_SETTINGS
        }
        return cls(**core).with_options(**options)

    @property
    def min_command_blocks(self) -> int:
        """Blocks a comparison of commands measures at least, warm-up included: each block is
        one run per variant; the minimum runs (--runs, --min-runs), else the minimum
        generations, count as blocks (two at least, for an interval, unless --runs 1 asks for
        one: hyperfine's quick look, reported without an interval)."""
        if self.runs == 1:
            return self.warmup_blocks + 1
        least = self.runs if self.runs is not None else self.min_runs
        return self.warmup_blocks + max(least if least is not None else self.min_generations, 2)

    @property
    def max_command_blocks(self) -> int | None:
        """Blocks a comparison of commands measures at most, warm-up included (None: the budget
        and the precision decide)."""
        most = self.runs if self.runs is not None else self.max_runs
        return None if most is None else self.warmup_blocks + most

    def problems(self) -> list[str]:
        """What is wrong with these settings, in words (empty when they are valid)."""
        found = []
        for name, spec in setting_specs().items():
            if spec.check is not None:
                problem = spec.check(getattr(self, name))
                if problem is not None:
                    found.append(problem)
        if (
            self.min_runs is not None
            and self.max_runs is not None
            and self.min_runs > self.max_runs
        ):
            found.append(f"min_runs ({self.min_runs}) is more than max_runs ({self.max_runs})")
        return found


def setting_specs() -> dict[str, SettingSpec]:
    """Every core `Settings` field's spec, by field name, in declaration order (the lenses'
    options are their descriptors')."""
    return {f.name: f.metadata[_SPEC] for f in fields(Settings) if _SPEC in f.metadata}


# settings that no longer do anything, with the value the JSON keeps giving them: older
# readers of stored runs and exports find the field they knew
RETIRED_SETTINGS: Mapping[str, Any] = {"min_measurements_anyway": False}


def _frozen(value: Any) -> Any:
    """A JSON-like value made immutable: lists (and tuples) become tuples, all the way down."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def _thawed(value: Any) -> Any:
    """The inverse of `_frozen`, for JSON."""
    if isinstance(value, tuple):
        return [_thawed(v) for v in value]
    return value


def normalise_setting(kind: SettingKind, value: Any) -> Any:
    """The one place a setting's value becomes the type `Settings` holds: comma-separated text
    and lists become tuples, a layers table becomes (name, regex) pairs."""
    if kind is SettingKind.TEXTS or kind is SettingKind.METRICS:
        words = value.split(",") if isinstance(value, str) else value
        stripped = (str(w).strip() for w in words)
        texts = tuple(w for w in stripped if w)
        return tuple(Metric(w) for w in texts) if kind is SettingKind.METRICS else texts
    if kind is SettingKind.LAYERS:
        pairs = value.items() if isinstance(value, Mapping) else value
        return tuple((str(name), str(pattern)) for name, pattern in pairs)
    return value


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
