"""The Python API: everything the command line does, with keyword arguments."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from perflab.git.repo import find_repository
from perflab.lenses.registry import DESCRIPTORS
from perflab.machine.proc import ProcessRunner, SubprocessRunner
from perflab.plan.config import load_experiment
from perflab.plan.designs import Design, plan_matrix, plan_stack, with_design
from perflab.plan.specs import (
    ONLY_VARIANT,
    check_keys_apply,
    check_variants,
    expand_grid,
    parse_variant,
)
from perflab.plan.user_settings import normalised_settings, setting_fields, settings_with
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.results import RunResult
from perflab.records.settings import Settings
from perflab.store import RunStore, RunSummary, SqliteStore, StoredRun, open_store
from perflab.store.health import StoreHealth
from perflab.store.health import check_store as _check_store
from perflab.store.postgres import is_postgresql, shown
from perflab.store.sqlite import DEFAULT_STORE_PATH

# what only measuring, a suite or the build cache needs is imported where it is used: every
# perflab command imports this module, `perflab list` and `show` among them
if TYPE_CHECKING:
    from perflab.git.cache_entry import CacheEntry
    from perflab.lenses.asm.analyse import AsmView
    from perflab.measure.lens import ProgressReporter

# SQLite's and PostgreSQL's largest integer (a signed 64-bit one)
LARGEST_STORED_INTEGER = 2**63 - 1
SETTINGS_FIELDS = setting_fields()  # the settings make_experiment accepts (lens options too)


def make_experiment(
    experiment_file: str | Path | None = None,
    *,
    stmt: str | None = None,
    setup: str | None = None,
    cmd: str | None = None,
    name: str | None = None,
    variants: Sequence[str | Variant] = (),
    params: Mapping[str, Sequence[Any]] | None = None,
    build: str | None = None,
    pytest: str | Path | None = None,
    pytest_filter: str | None = None,
    asv: str | Path | None = None,
    asv_filter: str | None = None,
    gbench: str | Path | None = None,
    gbench_filter: str | None = None,
    runner: ProcessRunner | None = None,
    _design: Design | None = None,
    **settings: Any,
) -> Experiment:
    """An experiment from a file, from arguments, or a file with arguments overriding it.

    `variants` are specs ("after python=/envs/after/bin/python", "mine git=HEAD") or Variant
    records; `build` is the build command of every variant without its own build= (git=
    variants are built in their checkouts); `settings` are Settings fields (budget_s=10,
    metrics="time,instructions", build_timeout_s=600, ...). `pytest`: a pytest-benchmark
    suite (a file or folder) whose tests using the `benchmark` fixture are the benchmarks,
    those matching pytest's `-k pytest_filter` when given. `asv`: an asv benchmark directory
    (or the folder of its asv.conf.json) whose time_ benchmarks, at each parameter combination,
    are the benchmarks, those whose name the regular expression `asv_filter` finds when given.
    `gbench`: a Google Benchmark binary whose benchmarks (those Google Benchmark's
    --benchmark_filter=`gbench_filter` selects, when given) are the benchmarks; a variant's
    cmd= names its own binary. `runner`: the processes that list a suite and find the
    repository of git= variants are started through it (None: the real one)."""
    changes = _setting_changes(settings)
    around = _Around(variants, changes, build, _design, runner or SubprocessRunner())
    given = _Sources(
        experiment_file, stmt, setup, cmd, name, params,
        pytest, pytest_filter, asv, asv_filter, gbench, gbench_filter,
    )  # fmt: skip
    # one source makes the benchmarks: the first given, in this order, refuses the later ones
    for source in (_gbench_source, _asv_source, _pytest_source, _file_source):
        made = source(given, around)
        if made is not None:
            return made
    return _inline_source(given, around)


@dataclass(frozen=True)
class _Sources:
    """What make_experiment was given to make the benchmarks from, one field per argument."""

    experiment_file: str | Path | None
    stmt: str | None
    setup: str | None
    cmd: str | None
    name: str | None
    params: Mapping[str, Sequence[Any]] | None
    pytest: str | Path | None
    pytest_filter: str | None
    asv: str | Path | None
    asv_filter: str | None
    gbench: str | Path | None
    gbench_filter: str | None

    def inline(self) -> bool:
        """Whether arguments (a statement, a command, a name, a grid) define benchmarks."""
        return bool(self.stmt or self.cmd or self.setup or self.name or self.params)

    def defined(self) -> bool:
        """Whether an experiment file or arguments define benchmarks."""
        return self.experiment_file is not None or self.inline()


@dataclass(frozen=True)
class _Around:
    """What every source's benchmarks are measured with: the variants, the settings changed,
    the build command of variants without their own, and a design (a stack, a matrix)."""

    variants: Sequence[str | Variant]
    changes: dict[str, Any]
    build: str | None
    design: Design | None
    runner: ProcessRunner  # lists the suites, finds the repository


def _gbench_source(given: _Sources, around: _Around) -> Experiment | None:
    """The benchmarks of a Google Benchmark binary, listed by each variant's binary."""
    from perflab.plan.gbench_suite import gbench_lens_notes, gbench_suite

    if given.gbench_filter is not None and given.gbench is None:
        raise ConfigError(
            "--filter selects benchmarks of a Google Benchmark binary, and no --gbench PATH is "
            "given",
            hint="perflab run --gbench ./build/bench --filter REGEX --variant A --variant B",
        )
    if given.gbench is None:
        return None
    if given.defined() or given.pytest or given.asv:
        raise ConfigError(
            "--gbench makes the benchmarks: an experiment file, --stmt, --setup, --cmd, "
            "--name, --param, --pytest and --asv cannot be combined with it",
            hint="select the binary's benchmarks with --filter REGEX; a variant's cmd= "
            "names its own binary",
        )
    checked, listing = _suite_variants(around)
    # no shell between perflab and the binary (the filter's ^ and $ would ask for one), unless
    # the user asks for one
    implied = {} if "shell" in around.changes else {"shell": "none"}
    settings = settings_with(Settings(), **around.changes, **implied)
    suite_found = gbench_suite(
        str(given.gbench), listing, around.runner, pattern=given.gbench_filter,
        shell=settings.shell,
    )  # fmt: skip
    return _suite_experiment(
        checked, suite_found.benchmarks, around,
        notes=(*suite_found.notes, *gbench_lens_notes(settings.metrics)), implied=implied,
    )  # fmt: skip


