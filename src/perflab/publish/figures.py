"""What a published site reads of each stored run, kept in the site's folder so that publishing
again analyses only the runs it has not read before.

A site's trends read, of every run, only its comparisons' figures (each variant's value per
benchmark and lens; each pair's ratio, interval and verdict) and the node it ran on: the lenses'
figures-only analysis (`run_figures`), a third of the whole one's cost. A run's page is analysed
whole, apart, and only for the benchmarks it draws in full (`perflab.publish.run_page`). A finished
run's samples do not change, so those figures are kept beside the pages (`.perflab-site/`),
one file per run, under a fingerprint of what they were derived from: the run (its id, when it
began and ended, its status) and the perflab that analysed it. A run whose fingerprint matches
is not analysed again; the store stays the only record (a lost or damaged file is derived
again from it)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perflab.analyse.places import Place, first_place
from perflab.analyse.run import analyse_run, run_figures
from perflab.machine.parallel import map_in_processes, usable_cpus
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Comparison
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo
from perflab.records.version import __version__
from perflab.report.files import write_file
from perflab.store import CodeRun, StoredRun, StoreLocation, open_store

# the site's own folder inside DIR: what the next publish reuses (not a page)
KEPT_FOLDER = ".perflab-site"
# the figures' layout: a new one makes every run's figures derived again
FIGURES_FORMAT = 1
_FIGURES_NAME = re.compile(r"run-(\d+)\.json")
# runs to analyse are analysed in processes side by side from this many planned comparisons
# in all (a few seconds of analysis): below, starting the processes (about a second each,
# importing perflab) costs more than it saves
PARALLEL_FROM = 2000

# how a run is analysed for its page (whole), and for its figures (the trends'): seams for tests
Analyse = Callable[[StoredRun], RunResult]
Figures = Callable[[StoredRun], tuple[Comparison, ...]]


def run_fingerprint(run: CodeRun) -> str:
    """What a run's figures are derived from: the run as stored, and this perflab."""
    what = (FIGURES_FORMAT, __version__, run.run_id, run.created_at, run.finished_at, run.status)
    return hashlib.sha256(repr(what).encode()).hexdigest()[:20]


