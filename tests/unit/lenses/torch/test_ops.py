"""The torch lens's analysis on hand-written op tables: no torch, no processes."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from rich.console import Console

from perflab.lenses.fragments import SectionInput
from perflab.lenses.registry import lens_for
from perflab.lenses.torch.analyse import (
    KIND_OPS,
    KIND_WARMUP_OPS,
    PACE_US,
    SELF_CPU_US,
    analyse_torch,
    profile_values,
)
from perflab.lenses.torch.measure import TorchLens
from perflab.lenses.torch.ops import (
    DeviceBound,
    OpStats,
    OpTable,
    OpTableFormatError,
    device_activity,
    diff_ops,
    op_rates,
    parse_op_table,
    versions_of,
)
from perflab.lenses.torch.render import section
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import BenchmarkData
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, Experiment, Sample, Variant
from perflab.records.settings import Settings
from perflab.report.terminal import render_section


def table(loops: int, *ops: tuple[str, int, float], capability: str = "AVX512") -> OpTable:
    """ops: (name, count, self µs); total time = self time (no child ops)."""
    return OpTable(
        loops=loops,
        wall_ns=loops * 1000,
        ops=tuple(OpStats(name, count, self_us, self_us) for name, count, self_us in ops),
        torch_version="2.13.0+cpu",
        cpu_capability=capability,
    )


def test_an_op_table_round_trips_through_the_worker_reply_shape() -> None:
    original = OpTable(
        loops=10,
        wall_ns=12345,
        ops=(OpStats("aten::relu", 10, 3.5, 7.0), OpStats("aten::clamp_min", 10, 3.5, 3.5)),
        torch_version="2.13.0+cpu",
        cpu_capability=None,
    )
    reply = {"ok": True, **original.to_json()}
    assert parse_op_table(json.loads(json.dumps(reply))) == original
    assert original.self_cpu_us == 7.0


@pytest.mark.parametrize(
    "data",
    [
        {"loops": 10},
        {"loops": 10, "ops": [{"name": "aten::add", "count": "many"}]},
        {"loops": 0, "ops": []},
        {"ops": []},
    ],
)
def test_a_malformed_op_table_is_a_format_error(data: dict[str, Any]) -> None:
    with pytest.raises(OpTableFormatError):
        parse_op_table(data)


def test_rates_are_per_iteration_over_all_tables_and_skip_ops_that_never_ran() -> None:
    rates = op_rates(
        [
            table(100, ("aten::add", 100, 200.0), ("aten::empty", 0, 0.0)),
            table(300, ("aten::add", 300, 300.0), ("aten::fill_", 3, 6.0)),
        ]
    )
    assert set(rates) == {"aten::add", "aten::fill_"}
    assert rates["aten::add"].calls_per_iteration == 1.0
    assert rates["aten::add"].self_us_per_iteration == pytest.approx(500.0 / 400)
    assert rates["aten::fill_"].calls_per_iteration == pytest.approx(3 / 400)


def test_the_diff_names_ops_that_appeared_and_disappeared_and_puts_call_changes_first() -> None:
    baseline = op_rates([table(10, ("aten::add", 10, 20.0), ("aten::empty", 10, 5.0))])
    variant = op_rates(
        [
            table(
                10,
                ("aten::add", 10, 40.0),  # slower, same calls: after the call changes
                ("aten::relu", 10, 3.0),
                ("aten::clamp_min", 20, 2.0),
            )
        ]
    )
    diff = diff_ops(baseline, variant)
    assert diff.appeared == ("aten::clamp_min", "aten::relu")
    assert diff.disappeared == ("aten::empty",)
    assert [c.name for c in diff.changes] == [
        "aten::clamp_min",  # +2 calls per iteration
        "aten::empty",  # -1 call, -0.5 µs
        "aten::relu",  # +1 call, +0.3 µs
        "aten::add",  # same calls, +2 µs
    ]
    assert diff.baseline_self_us_per_iteration == pytest.approx(2.5)
    assert diff.variant_self_us_per_iteration == pytest.approx(4.5)
    empty = next(c for c in diff.changes if c.name == "aten::empty")
    assert empty.to_json() == {
        "name": "aten::empty",
        "baseline_calls_per_iteration": 1.0,
        "variant_calls_per_iteration": 0.0,
        "baseline_self_us_per_iteration": 0.5,
        "variant_self_us_per_iteration": 0.0,
    }


def test_versions_of_a_variant_are_collected_once() -> None:
    tables = [table(1, capability="AVX2"), table(1, capability="AVX2")]
    assert versions_of(tables) == (["2.13.0+cpu"], ["AVX2"])


# -- the lens's analysis, from stored samples and artifacts ---------------------------------


def stored(
    variant: str, tables: list[OpTable], *, generations: int, warmup_table: OpTable | None = None
) -> tuple[list[Sample], list[Artifact]]:
    """What the lens stores: per generation a warm-up profile (block 0), then measured ones."""
    samples, artifacts = [], []
    for generation in range(generations):
        profiles = [(warmup_table or tables[0], True)] + [(t, False) for t in tables]
        for block, (profile, warmup) in enumerate(profiles):
            kind = KIND_WARMUP_OPS if warmup else KIND_OPS
            content = json.dumps(profile.to_json())
            artifacts.append(Artifact("b", variant, Metric.TORCH, kind, content, generation))
            for name, value in profile_values(profile):
                if name in (SELF_CPU_US, PACE_US):
                    value *= 1 + 0.01 * generation
                samples.append(
                    Sample(
                        benchmark="b",
                        variant=variant,
                        metric=Metric.TORCH,
                        name=name,
                        value=value,
                        loops=profile.loops,
                        generation=generation,
                        block=block,
                        warmup=warmup,
                    )
                )
    return samples, artifacts


def test_analysis_compares_total_self_time_and_lists_the_op_changes() -> None:
    base_samples, base_artifacts = stored(
        "A",
        [table(100, ("aten::add", 100, 100.0))],
        generations=3,
        # the warm-up profile's inflated times and odd ops must not count
        warmup_table=table(5, ("aten::add", 5, 5000.0), ("aten::warmup_only", 1, 1.0)),
    )
    var_samples, var_artifacts = stored(
        "B",
        [table(100, ("aten::add", 100, 100.0), ("aten::relu", 100, 100.0))],
        generations=3,
    )
    data = BenchmarkData(
        samples=tuple(base_samples + var_samples), artifacts=tuple(base_artifacts + var_artifacts)
    )
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert comparison.metric is Metric.TORCH
    assert comparison.ratio == pytest.approx(2.0)
    assert comparison.ci_low <= comparison.ratio <= comparison.ci_high
    assert comparison.verdict is Verdict.SLOWER
    assert (comparison.baseline_value, comparison.variant_value) == (1000.0, 2000.0)  # ns
    document = comparison.to_json()
    assert document["appeared"] == ["aten::relu"] and document["disappeared"] == []
    assert [op["name"] for op in document["ops"]] == ["aten::relu", "aten::add"]
    assert document["baseline_torch_version"] == "2.13.0+cpu"
    assert document["variant_cpu_capability"] == "AVX512"
    assert document["baseline_profiles"] == 3 and document["n_groups"] == 3
    assert document["ratio_of"] == "self_cpu"  # no GPU recorded: the host's time
    assert analysis.notes == ()


def test_workers_that_waited_for_a_cpu_make_no_claim() -> None:
    # at load ~4 an A/A of torch.add was called `faster` by this lens: its workers had waited
    # for the CPU through much of their loops, the profiler's wall clock counting those turns
    waited = dataclasses.replace(table(100, ("aten::add", 100, 100.0)), run_queue_ns=40_000)
    assert parse_op_table(waited.to_json()).run_queue_ns == 40_000
    base_samples, base_artifacts = stored("A", [waited], generations=3)
    var_samples, var_artifacts = stored(
        "B", [dataclasses.replace(waited, ops=(OpStats("aten::add", 100, 200.0, 200.0),))],
        generations=3,
    )  # fmt: skip
    data = BenchmarkData(
        samples=tuple(base_samples + var_samples), artifacts=tuple(base_artifacts + var_artifacts)
    )
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert comparison.ratio == pytest.approx(2.0) and comparison.verdict is Verdict.INCONCLUSIVE
    assert comparison.to_json()["interval_verdict"] == "slower"
    assert comparison.to_json()["withheld_reason"] == "waited-for-cpu"
    (note,) = analysis.notes
    assert "waited for a CPU 40% and 40%" in note.message and "inconclusive" in note.message


def test_a_statement_without_torch_ops_gets_a_note_and_no_ratio() -> None:
    samples, artifacts = [], []
    for variant in ("A", "B"):
        s, a = stored(variant, [table(10)], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    analysis = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings())
    (comparison,) = analysis.comparisons
    assert math.isnan(comparison.ratio) and comparison.verdict is Verdict.INCONCLUSIVE
    assert len(analysis.notes) == 2
    assert "no op" in analysis.notes[0].message


def test_the_lens_is_registered_and_refuses_commands_up_front() -> None:
    lens = lens_for(Metric.TORCH)
    assert isinstance(lens, TorchLens)
    experiment = Experiment(
        benchmarks=(Benchmark("ls", cmd="ls"),), variants=(Variant("A"), Variant("B"))
    )
    with pytest.raises(ConfigError, match="statements, not commands") as caught:
        lens.preflight(experiment, FakeRunner())
    assert caught.value.benchmark == "ls" and caught.value.hint


def test_the_terminal_shows_changed_ops_and_what_appeared() -> None:
    samples, artifacts = [], []
    for variant, ops in (("A", [("aten::add", 10, 10.0)]), ("B", [("aten::relu", 10, 5.0)])):
        s, a = stored(variant, [table(10, *ops, capability=f"CAP{variant}")], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    comparisons = analyse_torch(Benchmark("b", stmt="x"), ["A", "B"], data, Settings()).comparisons
    console = Console(width=120, record=True)
    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    render_section(section(SectionInput(Metric.TORCH, comparisons, experiment)), console)
    text = console.export_text()
    assert "torch.profiler ops per iteration" in text
    assert "ops appeared in B: aten::relu" in text
    assert "ops disappeared in B: aten::add" in text
    assert "CPU capability CAPA → CAPB" in text


# -- the device: tables profiled with CUDA activity ------------------------------------------

_KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"


def device_table(loops: int, *, host_us: float, kernel_us: float, kernel: str = _KERNEL) -> OpTable:
    """The worker's reply shape where the process had initialised CUDA: host-side ops (the op,
    its launch, the sample's two synchronisations) and what ran on the device."""
    return parse_op_table(
        {
            "loops": loops,
            "wall_ns": loops * 10_000,
            "device": "cuda",
            "ops": [
                {
                    "name": "aten::add",
                    "count": loops,
                    "self_cpu_time_total_us": host_us,
                    "cpu_time_total_us": host_us,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": "cudaLaunchKernel",
                    "count": loops,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": "cudaDeviceSynchronize",
                    "count": 2,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": False,
                    "self_device_time_total_us": 0.0,
                },
                {
                    "name": kernel,
                    "count": loops,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": True,
                    "self_device_time_total_us": kernel_us,
                },
                {
                    "name": "Memcpy HtoD (Pageable -> Device)",
                    "count": 0,
                    "self_cpu_time_total_us": 0.0,
                    "cpu_time_total_us": 0.0,
                    "on_device": True,
                    "self_device_time_total_us": 0.0,
                },
            ],
        }
    )