def _asv_source(given: _Sources, around: _Around) -> Experiment | None:
    """The time_ benchmarks of an asv suite, listed in the variants' interpreters."""
    from perflab.plan.asv_suite import asv_suite

    if given.asv_filter is not None and given.asv is None:
        raise ConfigError(
            "--bench selects benchmarks of an asv suite, and no --asv DIR is given",
            hint="perflab run --asv benchmarks/ --bench REGEX --variant A --variant B",
        )
    if given.asv is None:
        return None
    if given.defined() or given.pytest:
        raise ConfigError(
            "--asv makes the benchmarks: an experiment file, --stmt, --setup, --cmd, "
            "--name, --param and --pytest cannot be combined with it",
            hint="select the suite's benchmarks with --bench REGEX",
        )
    checked, listing = _suite_variants(around)
    suite_found = asv_suite(given.asv, listing, around.runner, pattern=given.asv_filter)
    # asv's timeout bounds a benchmark's whole run, so a sample too: the suite's longest is the
    # sample timeout unless one is given
    implied = {}
    if suite_found.timeout_s is not None and "sample_timeout_s" not in around.changes:
        implied = {"sample_timeout_s": suite_found.timeout_s}
    return _suite_experiment(
        checked, suite_found.benchmarks, around, notes=suite_found.notes, implied=implied
    )


