"""A process's age, from its start tick and the uptime."""

from __future__ import annotations

import os

import pytest

from perflab.machine.host import process_age_s


def test_a_process_age_comes_from_its_start_tick_and_the_uptime() -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    stat = f"4242 (a (strange) name) S 1 {' '.join(['0'] * 17)} {100 * ticks} 0 0"
    assert process_age_s(stat, "130.5 250.0") == pytest.approx(30.5)
    assert process_age_s("garbage", "1.0 1.0") is None
    age = process_age_s()  # this process
    assert age is not None and age >= 0
