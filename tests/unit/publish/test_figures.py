"""A site's runs and their figures (publish/figures.py), on the history store: figures derived
once and kept in the site's folder by the run's fingerprint, derived again when what is kept is
not this run's, the kept figures of runs gone removed, a page analysed for what it draws."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab.analyse.run import run_figures
from perflab.publish.figures import KEPT_FOLDER, RunFigures, SiteRuns, planned_comparisons
from perflab.records.errors import ConfigError
from perflab.records.model import Comparison
from perflab.store import StoredRun
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)


class CountingFigures:
    """The figures seam, counting the runs it analyses (and keeping them in this process)."""

    def __init__(self) -> None:
        self.runs: list[int] = []

    def __call__(self, run: StoredRun) -> tuple[Comparison, ...]:
        self.runs.append(run.run_id)
        return run_figures(run)


def test_figures_are_derived_once_kept_and_read_back(store: Path, tmp_path: Path) -> None:
    counted = CountingFigures()
    runs = SiteRuns.read(store, tmp_path, figures=counted)
    assert [r.run_id for r in runs.runs] == [1, 2]
    first = runs.figures(1)
    assert runs.figures(1) is first and counted.runs == [1]
    assert all(c.details is None and c.event is None for c in first.comparisons)
    runs.keep([1, 2])
    assert (tmp_path / KEPT_FOLDER / "run-1.json").is_file()
    again = CountingFigures()
    read = SiteRuns.read(store, tmp_path, figures=again)
    assert read.figures(1) == first and again.runs == [] and read.analysed == 0


def test_kept_figures_of_another_fingerprint_are_derived_again(store: Path, tmp_path: Path) -> None:
    runs = SiteRuns.read(store, tmp_path, figures=CountingFigures())
    runs.figures(1)
    runs.keep([1])
    kept = tmp_path / KEPT_FOLDER / "run-1.json"
    kept.write_text(json.dumps({**json.loads(kept.read_text()), "fingerprint": "other"}))
    counted = CountingFigures()
    SiteRuns.read(store, tmp_path, figures=counted).figures(1)
    assert counted.runs == [1]
    kept.write_text("{damaged")
    assert SiteRuns.read(store, tmp_path, figures=counted).figures(1).run_id == 1


def test_the_figures_of_runs_not_wanted_are_removed_and_nothing_else(
    store: Path, tmp_path: Path
) -> None:
    runs = SiteRuns.read(store, tmp_path, figures=CountingFigures())
    for run_id in (1, 2):
        runs.figures(run_id)
    runs.keep([1, 2])
    (tmp_path / KEPT_FOLDER / "notes.txt").write_text("mine")
    SiteRuns.read(store, tmp_path, figures=CountingFigures()).keep([1])
    assert sorted(p.name for p in (tmp_path / KEPT_FOLDER).iterdir()) == ["notes.txt", "run-1.json"]


def test_a_link_where_the_figures_are_kept_is_refused(store: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / KEPT_FOLDER).symlink_to(tmp_path / "elsewhere")
    runs = SiteRuns.read(store, tmp_path, figures=CountingFigures())
    with pytest.raises(ConfigError, match="is a link"):
        runs.keep([1])


def test_figures_as_json_read_back_the_same(store: Path) -> None:
    runs = SiteRuns.read(store, figures=CountingFigures())
    figures = runs.figures(2)
    assert RunFigures.from_json(json.loads(json.dumps(figures.to_json()))) == figures
    assert runs.result(2).comparisons == figures.comparisons
    assert planned_comparisons(runs.code_run(1)) == 2 * 4  # two benchmarks, four pairs


def test_missing_figures_through_a_seam_are_analysed_here_as_they_are_read(store: Path) -> None:
    counted = CountingFigures()
    runs = SiteRuns.read(store, figures=counted)
    runs.analyse_missing(workers=4, least=0)
    assert counted.runs == []  # nothing started apart: each is analysed when first read
    runs.figures(2)
    assert counted.runs == [2] and runs.analysed == 1


def test_a_page_is_analysed_for_the_benchmarks_it_draws(store: Path) -> None:
    seen: list[set[str]] = []

    def analyse(run: StoredRun) -> object:
        seen.append({s.benchmark for s in run.samples})
        return run

    runs = SiteRuns.read(store, analyse=analyse)  # type: ignore[arg-type]
    runs.analysed_for_page(2, {"parse"})
    runs.analysed_for_page(1, set())
    assert seen == [{"parse"}, set()] and runs.pages_analysed == [2, 1]
