"""The machine's speed: the reference runs' slowdown, within bounds."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.machine_speed import (
    REFERENCE_S,
    SLOWDOWN_RANGE,
    VALGRIND_REFERENCE_S,
    MachineSpeed,
)


def test_the_speed_factor_is_the_reference_runs_slowdown_within_bounds() -> None:
    assert MachineSpeed().factor == 1.0 and not MachineSpeed().measured
    slow = MachineSpeed(reference_s=3 * REFERENCE_S, reference_cpu_s=REFERENCE_S)
    assert slow.factor == pytest.approx(3.0)
    # without valgrind's own reference, valgrind is as slow as everything else
    assert slow.valgrind_factor == pytest.approx(3.0)
    both = dataclasses.replace(slow, valgrind_s=2 * VALGRIND_REFERENCE_S)
    assert both.valgrind_factor == pytest.approx(2.0) and both.factor == pytest.approx(3.0)
    low, high = SLOWDOWN_RANGE
    assert MachineSpeed(reference_s=REFERENCE_S / 100).factor == low
    assert MachineSpeed(reference_s=REFERENCE_S * 1000).factor == high
    assert "x3.0" in slow.describe() and f"({REFERENCE_S:g} s on the reference machine)" in (
        slow.describe()
    )
    assert "valgrind costs x2.0" in both.describe()