def _pytest_source(given: _Sources, around: _Around) -> Experiment | None:
    """The tests of a pytest-benchmark suite as benchmarks, listed by the variants' pytest."""
    from perflab.plan.pytest_suite import pytest_benchmarks

    if given.pytest_filter is not None and given.pytest is None:
        raise ConfigError(
            "-k selects tests of a pytest suite, and no --pytest PATH is given",
            hint="perflab run --pytest tests/ -k EXPR --variant A --variant B",
        )
    if given.pytest is None:
        return None
    if given.defined():
        raise ConfigError(
            "--pytest makes the benchmarks: an experiment file, --stmt, --setup, --cmd, "
            "--name and --param cannot be combined with it",
            hint="select the suite's tests with -k EXPR",
        )
    checked, listing = _suite_variants(around)
    keyword = given.pytest_filter
    benchmarks = pytest_benchmarks(given.pytest, listing, around.runner, keyword=keyword)
    return _suite_experiment(checked, benchmarks, around)


def _file_source(given: _Sources, around: _Around) -> Experiment | None:
    """The experiment file's, with the variants, settings and design given beside it."""
    if given.experiment_file is None:
        return None
    base = load_experiment(given.experiment_file, runner=around.runner)
    if given.inline():
        raise ConfigError(
            "the experiment file defines the benchmarks: --stmt, --setup, --cmd, --name and "
            "--param cannot be combined with it",
            hint="put them in the file's [[benchmark]] tables and [params]",
        )
    parsed = _parsed(around.variants)
    chosen = check_variants(parsed) if parsed else base.variants
    check_keys_apply(chosen, base.benchmarks)
    changes = around.changes
    planned = replace(base, variants=chosen, settings=settings_with(base.settings, **changes))
    if parsed or around.design is not None:  # the file's own design no longer applies
        planned = replace(planned, pairs=(), stack=(), interactions=())
    start = Path(given.experiment_file).parent
    designed = with_design(
        planned, around.design, build=around.build, start=start, runner=around.runner
    )
    return _checked(designed, explicit=changes)


def _inline_source(given: _Sources, around: _Around) -> Experiment:
    """A statement or a command, over the grid of its parameters, under the variants."""
    stmt, cmd = given.stmt, given.cmd
    if stmt is None and cmd is None:
        raise ConfigError(
            "nothing to measure",
            hint="give --stmt (a Python statement), --cmd (a command) or an experiment file",
        )
    grid = {k: [str(v) for v in values] for k, values in (given.params or {}).items()}
    benchmarks = expand_grid(
        given.name or (stmt if stmt is not None else cmd) or "benchmark",
        stmt=stmt,
        setup=given.setup or "pass",
        cmd=cmd,
        params=grid,
    )
    checked = check_variants(_parsed(around.variants) or [Variant(ONLY_VARIANT)])
    check_keys_apply(checked, benchmarks)
    changes = around.changes
    planned = Experiment(
        benchmarks=tuple(benchmarks),
        variants=checked,
        settings=settings_with(Settings(), **{**_alone_defaults(checked, changes), **changes}),
    )
    designed = with_design(planned, around.design, build=around.build, runner=around.runner)
    return _checked(designed, explicit=changes)


# One variant timed alone needs one estimate's precision, not a comparison's: a few seconds
# give it, as hyperfine's users expect, unless a budget is given.
ALONE_BUDGET_S = 5.0


def _alone_defaults(variants: Sequence[Variant], changes: Mapping[str, Any]) -> dict[str, Any]:
    alone = len(variants) == 1 and "budget_s" not in changes
    return {"budget_s": ALONE_BUDGET_S} if alone else {}


def _suite_variants(around: _Around) -> tuple[tuple[Variant, ...], list[Variant]]:
    """The variants checked, and as the suite's listing sees them: a variant built first (its
    own build= or --build) has no interpreter to list with yet."""
    checked = check_variants(_parsed(around.variants) or [Variant(ONLY_VARIANT)])
    return checked, [replace(v, build=v.build or around.build) for v in checked]


