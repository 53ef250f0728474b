"""The Python API: everything the command line does, with keyword arguments."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from perflab.git.repo import find_repository
from perflab.machine.proc import ProcessRunner, SubprocessRunner
from perflab.plan.designs import plan_matrix, plan_stack
from perflab.plan.experiment_arguments import (
    BenchmarkSources,
    ExperimentConditions,
    designed_experiment,
    experiment_from,
    setting_changes,
    sources_and_settings,
    variant_template,
)
from perflab.plan.settings_by_name import setting_fields
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Experiment, Variant
from perflab.records.results import RunResult
from perflab.store import (
    RunStore,
    RunSummary,
    SqliteStore,
    StoredRun,
    location_facts,
    open_store,
)
from perflab.store.health import StoreHealth
from perflab.store.health import check_store as _check_store
from perflab.store.sqlite import DEFAULT_STORE_PATH

# what only measuring, a suite or the build cache needs is imported where it is used: every
# perflab command imports this module, `perflab list` and `show` among them
if TYPE_CHECKING:
    from perflab.engine.benchmark_plan import SpeedsMeasured
    from perflab.git.cache_entry import CacheEntry
    from perflab.lenses.asm.analyse import AsmView
    from perflab.measure.lens import ProgressReporter

# SQLite's and PostgreSQL's largest integer (a signed 64-bit one)
LARGEST_STORED_INTEGER = 2**63 - 1
SETTINGS_FIELDS = setting_fields()  # the settings make_experiment accepts (lens options too)


def make_experiment(
    experiment_file: str | Path | None = None,
    *,
    variants: Sequence[str | Variant] = (),
    build: str | None = None,
    runner: ProcessRunner | None = None,
    benchmarks: BenchmarkSources | None = None,
    **keywords: Any,
) -> Experiment:
    """An experiment from a file, from arguments, or a file with arguments overriding it
    (docs/python-api.md says each keyword in full). Where the benchmarks come from: the file,
    or keywords (`stmt`, `setup`, `cmd`, `name`, `params`; a suite's `pytest`/`pytest_filter`,
    `asv`/`asv_filter`, `gbench`/`gbench_filter` or `suite`), or all of that as one
    `benchmarks` record. What they are measured under: `variants` (specs such as "mine
    git=HEAD", or Variant records), `build` (the build command of variants without their own)
    and the other keywords, Settings fields and lens options (budget_s=10,
    metrics="time,instructions" ...). `runner` lists the suites and finds the repository of
    git= variants (None: the real one)."""
    sources, settings = sources_and_settings(experiment_file, keywords, benchmarks)
    conditions = ExperimentConditions(
        variants=variants,
        changes=setting_changes(settings),
        build=build,
        runner=runner or SubprocessRunner(),
    )
    return experiment_from(sources, conditions)


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
        template=variant_template(each),
        first_parent=first_parent,
    )
    return designed_experiment(design, experiment_file, runner, arguments)


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
        template=variant_template(each),
    )
    return designed_experiment(design, experiment_file, runner, arguments)


def run(
    experiment: Experiment,
    *,
    store_path: str | Path | None = DEFAULT_STORE_PATH,
    progress: ProgressReporter | None = None,
    cache_dir: str | Path | None = None,
    started_at_s: float | None = None,
    runner: ProcessRunner | None = None,
    speeds: SpeedsMeasured | None = None,
) -> RunResult:
    """Measure the experiment; store everything (in memory when store_path is None; a
    postgresql:// URL is a PostgreSQL store). With the setting `ray`, on a Ray cluster.
    `cache_dir` holds the checkouts and builds of git= variants (default: see
    `perflab.git.cache_entry.default_cache_dir`). `started_at_s` (time.monotonic()): when the
    process started, when its start-up should count in the first benchmark's budget.
    `runner`: every process the run starts goes through it (None: the real one; a cluster's
    nodes start their own). `speeds`: the machine speeds earlier runs measured, which this one
    reuses when recent and adds to (None: its own)."""
    from perflab.engine import RunServices, run_experiment
    from perflab.engine.benchmark_plan import SpeedsMeasured
    from perflab.measure.lens import NullProgress

    services = RunServices(
        runner=runner or SubprocessRunner(),
        progress=progress or NullProgress(),
        started_at_s=started_at_s,
        cache_dir=cache_dir,
        speeds=SpeedsMeasured() if speeds is None else speeds,
    )
    store: RunStore = open_store(store_path) if store_path is not None else SqliteStore.in_memory()
    try:
        if experiment.settings.ray:
            from perflab.engine.cluster import run_on_cluster  # imports Ray: only here

            return run_on_cluster(experiment, store=store, services=services)
        return run_experiment(experiment, store=store, services=services)
    finally:
        store.close()


def check_store(
    store_path: str | Path = DEFAULT_STORE_PATH, *, thorough: bool = False
) -> StoreHealth:
    """Is the store intact, and which runs can be read (read-only; `perflab doctor --store`
    is thorough, `list`/`show`/`compare` check quickly first and warn)."""
    location = location_facts(store_path)
    if not location.is_file:
        raise ConfigError(
            f"{location.shown} is a {location.kind.value} store: doctor --store checks an SQLite "
            "file's pages",
            hint="the server checks its own (pg_amcheck); `perflab list --store URL` reads it",
        )
    return _check_store(store_path, thorough=thorough)


def list_runs(store_path: str | Path = DEFAULT_STORE_PATH, limit: int = 50) -> list[RunSummary]:
    """Summaries of the store's runs, newest first, at most `limit` (read-only)."""
    store = open_store(store_path, create=False)
    try:
        # a limit past the store's largest integer asks for every run; SQLite cannot take it
        return store.list_runs(min(limit, LARGEST_STORED_INTEGER))
    finally:
        store.close()


def show(run_id: str | int = "latest", store_path: str | Path = DEFAULT_STORE_PATH) -> RunResult:
    """A stored run ("latest", or its id), analysed again from its samples (read-only)."""
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
    from perflab.store.json_runs import is_document_reference, load_document

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
