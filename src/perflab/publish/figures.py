"""What a published site reads of each stored run, kept in the site's folder so that publishing
again analyses only the runs it has not read before.

A site's trends read, of every run, only its comparisons' figures (each variant's value per
benchmark and lens; each pair's ratio, interval and verdict) and the node it ran on. A finished
run's samples do not change, so those figures are kept beside the pages (`.perflab-site/`),
one file per run, under a fingerprint of what they were derived from: the run (its id, when it
began and ended, its status) and the perflab that analysed it. A run whose fingerprint matches
is not analysed again; the store stays the only record (a lost or damaged file is derived
again from it)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perflab.analyse.machines import Place, first_place
from perflab.analyse.run import analyse_run
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Comparison
from perflab.records.results import RunResult
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

Analyse = Callable[[StoredRun], RunResult]


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
            [c.benchmark, str(c.metric), c.baseline, c.variant, c.ratio, c.ci_low, c.ci_high,
             str(c.verdict), c.baseline_value, c.variant_value, c.unit]
            for c in self.comparisons
        ]  # fmt: skip
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
            Comparison(str(b), Metric(m), str(base), str(v), float(r), float(lo), float(hi),
                       Verdict(verdict), float(bv), float(vv), str(unit))
            for b, m, base, v, r, lo, hi, verdict, bv, vv, unit in data["comparisons"]
        )  # fmt: skip
        return cls(
            int(data["run_id"]), str(data["fingerprint"]), comparisons, Place(**data["place"])
        )


def figures_of(result: RunResult, run: StoredRun, fingerprint: str) -> RunFigures:
    kept = tuple(
        Comparison(c.benchmark, c.metric, c.baseline, c.variant, c.ratio, c.ci_low, c.ci_high,
                   c.verdict, c.baseline_value, c.variant_value, c.unit)
        for c in result.comparisons
        if c.event is None
    )  # fmt: skip
    return RunFigures(result.run_id, fingerprint, kept, first_place(run))


def planned_comparisons(run: CodeRun) -> int:
    """How many comparisons the run's plan makes: what its analysis costs, roughly."""
    experiment = run.experiment
    return (
        len(experiment.benchmarks)
        * len(experiment.comparison_pairs)
        * len(experiment.settings.metrics)
    )


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _analysed_apart(
    store: StoreLocation, run_id: int, fingerprint: str
) -> tuple[RunResult, RunFigures]:
    """A run analysed in a process of its own, and its figures (pickled back whole: its page
    reads the same analysis; pickling is ~2% of the analysis)."""
    opened = open_store(store, create=False)
    try:
        stored = opened.load_run(run_id)
    finally:
        opened.close()
    result = analyse_run(stored)
    return result, figures_of(result, stored, fingerprint)


class SiteRuns:
    """The store's runs as a site reads them: each run's figures from the site's folder when
    its fingerprint matches, else from the run analysed (whole, once: its page reads the same
    analysis). `analyse` is the seam a test counts analyses through."""

    def __init__(
        self,
        store: StoreLocation,
        runs: Sequence[CodeRun],
        folder: Path | None = None,
        *,
        analyse: Analyse = analyse_run,
    ):
        """`runs`: the store's runs of code; `folder`: the site's (None: nothing is kept)."""
        self.store = store
        self.runs = tuple(runs)
        self._runs = {run.run_id: run for run in runs}
        self._kept = folder / KEPT_FOLDER if folder is not None else None
        self._analyse = analyse
        self._figures: dict[int, RunFigures] = {}
        self._whole: dict[int, RunResult] = {}
        self.fresh: set[int] = set()  # runs whose figures were derived now (to be kept)

    @classmethod
    def read(
        cls, store: StoreLocation, folder: Path | None = None, *, analyse: Analyse = analyse_run
    ) -> SiteRuns:
        """The store's runs of code but those still running (a finished run does not change)."""
        opened = open_store(store, create=False)
        try:
            runs = opened.runs_of_code()
        finally:
            opened.close()
        kept = [run for run in runs if run.status is not RunStatus.RUNNING]
        return cls(store, kept, folder, analyse=analyse)

    @property
    def analysed(self) -> int:
        """How many runs were analysed (the others' figures were kept)."""
        return len(self._whole)

    def code_run(self, run_id: int) -> CodeRun:
        return self._runs[run_id]

    def fingerprint(self, run_id: int) -> str:
        return run_fingerprint(self._runs[run_id])

    def figures(self, run_id: int) -> RunFigures:
        if run_id not in self._figures:
            kept = self._read_kept(run_id)
            if kept is None:
                self.whole(run_id)
            else:
                self._figures[run_id] = kept
        return self._figures[run_id]

    def result(self, run_id: int) -> RunResult:
        """The run as the trends read it: its experiment and its figures' comparisons (no
        sections: the pages that show the run analyse it whole)."""
        run = self._runs[run_id]
        return RunResult(
            run_id=run_id,
            status=run.status,
            created_at=run.created_at,
            experiment=run.experiment,
            machine={},
            comparisons=self.figures(run_id).comparisons,
            notes=(),
            variant_info={},
            differences=(),
        )

    def whole(self, run_id: int) -> RunResult:
        """The run analysed whole, once."""
        if run_id not in self._whole:
            opened = open_store(self.store, create=False)
            try:
                stored = opened.load_run(run_id)
            finally:
                opened.close()
            result = self._analyse(stored)
            self._whole[run_id] = result
            if run_id not in self._figures:
                self._figures[run_id] = figures_of(result, stored, self.fingerprint(run_id))
                self.fresh.add(run_id)
        return self._whole[run_id]

    def analyse_missing(self, workers: int | None = None, *, least: int = PARALLEL_FROM) -> None:
        """Analyses now the runs whose figures the folder does not keep, in up to `workers`
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
        if workers < 2 or self._analyse is not analyse_run:
            return
        if sum(planned_comparisons(run) for run in missing) < least:
            return
        # spawned, not forked: the caller may hold threads and open connections
        context = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                found = pool.map(
                    _analysed_apart,
                    [self.store] * len(missing),
                    [run.run_id for run in missing],
                    [run_fingerprint(run) for run in missing],
                )
                for run, (result, figures) in zip(missing, found, strict=True):
                    self._whole[run.run_id] = result
                    self._figures[run.run_id] = figures
                    self.fresh.add(run.run_id)
        except BrokenProcessPool:
            # a process could not start (a script without a __main__ guard, no memory): the
            # runs left are analysed here, one by one, as they are read
            return

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
