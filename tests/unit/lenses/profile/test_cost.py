"""The profile lens's cost model (lenses/profile/cost.py): each variant's workers recorded under
perf with call graphs, read back side by side, the recording shared with the asm lens."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.perf_costs import CALL_GRAPH_RECORDING, CALL_GRAPH_REGION_S, PERF_START_S
from perflab.lenses.profile.cost import (
    LEAVES_POST_S,
    PROFILE_COMMAND_POST_S,
    PROFILE_POST_S,
    PROFILE_TOGGLE_S,
    profile_cost,
)
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK_TWO_CPUS as QUICK

PROFILE = Settings(metrics=(Metric.PROFILE,))
PROFILE_ASM = Settings(metrics=(Metric.PROFILE, Metric.ASM))
# the engine names the recordings the run's lenses share (registry.shared_recordings)
SHARED = dataclasses.replace(QUICK, shared_recordings=frozenset({CALL_GRAPH_RECORDING}))


def test_a_statements_workers_are_recorded_and_read_back_side_by_side() -> None:
    cost = profile_cost(QUICK, PROFILE, processes=3)
    toggles = 2 * CALL_GRAPH_REGION_S / QUICK.sample_s
    expected = (
        2 * 3 * (QUICK.startup_s + PERF_START_S)
        + 3 * PROFILE_POST_S  # both variants' recordings at once on two CPUs, per process
        + 2 * CALL_GRAPH_REGION_S
        + toggles * PROFILE_TOGGLE_S
    )
    assert cost.minimum_s == pytest.approx(expected)
    assert cost.shares == "" and cost.shared_s == 0.0
    assert cost.needs == f"{CALL_GRAPH_REGION_S:g} s recorded per variant, then symbolised"


def test_a_recording_shared_is_read_for_the_other_lenses_too() -> None:
    alone = profile_cost(QUICK, PROFILE, processes=3)
    shared = profile_cost(SHARED, PROFILE_ASM, processes=3)
    assert shared.shares == CALL_GRAPH_RECORDING and shared.shared_s == shared.minimum_s
    assert shared.minimum_s == pytest.approx(alone.minimum_s + 3 * LEAVES_POST_S)


def test_a_command_is_one_process_per_variant_and_never_toggled() -> None:
    command = dataclasses.replace(SHARED, kind=BenchmarkKind.COMMAND, startup_s=0.0, sample_s=0.5)
    cost = profile_cost(command, PROFILE_ASM)
    assert cost.minimum_s == pytest.approx(2 * PROFILE_COMMAND_POST_S + 2 * CALL_GRAPH_REGION_S)
    assert cost.shares == ""  # the asm lens records a command's runs itself
