"""Publishing analyses runs in processes of their own (SiteRuns.analyse_missing): the figures
are those of an analysis in this process. The store is tests/unit/publish's."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.publish import SiteRuns
from tests.support.published_runs import store as store  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration


def test_runs_analysed_in_processes_side_by_side_give_the_same_figures(
    store: Path, tmp_path: Path
) -> None:
    apart = SiteRuns.read(store, tmp_path / "apart")
    apart.analyse_missing(2, least=0)  # the two runs, each in a process of its own
    assert apart.analysed == 2 and apart.fresh == {1, 2}
    here = SiteRuns.read(store)
    for run_id in (1, 2):
        assert apart.figures(run_id) == here.figures(run_id)
    assert apart.analysed == 2  # reading them analysed nothing more
    (tmp_path / "apart").mkdir()  # publish makes the folder
    apart.keep([1, 2])
    # a folder that keeps every run's figures has nothing to analyse: no process is started
    kept = SiteRuns.read(store, tmp_path / "apart")
    kept.analyse_missing(2, least=0)
    assert kept.analysed == 0 and kept.fresh == set()
