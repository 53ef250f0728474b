"""How a statement's sampling is fitted to what is left of its share."""

from __future__ import annotations

import pytest

from perflab.lenses.time.statements import sampling_to_fit


def test_sampling_to_fit_keeps_the_plan_when_it_fits() -> None:
    assert sampling_to_fit(0.5, 10.0, 4, 0.2) == 0.5
    assert sampling_to_fit(0.5, 2.0, 4, 0.2) == pytest.approx(0.3)
    assert sampling_to_fit(0.5, 0.4, 4, 0.2) == 0.0
    assert sampling_to_fit(0.5, -1.0, 0, 0.2) == 0.5
