"""The t quantiles kept in the analysis cache: a miss computes and stores scipy's value, a hit
returns the stored one without scipy, another scipy build (its version.py's content) misses."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.analyse import quantiles
from perflab.analyse.quantiles import KIND, quantiles_kept, scipy_identity
from perflab.stats.paired import student_t_quantile
from perflab.store.analysis_cache import AnalysisCache


def test_a_miss_stores_scipys_value_and_a_hit_returns_the_stored_one(tmp_path: Path) -> None:
    from scipy.special import stdtrit

    cache = AnalysisCache(tmp_path)
    with quantiles_kept(cache, "build-1"):
        value = student_t_quantile(0.975, 7)
    assert value == float(stdtrit(7, 0.975))
    kept = cache.get(KIND, ["build-1"])
    assert [0.975, 7, value] in kept
    # the other small df's too, each scipy's own value: the next run's df is found kept
    assert [entry[1] for entry in kept] == list(range(1, 257))
    assert all(entry[2] == float(stdtrit(entry[1], 0.975)) for entry in kept)
    # a planted value proves the next process reads it rather than asking scipy
    cache.put(KIND, ["build-1"], [[0.975, 7, 1.5]])
    with quantiles_kept(cache, "build-1"):
        assert student_t_quantile(0.975, 7) == 1.5
    assert cache.get(KIND, ["build-1"]) == [[0.975, 7, 1.5]]  # nothing new: not rewritten
    # outside an analysis's block, the quantile is scipy's again: nothing planted stays
    assert student_t_quantile(0.975, 7) == value


def test_another_scipy_build_misses_and_unreadable_entries_are_ignored(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    cache.put(KIND, ["build-1"], [[0.975, 7, 1.5]])
    with quantiles_kept(cache, "build-2"):
        assert student_t_quantile(0.975, 7) != 1.5
    cache.put(KIND, ["build-3"], [["x"], [0.975, "7", 1.5], {"a": 1}])
    with quantiles_kept(cache, "build-3"):
        assert student_t_quantile(0.975, 7) != 1.5


def test_the_identity_is_the_content_of_scipys_version_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert scipy_identity() is not None
    (tmp_path / "version.py").write_text('version = "1.0"\n')

    class Spec:
        submodule_search_locations = [str(tmp_path)]

    monkeypatch.setattr(quantiles.importlib.util, "find_spec", lambda name: Spec())
    first = scipy_identity()
    (tmp_path / "version.py").write_text('version = "1.1"\n')
    assert scipy_identity() not in (first, None)
