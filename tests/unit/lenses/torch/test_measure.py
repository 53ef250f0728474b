"""The torch lens's measuring loop against scripted workers: no processes, no tools."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from perflab.lenses.registry import lens_for
from perflab.lenses.torch.analyse import KIND_OPS
from perflab.lenses.torch.measure import TorchLens
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, VARIANTS, FakeClock, lens_context, loop_ns
from tests.support.scripted_worker import ScriptedWorker


def torch_profile_reply(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
    loops = int(request["loops"])
    self_us = loops * loop_ns(spec) / 1000
    return {
        "ok": True,
        "loops": loops,
        "wall_ns": loops * 2000,
        "ops": [
            {
                "name": "aten::add",
                "count": loops,
                "self_cpu_time_total_us": self_us,
                "cpu_time_total_us": self_us,
            }
        ],
        "torch_version": "2.13.0+cpu",
        "cpu_capability": "AVX2",
    }


def test_torch_lens_profiles_every_variant_in_every_generation() -> None:
    worker = ScriptedWorker(loop_ns, handlers={"torch_profile": torch_profile_reply})
    runner = FakeRunner().on_spawn("statement_worker", worker)
    settings = dataclasses.replace(FAST, metrics=(Metric.TORCH,), min_generations=3)
    context, sink = lens_context(runner, settings, FakeClock())
    lens = TorchLens()
    lens.measure(BENCH, context)

    assert worker.started == 2 * 3
    tables = [a for a in sink.artifacts if a.kind == KIND_OPS]
    assert {(a.variant, a.generation) for a in tables} == {
        (v, g) for v in ("A", "B") for g in range(3)
    }
    analysis = lens.analyse(BENCH, ["A", "B"], sink.data_for("b", Metric.TORCH), context.experiment)
    assert analysis.comparisons
    assert analysis.comparisons[0].ratio == pytest.approx(0.8)


def test_torch_lens_says_when_a_variant_has_no_torch() -> None:
    def no_torch(spec: LaunchSpec, request: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"ok": False, "phase": "torch", "error": "ModuleNotFoundError: torch"}

    worker = ScriptedWorker(loop_ns, handlers={"torch_profile": no_torch})
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(
        runner, dataclasses.replace(FAST, metrics=(Metric.TORCH,)), FakeClock()
    )
    with pytest.raises(BenchmarkFailedError, match="torch cannot be imported"):
        TorchLens().measure(BENCH, context)


def test_unscripted_processes_fail_the_test() -> None:
    with pytest.raises(AssertionError, match="no script"):
        FakeRunner().spawn(LaunchSpec(argv=("perf", "stat")))
    with pytest.raises(ConfigError):
        TorchLens().preflight(
            Experiment(benchmarks=(Benchmark("c", cmd="true"),), variants=VARIANTS),
            FakeRunner(),
        )


def test_the_torch_lens_takes_as_many_generations_as_its_share_holds() -> None:
    from perflab.lenses.torch.measure import TorchLens
    from tests.support.fast_settings import FAST
    from tests.support.lens_contexts import BENCH, FakeClock, lens_context, loop_ns
    from tests.support.scripted_worker import ScriptedWorker

    settings = dataclasses.replace(FAST, metrics=(Metric.TORCH,), min_generations=5)
    for share_s, generations in ((0.0, 2), (100.0, 5)):
        worker = ScriptedWorker(loop_ns, handlers={"torch_profile": torch_profile_reply})
        runner = FakeRunner().on_spawn("statement_worker", worker)
        context, _ = lens_context(runner, settings, FakeClock())
        context = dataclasses.replace(context, budget_s=share_s)
        TorchLens().measure(BENCH, context)
        assert worker.started == 2 * generations


def test_the_lens_is_registered_and_refuses_commands_up_front() -> None:
    lens = lens_for(Metric.TORCH)
    assert isinstance(lens, TorchLens)
    experiment = Experiment(
        benchmarks=(Benchmark("ls", cmd="ls"),), variants=(Variant("A"), Variant("B"))
    )
    with pytest.raises(ConfigError, match="statements, not commands") as caught:
        lens.preflight(experiment, FakeRunner())
    assert caught.value.benchmark == "ls" and caught.value.hint