def _suite_experiment(
    checked: tuple[Variant, ...],
    benchmarks: Sequence[Benchmark],
    around: _Around,
    *,
    notes: Sequence[str] = (),
    implied: Mapping[str, Any] | None = None,
) -> Experiment:
    """A suite's benchmarks under the variants; `implied`: settings the suite itself asks for
    (the user's `changes` win); `notes`: what its listing left out, said before measuring
    beside a design's own notes."""
    check_keys_apply(checked, list(benchmarks))
    planned = Experiment(
        benchmarks=tuple(benchmarks),
        variants=checked,
        settings=settings_with(Settings(), **around.changes, **(implied or {})),
    )
    designed = with_design(planned, around.design, build=around.build, runner=around.runner)
    designed = replace(designed, plan_notes=(*designed.plan_notes, *notes))
    return _checked(designed, explicit=around.changes)


def _setting_changes(settings: Mapping[str, Any]) -> dict[str, Any]:
    known = setting_fields()  # the lenses' options as their descriptors declare them now
    unknown = set(settings) - known
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {', '.join(sorted(unknown))}",
            hint="settings are: " + ", ".join(sorted(known)),
        )
    return normalised_settings(settings)


def _parsed(variants: Sequence[str | Variant]) -> list[Variant]:
    return [v if isinstance(v, Variant) else parse_variant(v) for v in variants]


def _template(each: str | Variant | None) -> Variant | None:
    if each is None or isinstance(each, Variant):
        return each
    return parse_variant("each " + each)


def make_stack(
    range_text: str,
    experiment_file: str | Path | None = None,
    *,
    each: str | Variant | None = None,
    repository: str | Path | None = None,
    first_parent: bool | None = None,
    runner: ProcessRunner | None = None,
    **arguments: Any,
) -> Experiment:
    """A stack: the commits of `range_text` ("main..HEAD") as variants `base`, `step1` ...,
    each compared with its predecessor, and the last with the base, in one interleaved
    experiment. `each` holds variant keys every variant gets ("python=.venv/bin/python");
    `first_parent`: follow the range's first-parent line, each merge against its first parent
    (None: when the range holds merges; False: refuse merges); the other arguments are
    make_experiment's (stmt=, cmd=, build=, metrics=, budget_s= ...); `runner` asks git and
    lists suites (None: the real one)."""
    runner = runner or SubprocessRunner()
    start = Path(experiment_file).parent if experiment_file is not None else Path.cwd()
    design = plan_stack(
        range_text,
        runner=runner,
        repository=str(repository) if repository else find_repository(runner, start),
        template=_template(each),
        first_parent=first_parent,
    )
    return make_experiment(
        experiment_file, variants=design.variants, runner=runner, _design=design, **arguments
    )


def make_matrix(
    bases: Sequence[str],
    changes: Sequence[str],
    experiment_file: str | Path | None = None,
    *,
    each: str | Variant | None = None,
    repository: str | Path | None = None,
    runner: ProcessRunner | None = None,
    **arguments: Any,
) -> Experiment:
    """A matrix: every change (a commit or a patch file) applied on every base, each cell
    compared with its base, and each change's effect on every base against its effect on the
    first base (the interaction), in one interleaved experiment."""
    runner = runner or SubprocessRunner()
    start = Path(experiment_file).parent if experiment_file is not None else Path.cwd()
    design = plan_matrix(
        bases,
        changes,
        runner=runner,
        repository=str(repository) if repository else find_repository(runner, start),
        template=_template(each),
    )
    return make_experiment(
        experiment_file, variants=design.variants, runner=runner, _design=design, **arguments
    )


