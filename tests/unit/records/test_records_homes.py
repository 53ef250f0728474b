"""The records' vocabularies and settings have their own modules (records/kinds.py,
records/settings.py); the package face names them (their old home, records/model.py, is
perflab.compat's: tests/unit/compat/test_compat.py)."""

from __future__ import annotations

import perflab
from perflab.records import kinds, settings


def test_the_package_face_names_them() -> None:
    assert perflab.Verdict is kinds.Verdict
    assert perflab.Settings is settings.Settings
    assert perflab.Metric.TIME is kinds.Metric("time")
