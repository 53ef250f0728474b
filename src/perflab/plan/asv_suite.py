"""An asv benchmark directory as perflab benchmarks: each `time_*` benchmark at each parameter
combination is a statement benchmark whose set-up imports its module, instantiates its class and
runs setup_cache and the setups (perflab/worker/perflab_asv.py), and whose statement calls it.
A `peakmem_*`, `track_*` or `mem_*` one is the same statement (mem_'s: the size of what it
returns), measured by the lens that gives its figure alone (`LensDescriptor.suite_kinds`: peak
RSS, the value), which the run gains; a `timeraw_*` one is a command: the code it returns, run
by `python -c` in each variant's interpreter, measured by the run's lenses as any command.

The listing runs in every variant that needs no checkout or build (the others have no
interpreter yet), in the variant's interpreter, cwd and environment, as for a pytest suite; a
suite whose variants all need one is listed in the current directory by the interpreter running
perflab, before the builds: a module that interpreter cannot import is named, not measured (its
benchmarks are not known there, and the variants' own builds were never asked). asv itself is
never needed."""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from perflab.lenses.registry import suite_kind_metrics
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.machine.scratch import private_folder
from perflab.plan.suite_listing import distinct_listings, helpers_env, lists_here
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Variant
from perflab.worker import STATEMENT_WORKER_PATH

HELPER = "perflab_asv"  # next to the statement worker, so on its sys.path
LIST_TIMEOUT_S = 300.0  # listing imports the whole suite and runs its setups once
_OUTPUT_LINES = 15  # of the listing's output, shown when it could not list
# asv's kinds the run's lenses measure; those a lens gives alone (`suite_kind_metrics`) are
# measured too, the others named in a note
BY_THE_RUN = ("time", "timeraw")
# asv's kinds whose figure is what the call returns: the lenses that measure them read a returned
# value, which time_ and timeraw_ benchmarks do not have
RETURNING = ("track", "mem")


@dataclass(frozen=True)
class AsvBenchmark:
    """One asv benchmark at one parameter combination, or one module that failed to import."""

    name: str  # asv's name with the combination: bench_sort.TimeSort.time_sorted(100, 'random')
    module: str  # its module, dotted, relative to the benchmark directory
    directory: str  # the benchmark directory, relative to the variant's cwd
    key: str = ""  # asv's name without the combination
    index: tuple[int, ...] = ()  # the combination: an index into each parameter's values
    kind: str = "time"  # asv's kind: time, timeraw, peakmem, mem, track
    skipped: bool = False  # a setup raised NotImplementedError for this combination
    timeout: float | None = None  # asv's timeout attribute, in seconds
    error: str | None = None  # the module failed to import: its traceback
    code: str | None = None  # timeraw_: the Python code it returned when listed
    raw_setup: bool = False  # timeraw_: it returned a setup too, which `code` runs first

    @property
    def measured(self) -> bool:
        """Whether perflab measures its kind: the run's lenses, or a lens that gives its
        figure alone."""
        return self.kind in BY_THE_RUN or bool(suite_kind_metrics(self.kind))

    def benchmark(self, default_python: str = sys.executable) -> Benchmark:
        """The statement benchmark that sets the benchmark up and calls it; a timeraw_ one's
        code as a command of the variant's interpreter (`default_python` where it names
        none)."""
        if self.kind == "timeraw" and self.code is not None and self.error is None:
            return Benchmark(
                name=self.name,
                cmd=shlex.quote(default_python),
                cmd_args="-c " + shlex.quote(self.code),
                cmd_is_python=True,
            )
        setup = (
            f"import {HELPER} as _perflab_asv\n"
            "_perflab_fn, _perflab_args = _perflab_asv.prepared("
            f"{self.directory!r}, {self.module!r}, {self.key!r}, {self.index!r})"
        )
        if self.kind == "track":  # asv's unit attribute, which the track lens reads
            setup += "\ntrack_unit = getattr(_perflab_fn, 'unit', None)"
        if self.kind == "mem":
            setup += "\ntrack_unit = 'B'"
        lenses = suite_kind_metrics(self.kind) if self.error is None else ()
        call = "_perflab_fn(*_perflab_args)"
        # mem_: the size of what it returns; a timeraw_ whose listing raised: its code run as
        # asv runs it, where the error shows again
        wrapped = {"mem": "_perflab_asv.deep_size", "timeraw": "_perflab_asv.run_raw"}
        return Benchmark(
            name=self.name,
            stmt=f"{wrapped[self.kind]}({call})" if self.kind in wrapped else call,
            setup=setup,
            measured_by=lenses or None,
        )