def test_device_activity_separates_host_from_device_and_counts_launches() -> None:
    small = device_table(100, host_us=500.0, kernel_us=180.0)
    assert parse_op_table(small.to_json()) == small  # stored artifacts keep the device fields
    activity = device_activity([small, small])
    assert activity is not None
    assert activity.host_us_per_iteration == pytest.approx(5.0)
    assert activity.device_us_per_iteration == pytest.approx(1.8)
    assert activity.launches_per_iteration == pytest.approx(1.0)
    assert activity.synchronisations_per_iteration == pytest.approx(0.02)
    assert activity.copies_per_iteration == 0.0
    assert activity.bound is DeviceBound.LAUNCH  # a small op: the host is the cost
    (kernel,) = activity.kernels
    assert kernel.name == _KERNEL and kernel.calls_per_iteration == pytest.approx(1.0)
    large = device_activity([device_table(10, host_us=50.0, kernel_us=29_000.0)])
    assert large is not None and large.bound is DeviceBound.DEVICE
    assert device_activity([table(10, ("aten::add", 10, 10.0))]) is None  # CPU profiles


def test_a_comparison_on_the_device_says_where_the_time_goes() -> None:
    samples, artifacts = [], []
    for variant, host_us in (("A", 900.0), ("B", 400.0)):  # the dispatcher bypassed in B
        s, a = stored(variant, [device_table(100, host_us=host_us, kernel_us=180.0)], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    (comparison,) = analyse_torch(
        Benchmark("b", stmt="x"), ["A", "B"], data, Settings()
    ).comparisons
    document = comparison.to_json()
    assert document["baseline_device"]["host_us_per_iteration"] == pytest.approx(9.0)
    assert document["variant_device"]["host_us_per_iteration"] == pytest.approx(4.0)
    assert document["variant_device"]["bound"] == "launch-bound"
    console = Console(width=200, record=True)
    experiment = Experiment(
        benchmarks=(Benchmark("b", stmt="x"),), variants=(Variant("A"), Variant("B"))
    )
    render_section(section(SectionInput(Metric.TORCH, (comparison,), experiment)), console)
    text = console.export_text()
    assert "on the host (dispatch and launches)" in text and "launch-bound" in text
    assert "kernels torch.profiler saw on the device" in text


def test_cpu_profiles_keep_their_json_without_device_fields() -> None:
    samples, artifacts = [], []
    for variant in ("A", "B"):
        s, a = stored(variant, [table(10, ("aten::add", 10, 10.0))], generations=2)
        samples += s
        artifacts += a
    data = BenchmarkData(samples=tuple(samples), artifacts=tuple(artifacts))
    (comparison,) = analyse_torch(
        Benchmark("b", stmt="x"), ["A", "B"], data, Settings()
    ).comparisons
    assert "baseline_device" not in comparison.to_json()
    assert "device" not in table(1).to_json()


# -- the worker op's reply, from a stand-in torch (real replies in tests/golden) ----------------


def _worker_ops() -> Any:
    import importlib.util

    from perflab.lenses.torch.measure import WORKER_OPS

    spec = importlib.util.find_spec(WORKER_OPS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclasses.dataclass
class _Kernel:
    name: str
    duration: float  # µs on the device


@dataclasses.dataclass
class _Event:
    """One call in the profiler's trace, with the kernels and copies it launched."""

    name: str
    kernels: list[_Kernel]
    is_legacy: bool = False


@dataclasses.dataclass
class _Average:
    """One row of the profiler's key_averages()."""

    key: str
    count: int
    self_cpu_time_total: float  # µs
    on_device: bool = False

    @property
    def cpu_time_total(self) -> float:
        return self.self_cpu_time_total

    @property
    def device_type(self) -> str:
        return "DeviceType.CUDA" if self.on_device else "DeviceType.CPU"

    @property
    def self_device_time_total(self) -> float:
        return 1.0 if self.on_device else 0.0


@dataclasses.dataclass
class _Session:
    """What one torch.profiler session recorded."""

    averages: list[_Average]
    trace: list[_Event] = dataclasses.field(default_factory=list)

    def key_averages(self) -> list[_Average]:
        return self.averages

    def events(self) -> list[_Event]:
        return self.trace


def _profiled(
    monkeypatch: pytest.MonkeyPatch, measured: _Session, empty: _Session
) -> dict[str, Any]:
    """The op's reply in a process that initialised CUDA, where torch's profiler recorded
    `measured` around the statement's loop and `empty` around an empty loop's."""
    import contextlib
    import sys
    import traceback
    import types
    from collections.abc import Iterator
    from types import SimpleNamespace

    sessions = iter([measured, empty])

    @contextlib.contextmanager
    def profile(**options: object) -> Iterator[_Session]:
        yield next(sessions)

    torch: Any = types.ModuleType("torch")
    torch.__version__ = "2.4.0"
    torch.cuda = SimpleNamespace(is_initialized=lambda: True)
    profiler: Any = types.ModuleType("torch.profiler")
    profiler.profile = profile
    profiler.ProfilerActivity = SimpleNamespace(CPU="CPU", CUDA="CUDA")
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    worker = SimpleNamespace(timed=lambda loops, empty=False: 1000, traceback=traceback.format_exc)
    reply: dict[str, Any] = _worker_ops().torch_profile(worker, {"loops": 10})
    assert reply["ok"], reply.get("error")
    assert reply["device"] == "cuda"
    return reply


def test_the_worker_hangs_each_launch_on_the_op_by_position_and_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gemm, fill = _Kernel("gemm", 5.0), _Kernel("Memset (Device)", 1.0)
    events = [
        _Event("aten::mm", [fill, gemm]),
        _Event("aten::mm", [fill, gemm]),
        _Event("cudaDeviceSynchronize", [gemm]),  # torch hangs a stray kernel on a runtime call
        _Event("Activity Buffer Request", [gemm]),  # or on the profiler's own event
    ]
    averages = [_Average("aten::mm", 2, 8.0), _Average("cudaDeviceSynchronize", 1, 2.0)]
    reply = _profiled(monkeypatch, _Session(averages, events), _Session([]))
    mm, synchronise = reply["ops"]
    assert mm["kernels"] == [
        {"position": 0, "name": "Memset (Device)", "count": 2, "device_time_total_us": 2.0},
        {"position": 1, "name": "gemm", "count": 2, "device_time_total_us": 10.0},
    ]
    assert "kernels" not in synchronise


def test_the_worker_subtracts_the_synchronisations_of_an_empty_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    measured = [
        _Average("cudaDeviceSynchronize", 3, 30.0),  # the loop's two and the profiler's one
        _Average("cudaStreamSynchronize", 203, 203.0),  # the statement's own, and the loop's three
        _Average("kernel", 5, 0.0, on_device=True),
        _Average("Activity Buffer Request", 1, 900.0),  # the profiler's own bookkeeping
    ]
    empty = [_Average("cudaDeviceSynchronize", 3, 3.0), _Average("cudaStreamSynchronize", 3, 3.0)]
    reply = _profiled(monkeypatch, _Session(measured), _Session(empty))
    kept = reply["ops"]
    assert [(o["name"], o["count"]) for o in kept] == [
        ("cudaStreamSynchronize", 200),
        ("kernel", 5),
    ]
    assert kept[0]["self_cpu_time_total_us"] == pytest.approx(200.0)
    assert kept[0]["cpu_time_total_us"] == pytest.approx(200.0)
    assert kept[1]["on_device"] and kept[1]["self_device_time_total_us"] == 1.0
