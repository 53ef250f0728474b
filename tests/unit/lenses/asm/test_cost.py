"""The asm lens's cost model (lenses/asm/cost.py): a recording per variant and its hot functions
disassembled, or only the disassembly where the profile lens records for both."""

from __future__ import annotations

import dataclasses

import pytest

from perflab.budget.perf_costs import CALL_GRAPH_RECORDING, PERF_START_S
from perflab.lenses.asm.cost import ASM_POST_S, ASM_REGION_S, ASM_SCRIPT_S, asm_cost
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK_TWO_CPUS as QUICK


def test_each_variant_is_recorded_then_disassembled_side_by_side() -> None:
    cost = asm_cost(QUICK, Settings(metrics=(Metric.ASM,)))
    per_variant_s = QUICK.startup_s + PERF_START_S + ASM_REGION_S + ASM_SCRIPT_S
    assert cost.minimum_s == pytest.approx(2 * per_variant_s + ASM_POST_S)  # two CPUs: one round
    assert cost.shares == "" and "a profile per variant" in cost.needs
    one_cpu = asm_cost(dataclasses.replace(QUICK, counting_cpus=1), Settings(metrics=(Metric.ASM,)))
    assert one_cpu.minimum_s == pytest.approx(2 * per_variant_s + 2 * ASM_POST_S)


def test_a_sample_longer_than_the_region_is_recorded_whole() -> None:
    long = dataclasses.replace(QUICK, sample_s=2.0)
    cost = asm_cost(long, Settings(metrics=(Metric.ASM,)))
    per_variant_s = long.startup_s + PERF_START_S + 2.0 + ASM_SCRIPT_S
    assert cost.minimum_s == pytest.approx(2 * per_variant_s + ASM_POST_S)


def test_a_statement_s_shared_recording_is_another_lens_s_cost() -> None:
    # the engine names the recordings the run's lenses share (registry.shared_recordings)
    shared = dataclasses.replace(QUICK, shared_recordings=frozenset({CALL_GRAPH_RECORDING}))
    cost = asm_cost(shared, Settings(metrics=(Metric.PROFILE, Metric.ASM)))
    assert cost.shares == CALL_GRAPH_RECORDING
    assert cost.minimum_s == pytest.approx(ASM_POST_S)
    # a command has no shared recording: it records its own runs
    command = dataclasses.replace(shared, kind=BenchmarkKind.COMMAND, startup_s=0.0)
    own = asm_cost(command, Settings(metrics=(Metric.PROFILE, Metric.ASM)))
    assert own.shares == "" and own.minimum_s > ASM_POST_S
