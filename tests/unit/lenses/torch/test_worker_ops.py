"""The worker op's reply, from a stand-in torch (real replies in tests/golden): each launch hung
on its op, an empty loop's synchronisations subtracted."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest


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