def _checked(experiment: Experiment, *, explicit: Mapping[str, Any]) -> Experiment:
    if len(experiment.variants) == 1 and experiment.settings.metrics != (Metric.TIME,):
        raise ConfigError(
            "one variant is measured alone by the time lens only (the other lenses compare "
            f"variants), and --metric asks for {','.join(experiment.settings.metrics)}",
            hint="use --metric time, or give a second variant to compare with, e.g. --variant "
            'A --variant "B env.X=1"',
        )
    settings = experiment.settings
    if (
        settings.runs is not None
        or settings.min_runs is not None
        or settings.max_runs is not None
        or settings.prepare is not None
        or settings.shell != "auto"
        or settings.show_output
        or settings.ignore_failure
    ) and all(b.kind is not BenchmarkKind.COMMAND for b in experiment.benchmarks):
        raise ConfigError(
            "--prepare, --runs, --min-runs, --max-runs, --shell (-N), --show-output and "
            "--ignore-failure (-i) apply to commands (--cmd), and this experiment has none",
            hint="a statement is sampled in worker generations: --min-generations and "
            "--budget bound it",
        )
    # options that only one lens reads: given without that lens, they would silently do nothing
    selected = experiment.settings.metrics
    borrowed = {key for d in DESCRIPTORS if d.metric in selected for key in d.also_reads}
    for descriptor in DESCRIPTORS:
        metric = descriptor.metric
        for declared in descriptor.options:
            key, spec = declared.name, declared.spec
            option = spec.flag or key
            if spec.lens is None or not explicit.get(key) or metric in selected:
                continue
            if key in borrowed:
                continue
            raise ConfigError(
                f"{option} is an option of the {metric.value} lens, which is not selected",
                hint=f"add --metric {','.join(m.value for m in experiment.settings.metrics)},"
                f"{metric.value}",
            )
    return experiment


def run(
    experiment: Experiment,
    *,
    store_path: str | Path | None = DEFAULT_STORE_PATH,
    progress: ProgressReporter | None = None,
    cache_dir: str | Path | None = None,
    started_at_s: float | None = None,
    runner: ProcessRunner | None = None,
) -> RunResult:
    """Measure the experiment; store everything (in memory when store_path is None; a
    postgresql:// URL is a PostgreSQL store). With the setting `ray`, on a Ray cluster.
    `cache_dir` holds the checkouts and builds of git= variants (default: see
    `perflab.git.cache_entry.default_cache_dir`). `started_at_s` (time.monotonic()): when the
    process started, when its start-up should count in the first benchmark's budget.
    `runner`: every process the run starts goes through it (None: the real one; a cluster's
    nodes start their own)."""
    from perflab.engine import run_experiment

    store: RunStore = open_store(store_path) if store_path is not None else SqliteStore.in_memory()
    try:
        if experiment.settings.ray:
            from perflab.engine.cluster import run_on_cluster  # imports Ray: only here

            return run_on_cluster(experiment, store=store, progress=progress, cache_dir=cache_dir)
        return run_experiment(
            experiment,
            store=store,
            progress=progress,
            cache_dir=cache_dir,
            started_at_s=started_at_s,
            runner=runner,
        )
    finally:
        store.close()


def check_store(
    store_path: str | Path = DEFAULT_STORE_PATH, *, thorough: bool = False
) -> StoreHealth:
    """Is the store intact, and which runs can be read (read-only; `perflab doctor --store`
    is thorough, `list`/`show`/`compare` check quickly first and warn)."""
    if is_postgresql(store_path):
        raise ConfigError(
            f"{shown(str(store_path))} is a PostgreSQL store: doctor --store checks an SQLite "
            "file's pages",
            hint="the server checks its own (pg_amcheck); `perflab list --store URL` reads it",
        )
    return _check_store(store_path, thorough=thorough)


def list_runs(store_path: str | Path = DEFAULT_STORE_PATH, limit: int = 50) -> list[RunSummary]:
    store = open_store(store_path, create=False)
    try:
        # a limit past the store's largest integer asks for every run; SQLite cannot take it
        return store.list_runs(min(limit, LARGEST_STORED_INTEGER))
    finally:
        store.close()


def show(run_id: str | int = "latest", store_path: str | Path = DEFAULT_STORE_PATH) -> RunResult:
    from perflab.analyse.run import analyse_run

    store = open_store(store_path, create=False)
    try:
        return analyse_run(store.load_run(run_id))
    finally:
        store.close()


