"""The records' vocabularies and settings have their own modules (records/kinds.py,
records/settings.py); users' code that imports them from records/model.py, where they lived,
and from the package face keeps working."""

from __future__ import annotations

import perflab
from perflab.records import kinds, model, settings


def test_the_old_home_still_gives_the_same_objects() -> None:
    for name in ("Metric", "Verdict", "RunStatus", "BenchmarkKind", "TimeReport"):
        assert getattr(model, name) is getattr(kinds, name)
    for name in ("Settings", "SettingSpec", "SettingKind", "setting_specs"):
        assert getattr(model, name) is getattr(settings, name)


def test_the_package_face_names_them() -> None:
    assert perflab.Verdict is kinds.Verdict
    assert perflab.Settings is settings.Settings
    assert perflab.Metric.TIME is kinds.Metric("time")