@dataclass(frozen=True)
class AsvSuite:
    """The suite's measured benchmarks and what planning says about the rest."""

    benchmarks: tuple[Benchmark, ...]
    notes: tuple[str, ...]
    timeout_s: float | None  # the longest asv timeout a measured benchmark declares
    # its kinds that lenses measure alone, each with those lenses (peakmem: rss)
    kind_lenses: tuple[tuple[str, tuple[Metric, ...]], ...] = ()


@dataclass(frozen=True)
class SuiteRun:
    """A suite's benchmarks as a run measures them, and that run's lenses."""

    benchmarks: tuple[Benchmark, ...]
    metrics: tuple[Metric, ...]
    notes: tuple[str, ...] = ()


def run_of(
    suite: AsvSuite, metrics: tuple[Metric, ...], alone: tuple[Metric, ...] | None = None
) -> SuiteRun:
    """The suite measured by the run's lenses (`metrics`) and those its kinds need (peakmem_:
    rss), which measure those kinds alone, and the run's lenses the others, but the lenses of
    what a call returns (track: RETURNING); `alone`: the run has one variant, which only these
    lenses measure. A benchmark no lens measures is left out with a note; the notes say which
    lens measures which kind."""
    returned = {m for kind in RETURNING for m in suite_kind_metrics(kind)}
    own = tuple(m for m in metrics if m not in returned)  # time_'s and timeraw_'s
    kept = [b for b in suite.benchmarks if _measurable(b.measured_by or own, alone)]
    notes = suite.notes + _left_out(suite, kept, alone)
    if not kept:
        raise ConfigError(
            "no asv benchmark selected is measured by the run's lenses"
            + (" in a run of one variant" if alone is not None else ""),
            hint="time_ and timeraw_ benchmarks are measured by the lenses --metric names (time "
            "by default), the others by their own; mem_ and track_ ones compare two variants",
        )
    needed = dict.fromkeys(m for b in kept for m in b.measured_by or ())
    for kind, lenses in suite.kind_lenses:
        if set(lenses) & set(needed):
            named = " and ".join(str(m) for m in lenses)
            notes += (f"asv suite: its {kind}_ benchmarks are measured by the {named} lens alone",)
    measuring = (*metrics, *(m for m in needed if m not in metrics))
    benchmarks = tuple(
        b if b.measured_by is not None or own == measuring else replace(b, measured_by=own)
        for b in kept
    )
    return SuiteRun(benchmarks, measuring, notes)


def _measurable(lenses: tuple[Metric, ...], alone: tuple[Metric, ...] | None) -> bool:
    """Whether `lenses` measure a benchmark: any, and in a run of one variant one of those that
    measure a variant alone."""
    return bool(lenses) and (alone is None or bool(set(lenses) & set(alone)))


def _left_out(
    suite: AsvSuite, kept: Sequence[Benchmark], alone: tuple[Metric, ...] | None
) -> tuple[str, ...]:
    left_out = [b.name for b in suite.benchmarks if b not in kept]
    if not left_out:
        return ()
    why = (
        "one variant has nothing to compare these with"
        if alone
        else "no lens of the run measures these"
    )
    return (f"asv suite: {why}: " + ", ".join(left_out),)


def parse_listing(text: str) -> list[AsvBenchmark]:
    """The helper's listing: one JSON object per line."""
    found = []
    for line in text.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        timeout = entry.get("timeout")
        found.append(
            AsvBenchmark(
                name=str(entry["name"]),
                module=str(entry["module"]),
                directory=str(entry["dir"]),
                key=str(entry.get("key", "")),
                index=tuple(int(i) for i in entry.get("index", ())),
                kind=str(entry.get("kind", "time")),
                skipped=bool(entry.get("skipped", False)),
                timeout=None if timeout is None else float(timeout),
                error=None if entry.get("error") is None else str(entry["error"]),
                code=None if entry.get("code") is None else str(entry["code"]),
                raw_setup=bool(entry.get("raw_setup", False)),
            )
        )
    return found


