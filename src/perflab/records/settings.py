"""How to measure: `Settings` (the core settings, each field with its `SettingSpec`, and the lenses'
options by name) and the schema the CLI, experiment files and the API are derived from."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from perflab.records.kinds import BenchmarkKind, Metric


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
    (declared by its descriptor, a `LensOption`). The CLI options, the experiment-file keys and
    their type checks, the API's keyword arguments and the JSON encoding are derived from these, so
    a setting is added in one place."""

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
    # the benchmarks it acts on (None: statements and commands): given for an experiment with
    # none of them, it would silently do nothing, so the experiment is refused
    applies_to: BenchmarkKind | None = None
    # other CLI options that set it (-N sets --shell none), named beside `flag` in errors
    alias_flags: tuple[str, ...] = ()

    @property
    def flag(self) -> str | None:
        """The long CLI option, as error messages name it."""
        return self.flags[-1] if self.flags else None


@dataclass(frozen=True)
class LensOption:
    """One option a lens reads: its name (the API's keyword and the stored settings' JSON
    field), its value when not given, and the spec its CLI option and experiment-file key are
    derived from (lenses/<lens>/options.py; lenses/shared_options.py for an option several
    lenses read). Its value travels in `Settings.lens_options`."""

    name: str
    default: Any
    spec: SettingSpec

    def value(self, settings: Settings) -> Any:
        """The option's value in `settings`: the one given, else the default."""
        return settings.option(self.name, self.default)


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


# a warm-up past this settles nothing a few hundred samples do not: at the default 10 ms
# sample it is already 100 s per worker generation of each variant before one sample is kept
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
    # wall-clock budget per benchmark, across all its lenses (budget/plan.py splits it)
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
            applies_to=BenchmarkKind.COMMAND,
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
            applies_to=BenchmarkKind.COMMAND,
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
            applies_to=BenchmarkKind.COMMAND,
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
            applies_to=BenchmarkKind.COMMAND,
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
            applies_to=BenchmarkKind.COMMAND,
            alias_flags=("-N",),
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
            applies_to=BenchmarkKind.COMMAND,
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
            applies_to=BenchmarkKind.COMMAND,
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
    # (an option two lenses share through the typed accessors of `lenses/shared_options.py`)
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
