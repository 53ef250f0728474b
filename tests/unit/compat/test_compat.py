"""Old import paths give the objects their new homes define, until perflab 2.0."""

from __future__ import annotations

import importlib

import pytest

import perflab.engine
from perflab.compat import MOVED, moved
from perflab.lenses import shared_options
from perflab.records import kinds, model, results, settings
from perflab.records.bisect import Direction


def test_every_old_path_gives_the_object_its_home_defines() -> None:
    for (old, name), home in MOVED.items():
        assert getattr(importlib.import_module(old), name) is getattr(
            importlib.import_module(home), name
        )


def test_the_documented_old_paths_still_import() -> None:
    assert perflab.engine.RunResult is results.RunResult
    for name in ("Metric", "Verdict", "RunStatus", "BenchmarkKind", "TimeReport"):
        assert getattr(model, name) is getattr(kinds, name)
    for name in ("Settings", "SettingSpec", "SettingKind", "setting_specs"):
        assert getattr(model, name) is getattr(settings, name)


def test_a_name_that_never_moved_is_missing_as_usual() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        moved("perflab.records.model", "Nope")
    with pytest.raises(ImportError):
        from perflab.records.model import Nope  # noqa: F401


def test_a_module_that_is_gone_still_imports_its_old_names() -> None:
    from perflab.plan.bisect_search import Direction as OldDirection
    from perflab.records.shared_options import CACHE_SIM, region_of

    assert OldDirection is Direction
    assert CACHE_SIM is shared_options.CACHE_SIM
    assert region_of is shared_options.region_of


def test_a_gone_module_knows_no_other_name_and_no_other_module_is_made_up() -> None:
    import perflab.plan.bisect_search as old

    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = old.Nothing
    with pytest.raises(ImportError):
        from perflab.records.shared_options import Nothing  # noqa: F401
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("perflab.plan.never_was")