def select(
    found: Sequence[AsvBenchmark],
    directory: str,
    pattern: str | None = None,
    *,
    default_python: str = sys.executable,
    listed_here_by: str | None = None,
) -> AsvSuite:
    """The listed benchmarks perflab measures (those whose name `pattern` matches, searched as
    a regular expression), with a note for the skipped combinations, the kinds not measured and
    the modules whose benchmarks could not be seen, and the lenses that measure some kinds
    alone; a ConfigError when none is left. `listed_here_by`: the interpreter that listed the
    suite where perflab runs, standing in for variants that are all checked out or built (None:
    the variants listed it themselves)."""
    regex = re.compile(pattern) if pattern else None
    unseen = _unseen_modules(found, regex, stand_in=listed_here_by is not None)
    listed = [b for b in found if b not in unseen]
    chosen = [b for b in listed if regex is None or regex.search(b.name)]
    measured = [b for b in chosen if b.error is not None or (b.measured and not b.skipped)]
    failures = _unseen_text(unseen, pattern, listed_here_by)
    if not measured:
        raise _nothing_selected(directory, pattern, failures, listed_here_by)
    timeouts = [b.timeout for b in measured if b.timeout is not None]
    kinds = sorted({b.kind for b in measured if b.error is None and b.kind not in BY_THE_RUN})
    return AsvSuite(
        benchmarks=tuple(b.benchmark(default_python) for b in measured),
        notes=_notes(chosen) + ((f"asv suite: {failures}",) if failures else ()),
        timeout_s=max(timeouts) if timeouts else None,
        kind_lenses=tuple((kind, suite_kind_metrics(kind)) for kind in kinds),
    )


def _notes(chosen: Sequence[AsvBenchmark]) -> tuple[str, ...]:
    """What planning says before measuring: the combinations skipped, the timeraw_ set-ups
    timed with their code, and the kinds perflab does not measure."""
    notes = []
    skipped = [b.name for b in chosen if b.measured and b.skipped and b.error is None]
    if skipped:
        notes.append(
            f"asv suite: {len(skipped)} skipped (a setup raised NotImplementedError): "
            + ", ".join(skipped)
        )
    # asv times a timeraw_ benchmark's code alone inside its process; perflab the process
    raw_setup = [b.name for b in chosen if b.raw_setup and not b.skipped and b.error is None]
    if raw_setup:
        notes.append(
            "asv suite: the setup these timeraw_ benchmarks return is timed with their code "
            "(asv times the code alone): " + ", ".join(raw_setup)
        )
    unmeasured = sorted({b.key for b in chosen if not b.measured and b.error is None})
    if unmeasured:
        notes.append("asv suite: not yet measured by perflab: " + ", ".join(unmeasured))
    return tuple(notes)


def _unseen_modules(
    found: Sequence[AsvBenchmark], regex: re.Pattern[str] | None, *, stand_in: bool
) -> list[AsvBenchmark]:
    """The modules that failed to import and are not measured as failing benchmarks: those the
    pattern does not select (their benchmarks' names are unknown, so it could not select
    them), and every one a stand-in could not import (the variants' own builds would; a
    benchmark made of it would fail there for a reason that is not theirs)."""
    failed = [b for b in found if b.error is not None]
    if stand_in:
        return failed
    return [b for b in failed if regex is not None and not regex.search(b.name)]


def _unseen_text(
    unseen: Sequence[AsvBenchmark], pattern: str | None, listed_here_by: str | None
) -> str:
    """What the unseen modules' failures say, the modules grouped by their error's last line
    (a missing project fails every module alike); '' for none."""
    if not unseen:
        return ""
    by_reason: dict[str, list[str]] = {}
    for module in unseen:
        by_reason.setdefault(_last_line(module.error or ""), []).append(module.module)
    reasons = "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by_reason.items())
    modules = "module" if len(unseen) == 1 else "modules"
    if listed_here_by is not None:
        return (
            f"{len(unseen)} {modules} could not be imported by {listed_here_by}, which lists "
            f"the suite before the builds (every variant is checked out or built), so their "
            f"benchmarks are not known: {reasons}"
        )
    return (
        f"{len(unseen)} {modules} failed to import where the suite was listed, so --bench "
        f"{pattern!r} could not select among their benchmarks: {reasons}"
    )


