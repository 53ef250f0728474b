"""Old import paths give the objects their new homes define, until perflab 2.0."""

from __future__ import annotations

import importlib

import pytest

import perflab.engine
from perflab.compat import MOVED, moved
from perflab.records import kinds, model, results, settings


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