def load_run(
    run_id: str | int = "latest", store_path: str | Path = DEFAULT_STORE_PATH
) -> StoredRun:
    """A stored run as measured: raw samples, artifacts, notes (for plots of the raw data)."""
    store = open_store(store_path, create=False)
    try:
        return store.load_run(run_id)
    finally:
        store.close()


def asm_views(
    function: str, run_id: str | int = "latest", store_path: str | Path = DEFAULT_STORE_PATH
) -> list[AsmView]:
    """Side-by-side assembly of the functions matching the regex `function`, for every
    benchmark of a stored run that has the asm lens's data."""
    from perflab.lenses.asm.analyse import asm_views as views_of  # the asm lens loads capstone

    store = open_store(store_path, create=False)
    try:
        run = store.load_run(run_id)
    finally:
        store.close()
    names = [v.name for v in run.experiment.variants]
    views: list[AsmView] = []
    for benchmark in run.experiment.benchmarks:
        data = run.data_for(benchmark.name, Metric.ASM)
        if data.artifacts:
            views += views_of(benchmark.name, names, data, function)
    if not any(run.data_for(b.name, Metric.ASM).artifacts for b in run.experiment.benchmarks):
        raise ConfigError(
            f"run {run.run_id} has no assembly",
            hint="measure with --metric asm (add --symbol REGEX to choose functions)",
        )
    return views


def compare(
    baseline_run: str | int | Path,
    candidate_run: str | int | Path,
    store_path: str | Path = DEFAULT_STORE_PATH,
) -> RunResult:
    """RUN_B against RUN_A, variant by variant; each a stored run (id or `latest`) or a JSON
    document written with `--json FILE --samples` (a `Path`, or text naming a `.json` file or
    an existing file), whose raw samples are analysed as a stored run's."""
    from perflab.analyse.compare import compare_runs
    from perflab.store.document import is_document_reference, load_document

    def document(reference: str | int | Path) -> Path | None:
        if isinstance(reference, Path):
            return reference
        if isinstance(reference, str) and is_document_reference(reference):
            return Path(reference)
        return None

    paths = [document(baseline_run), document(candidate_run)]
    files = [None if path is None else load_document(path) for path in paths]
    if files[0] is not None and files[1] is not None:
        return compare_runs(files[0], files[1])
    store = open_store(store_path, create=False)
    try:
        runs = [
            loaded if loaded is not None else store.load_run(cast(str | int, reference))
            for loaded, reference in zip(files, (baseline_run, candidate_run), strict=True)
        ]
        return compare_runs(runs[0], runs[1])
    finally:
        store.close()


def cache_entries(cache_dir: str | Path | None = None) -> list[CacheEntry]:
    """The checkouts and builds of git= variants kept for reuse."""
    from perflab.git.cache import BuildCache
    from perflab.git.cache_entry import default_cache_dir

    return BuildCache(cache_dir or default_cache_dir(), SubprocessRunner()).entries()


def prune_cache(
    cache_dir: str | Path | None = None, *, in_use: list[CacheEntry] | None = None
) -> list[CacheEntry]:
    """Remove every cached checkout and build (and git's record of its worktree) that no
    perflab run is using, then perflab's clones no checkout uses; those in use are left, and
    added to `in_use` when given."""
    from perflab.git.cache import BuildCache
    from perflab.git.cache_entry import default_cache_dir

    cache = BuildCache(cache_dir or default_cache_dir(), SubprocessRunner())
    removed = cache.prune()
    if in_use is not None:
        in_use.extend(cache.skipped)
    return removed


__all__ = [
    "Metric",
    "asm_views",
    "cache_entries",
    "check_store",
    "compare",
    "list_runs",
    "load_run",
    "make_experiment",
    "make_matrix",
    "make_stack",
    "prune_cache",
    "run",
    "show",
]