@dataclass(frozen=True)
class RunFigures:
    """A run's comparisons without their details (each lens's own evidence stays on the run's
    page), and where it ran."""

    run_id: int
    fingerprint: str
    comparisons: tuple[Comparison, ...]
    place: Place

    def to_json(self) -> dict[str, Any]:
        rows = [
            [
                c.benchmark,
                str(c.metric),
                c.baseline,
                c.variant,
                c.ratio,
                c.ci_low,
                c.ci_high,
                str(c.verdict),
                c.baseline_value,
                c.variant_value,
                c.unit,
            ]
            for c in self.comparisons
        ]
        return {
            "format": FIGURES_FORMAT,
            "run_id": self.run_id,
            "fingerprint": self.fingerprint,
            "place": asdict(self.place),
            "comparisons": rows,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunFigures:
        """Raises KeyError, TypeError or ValueError on figures of another layout."""
        comparisons = tuple(
            Comparison(
                benchmark=str(b),
                metric=Metric(m),
                baseline=str(base),
                variant=str(v),
                ratio=float(r),
                ci_low=float(lo),
                ci_high=float(hi),
                verdict=Verdict(verdict),
                baseline_value=float(bv),
                variant_value=float(vv),
                unit=str(unit),
            )
            for b, m, base, v, r, lo, hi, verdict, bv, vv, unit in data["comparisons"]
        )
        return cls(
            int(data["run_id"]), str(data["fingerprint"]), comparisons, Place(**data["place"])
        )


def figures_of(comparisons: Sequence[Comparison], run: StoredRun, fingerprint: str) -> RunFigures:
    """What the site keeps of one run's comparisons: its figures, without the lenses' details."""
    kept = tuple(
        Comparison(
            benchmark=c.benchmark,
            metric=c.metric,
            baseline=c.baseline,
            variant=c.variant,
            ratio=c.ratio,
            ci_low=c.ci_low,
            ci_high=c.ci_high,
            verdict=c.verdict,
            baseline_value=c.baseline_value,
            variant_value=c.variant_value,
            unit=c.unit,
        )
        for c in comparisons
        if c.event is None
    )
    return RunFigures(run.run_id, fingerprint, kept, first_place(run))


def planned_comparisons(run: CodeRun) -> int:
    """How many comparisons the run's plan makes: what its analysis costs, roughly."""
    experiment = run.experiment
    return (
        len(experiment.benchmarks)
        * len(experiment.comparison_pairs)
        * len(experiment.settings.metrics)
    )


def _load(
    store: StoreLocation, run_id: int, metrics: Collection[Metric] | None = None
) -> StoredRun:
    """The run; with `metrics`, only those metrics' samples and artifacts."""
    opened = open_store(store, create=False)
    try:
        return opened.load_run(run_id, metrics=metrics)
    finally:
        opened.close()


def _figures_apart(store: StoreLocation, run_id: int, fingerprint: str) -> RunFigures:
    """A run's figures, analysed in a process of its own."""
    stored = _load(store, run_id)
    return figures_of(run_figures(stored), stored, fingerprint)


class SiteRuns:
    """The store's runs as a site reads them: each run's figures from the site's folder when
    its fingerprint matches, else from the run's figures-only analysis (`figures`); a run's
    page from its whole analysis (`analyse`), of the benchmarks the page draws. `analyse` and
    `figures` are the seams a test counts analyses through."""

    def __init__(
        self,
        store: StoreLocation,
        runs: Sequence[CodeRun],
        folder: Path | None = None,
        *,
        analyse: Analyse = analyse_run,
        figures: Figures = run_figures,
    ):
        """`runs`: the store's runs of code; `folder`: the site's (None: nothing is kept)."""
        self.store = store
        self.runs = tuple(runs)
        self._runs = {run.run_id: run for run in runs}
        self._kept = folder / KEPT_FOLDER if folder is not None else None
        self._analyse = analyse
        self._figures_of = figures
        self._figures: dict[int, RunFigures] = {}
        self.fresh: set[int] = set()  # runs whose figures were derived now (to be kept)
        self.pages_analysed: list[int] = []  # the runs analysed whole (in part) for a page

    @classmethod
    def read(
        cls,
        store: StoreLocation,
        folder: Path | None = None,
        *,
        analyse: Analyse = analyse_run,
        figures: Figures = run_figures,
    ) -> SiteRuns:
        """The store's runs of code but those still running (a finished run does not change)."""
        opened = open_store(store, create=False)
        try:
            runs = opened.runs_of_code()
        finally:
            opened.close()
        kept = [run for run in runs if run.status is not RunStatus.RUNNING]
        return cls(store, kept, folder, analyse=analyse, figures=figures)

    @property
    def analysed(self) -> int:
        """How many runs' figures were analysed now (the others' were kept)."""
        return len(self.fresh)

    def code_run(self, run_id: int) -> CodeRun:
        return self._runs[run_id]

    def fingerprint(self, run_id: int) -> str:
        return run_fingerprint(self._runs[run_id])

    def figures(self, run_id: int) -> RunFigures:
        if run_id not in self._figures:
            kept = self._read_kept(run_id)
            if kept is None:
                stored = _load(self.store, run_id)
                kept = figures_of(self._figures_of(stored), stored, self.fingerprint(run_id))
                self.fresh.add(run_id)
            self._figures[run_id] = kept
        return self._figures[run_id]

    def result(self, run_id: int) -> RunResult:
        """The run as the trends read it: its experiment and its figures' comparisons (no
        sections: a run's page is analysed apart, `analysed_for_page`)."""
        run = self._runs[run_id]
        return RunResult(
            run_id=run_id,
            status=run.status,
            created_at=run.created_at,
            experiment=run.experiment,
            machine=MachineInfo.from_json({}),
            comparisons=self.figures(run_id).comparisons,
            notes=(),
            variant_info={},
            differences=(),
        )

    def analysed_for_page(self, run_id: int, benchmarks: Collection[str] | None) -> RunResult:
        """The run analysed whole for its page: every benchmark (None), or only `benchmarks`'
        samples, artifacts and notes. Exact for those: each benchmark is analysed on its own,
        at the run's family size (the run's experiment is kept)."""
        # a page that draws no benchmark in full reads none of the run's samples
        stored = _load(
            self.store, run_id, () if benchmarks is not None and not benchmarks else None
        )
        if benchmarks is not None:
            stored = stored.of_benchmarks(benchmarks)
        self.pages_analysed.append(run_id)
        return self._analyse(stored)

    def analyse_missing(self, workers: int | None = None, *, least: int = PARALLEL_FROM) -> None:
        """Analyses now the figures of the runs the folder does not keep, in up to `workers`
        processes at once (None: one per usable CPU) when there are several and `least`
        planned comparisons in all; else each is analysed when first read. A site's first
        publish is these runs' analysis, each run apart from the others."""
        missing = []
        for run in self.runs:
            if run.run_id in self._figures:
                continue
            kept = self._read_kept(run.run_id)
            if kept is not None:
                self._figures[run.run_id] = kept
            else:
                missing.append(run)
        workers = min(usable_cpus() if workers is None else workers, len(missing))
        # another analysis (a test's seam) stays in this process, where it is counted
        if workers < 2 or self._figures_of is not run_figures:
            return
        if sum(planned_comparisons(run) for run in missing) < least:
            return
        found = map_in_processes(
            _figures_apart,
            [(self.store, run.run_id, run_fingerprint(run)) for run in missing],
            workers=workers,
        )
        # fewer when a process could not start: the runs left are analysed here, one by one,
        # as they are read
        for run, figures in zip(missing, found, strict=False):
            self._figures[run.run_id] = figures
            self.fresh.add(run.run_id)

    def _read_kept(self, run_id: int) -> RunFigures | None:
        """The kept figures of the run when they are of this run as stored now; None when
        missing, of another fingerprint, or unreadable (they are derived again)."""
        if self._kept is None:
            return None
        try:
            data = json.loads((self._kept / f"run-{run_id}.json").read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("fingerprint") != self.fingerprint(run_id):
                return None
            return RunFigures.from_json(data)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a cache, not a record: the store has the truth

    def keep(self, wanted: Iterable[int]) -> None:
        """Writes the figures derived now; removes the kept figures of runs not `wanted`."""
        if self._kept is None:
            return
        if self._kept.is_symlink():
            raise ConfigError(
                f"{self._kept} is a link: perflab keeps the site's figures there itself",
                hint="remove the link",
            )
        self._kept.mkdir(exist_ok=True)
        for run_id in sorted(self.fresh):
            text = json.dumps(self._figures[run_id].to_json(), separators=(",", ":"))
            write_file(self._kept / f"run-{run_id}.json", text)
        wanted = set(wanted)
        for path in self._kept.iterdir():
            found = _FIGURES_NAME.fullmatch(path.name)
            if found and int(found.group(1)) not in wanted and not path.is_symlink():
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