def _last_line(error: str) -> str:
    """The exception's own line of a listing's traceback (the helper may add a hint after it)."""
    lines = [line for line in error.strip().splitlines() if not line.startswith("hint: ")]
    return lines[-1].strip() if lines else error.strip()


def _nothing_selected(
    directory: str, pattern: str | None, failures: str, listed_here_by: str | None
) -> ConfigError:
    """The error of a suite with no benchmark to measure: with the modules that failed to
    import, when some did, since their benchmarks may be the ones meant."""
    selected = f" matching --bench {pattern!r}" if pattern else ""
    if listed_here_by is not None and failures:
        hint = (
            f"make the project importable by {listed_here_by}: install it there (its "
            "release, or pip install . from this working tree; each variant still measures its "
            "own build), or run perflab from an environment that has it; a pure-Python "
            "checkout imports with env.PYTHONPATH=."
        )
    elif failures:
        hint = "the benchmarks meant may be in those modules: fix what their imports need"
    else:
        hint = (
            "asv benchmarks are functions and methods named time_..., timeraw_..., "
            "peakmem_..., mem_... or track_... in the modules of the benchmark directory (or of "
            "the benchmark_dir its asv.conf.json names)"
        )
    return ConfigError(
        f"no asv benchmark perflab measures in {directory!r}{selected}"
        + (f": {failures}" if failures else ""),
        hint=hint,
    )


def asv_suite(
    directory: str | Path,
    variants: Sequence[Variant],
    runner: ProcessRunner,
    *,
    pattern: str | None = None,
    default_python: str = sys.executable,
) -> AsvSuite:
    """The suite's benchmarks as each variant that can list lists them, the first variant's
    order first."""
    if pattern:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ConfigError(
                f"--bench {pattern!r} is not a regular expression: {error}",
                hint=r"escape what is meant literally: --bench 'time_sorted\(100'",
            ) from None
    found: dict[str, AsvBenchmark] = {}
    for variant in distinct_listings(variants, default_python):
        for benchmark in _listed(runner, variant, str(directory), pattern, default_python):
            found.setdefault(benchmark.name, benchmark)
    here = default_python if lists_here(variants) else None
    return select(
        list(found.values()),
        str(directory),
        pattern,
        default_python=default_python,
        listed_here_by=here,
    )


def _listed(
    runner: ProcessRunner,
    variant: Variant,
    directory: str,
    pattern: str | None,
    default_python: str,
) -> list[AsvBenchmark]:
    where = Path(variant.cwd or ".") / directory
    if not where.is_dir():
        raise ConfigError(
            f"no asv benchmark directory {directory!r}"
            + (f" in {variant.cwd!r}" if variant.cwd else ""),
            hint="give the suite's benchmark directory (benchmarks/) or the folder holding its "
            "asv.conf.json",
            variant=variant.name,
        )
    interpreter = variant.python or default_python
    selected = (pattern,) if pattern else ()
    with private_folder("asv") as folder:
        listing = Path(folder) / "listing.jsonl"
        env = helpers_env(variant)
        completed = runner.run(
            LaunchSpec(
                # the pattern goes along so that only the selected benchmarks' setups run there
                argv=(interpreter, "-m", HELPER, directory, str(listing), *selected),
                env=env,
                cwd=variant.cwd,
            ),
            timeout_s=LIST_TIMEOUT_S,
        )
        if completed.returncode != 0 or completed.timed_out:
            output = (completed.stderr + completed.stdout).strip().splitlines()
            raise ConfigError(
                f"could not list the asv benchmarks of {directory!r}: the listing "
                f"{completed.describe_failure()}",
                hint=f"run it yourself to see why: PYTHONPATH={STATEMENT_WORKER_PATH.parent} "
                f"{interpreter} -m {HELPER} {directory} listing.jsonl",
                variant=variant.name,
                detail="\n".join(output[-_OUTPUT_LINES:]) or None,
            )
        return parse_listing(listing.read_text()) if listing.exists() else []
