"""torch.profiler op tables: parsed into values, combined per iteration, and diffed (pure).

An `OpTable` is what `key_averages()` said about one profiled loop of `loops` iterations: per op
name, how often it ran and its self and total CPU time (µs, as torch reports them). Tables of one
variant are combined into per-iteration rates, and two variants' rates are diffed: the ops whose
calls or times changed, and the ops present in only one variant (an op that disappeared is what
bypassing the dispatcher looks like).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class OpTableFormatError(ValueError):
    """An op table (a worker reply or a stored artifact) does not have the expected shape."""


@dataclass(frozen=True)
class LaunchedKernel:
    """A kernel or copy an op's calls launched at one position of a call (0: the first)."""

    position: int
    name: str
    count: int
    device_us: float


@dataclass(frozen=True)
class OpStats:
    """One op's row of a profiled loop's key_averages(): its calls, its CPU and device time, and the
    kernels it launched."""

    name: str
    count: int
    self_cpu_us: float  # key_averages' self_cpu_time_total: time in the op minus its child ops
    cpu_us: float  # cpu_time_total: including child ops
    on_device: bool = False  # a kernel or a copy the device ran, not a host-side call
    self_device_us: float = 0.0  # self_device_time_total: time on the device
    kernels: tuple[LaunchedKernel, ...] = ()  # what this op's calls launched on the device


@dataclass(frozen=True)
class OpTable:
    """key_averages() of one profiled loop of `loops` iterations."""

    loops: int
    wall_ns: int  # the loop's wall time under the profiler
    ops: tuple[OpStats, ...]
    torch_version: str | None = None
    cpu_capability: str | None = None  # torch.backends.cpu.get_cpu_capability()
    device: str | None = None  # "cuda" where the profile recorded the device's activity too
    # the worker's thread waiting for a CPU during the loop (other processes' turns), or None
    run_queue_ns: int | None = None

    @property
    def self_cpu_us(self) -> float:
        """All ops' self time: each microsecond inside an op is counted once."""
        return sum(op.self_cpu_us for op in self.ops)

    def to_json(self) -> dict[str, Any]:
        """The worker's reply shape (minus "ok"), so stored artifacts read like the protocol."""
        out: dict[str, Any] = {
            "loops": self.loops,
            "wall_ns": self.wall_ns,
            "ops": [self._op_json(op) for op in self.ops],
            "torch_version": self.torch_version,
            "cpu_capability": self.cpu_capability,
        }
        if self.device is not None:
            out["device"] = self.device
        if self.run_queue_ns is not None:
            out["run_queue_ns"] = self.run_queue_ns
        return out

    def _op_json(self, op: OpStats) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": op.name,
            "count": op.count,
            "self_cpu_time_total_us": op.self_cpu_us,
            "cpu_time_total_us": op.cpu_us,
        }
        if self.device is not None:
            out["on_device"] = op.on_device
            out["self_device_time_total_us"] = op.self_device_us
        if op.kernels:
            out["kernels"] = [
                {
                    "position": k.position,
                    "name": k.name,
                    "count": k.count,
                    "device_time_total_us": k.device_us,
                }
                for k in op.kernels
            ]
        return out


def parse_op_table(data: Mapping[str, Any]) -> OpTable:
    """An `OpTable` from the worker's `torch_profile` reply or `OpTable.to_json()`."""
    try:
        ops = tuple(
            OpStats(
                name=str(op["name"]),
                count=int(op["count"]),
                self_cpu_us=float(op["self_cpu_time_total_us"]),
                cpu_us=float(op["cpu_time_total_us"]),
                on_device=bool(op.get("on_device", False)),
                self_device_us=float(op.get("self_device_time_total_us", 0.0)),
                kernels=tuple(
                    LaunchedKernel(
                        position=int(k["position"]),
                        name=str(k["name"]),
                        count=int(k["count"]),
                        device_us=float(k["device_time_total_us"]),
                    )
                    for k in op.get("kernels") or ()
                ),
            )
            for op in data["ops"]
            if op["name"] not in PROFILER_EVENTS  # stored before the worker left them out
        )
        loops = int(data["loops"])
        wall_ns = int(data.get("wall_ns") or 0)
    except (KeyError, TypeError, ValueError) as error:
        raise OpTableFormatError(f"not a torch op table: {error!r}") from error
    if loops <= 0:
        raise OpTableFormatError(f"an op table needs loops > 0, not {loops}")
    version, capability = data.get("torch_version"), data.get("cpu_capability")
    device = data.get("device")
    waited = data.get("run_queue_ns")
    return OpTable(
        loops=loops,
        wall_ns=wall_ns,
        ops=ops,
        torch_version=None if version is None else str(version),
        cpu_capability=None if capability is None else str(capability),
        device=None if device is None else str(device),
        run_queue_ns=None if waited is None else int(waited),
    )


@dataclass(frozen=True)
class OpRate:
    """One op of one variant, per iteration of the statement."""

    name: str
    calls_per_iteration: float
    self_us_per_iteration: float
    cpu_us_per_iteration: float


def op_rates(tables: Iterable[OpTable]) -> dict[str, OpRate]:
    """Per op, calls and times per iteration over several profiles: sums over the tables divided
    by all their loops, so a longer profile weighs more (it measured more iterations). Ops that
    never ran (count 0) are absent, and so are kernels and copies (the device's rows are
    `kernel_slots`)."""
    tables = list(tables)
    loops = sum(t.loops for t in tables)
    counts: dict[str, list[float]] = {}
    for table in tables:
        for op in table.ops:
            if op.count <= 0 or op.on_device:
                continue
            total = counts.setdefault(op.name, [0.0, 0.0, 0.0])
            total[0] += op.count
            total[1] += op.self_cpu_us
            total[2] += op.cpu_us
    return {
        name: OpRate(name, calls / loops, self_us / loops, cpu_us / loops)
        for name, (calls, self_us, cpu_us) in sorted(counts.items())
    }


def self_us_per_iteration(rates: Mapping[str, OpRate]) -> float:
    return sum(rate.self_us_per_iteration for rate in rates.values())


@dataclass(frozen=True)
class OpChange:
    """One op's calls and self time per iteration in the baseline and in the variant."""

    name: str
    baseline_calls_per_iteration: float  # 0 when the op does not run in the baseline
    variant_calls_per_iteration: float
    baseline_self_us_per_iteration: float
    variant_self_us_per_iteration: float

    @property
    def calls_delta(self) -> float:
        return self.variant_calls_per_iteration - self.baseline_calls_per_iteration

    @property
    def self_us_delta(self) -> float:
        return self.variant_self_us_per_iteration - self.baseline_self_us_per_iteration

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "baseline_calls_per_iteration": self.baseline_calls_per_iteration,
            "variant_calls_per_iteration": self.variant_calls_per_iteration,
            "baseline_self_us_per_iteration": self.baseline_self_us_per_iteration,
            "variant_self_us_per_iteration": self.variant_self_us_per_iteration,
        }


# Call counts per iteration closer than this are the same: a count is exact, but divided by
# different loop counts it may differ in the last bits.
_CALLS_TOLERANCE = 1e-9


def _size_of_change(change: OpChange) -> tuple[float, float, str]:
    calls = abs(change.calls_delta)
    return (-(calls if calls > _CALLS_TOLERANCE else 0.0), -abs(change.self_us_delta), change.name)


@dataclass(frozen=True)
class OpsDiff:
    """Every op of two variants paired by name, with the ops only one of them runs and their total
    self time."""

    changes: tuple[OpChange, ...]  # every op of either variant, largest change first
    appeared: tuple[str, ...]  # runs in the variant only
    disappeared: tuple[str, ...]  # runs in the baseline only
    baseline_self_us_per_iteration: float
    variant_self_us_per_iteration: float


def diff_ops(baseline: Mapping[str, OpRate], variant: Mapping[str, OpRate]) -> OpsDiff:
    """Every op of either side, paired by name. Ordered by the size of the change: ops whose calls
    per iteration changed come first (counts are exact, times are noisy and inflated by the
    profiler), largest change first, then by the change of self time per iteration."""
    absent = OpRate("", 0.0, 0.0, 0.0)
    changes = [
        OpChange(
            name=name,
            baseline_calls_per_iteration=baseline.get(name, absent).calls_per_iteration,
            variant_calls_per_iteration=variant.get(name, absent).calls_per_iteration,
            baseline_self_us_per_iteration=baseline.get(name, absent).self_us_per_iteration,
            variant_self_us_per_iteration=variant.get(name, absent).self_us_per_iteration,
        )
        for name in set(baseline) | set(variant)
    ]
    return OpsDiff(
        changes=tuple(sorted(changes, key=_size_of_change)),
        appeared=tuple(sorted(set(variant) - set(baseline))),
        disappeared=tuple(sorted(set(baseline) - set(variant))),
        baseline_self_us_per_iteration=self_us_per_iteration(baseline),
        variant_self_us_per_iteration=self_us_per_iteration(variant),
    )


def versions_of(tables: Sequence[OpTable]) -> tuple[list[str], list[str]]:
    """The torch versions and CPU capabilities seen in a variant's tables (normally one each)."""
    versions = sorted({t.torch_version for t in tables if t.torch_version is not None})
    capabilities = sorted({t.cpu_capability for t in tables if t.cpu_capability is not None})
    return versions, capabilities


# Host-side runtime calls that launch a kernel, and those that wait for the device.
LAUNCH_CALLS = frozenset(
    {
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
    }
)
SYNC_CALLS = frozenset({"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize"})
COPY_PREFIXES = ("Memcpy", "Memset")  # the device's copy and fill activities
# The profiler's own events, not the statement's (CUPTI's buffer allocation, once a process).
PROFILER_EVENTS = frozenset({"Activity Buffer Request"})


class DeviceBound(StrEnum):
    """What limits a statement that launches device work: the host issuing it (dispatch and
    launches take longer than the kernels run) or the device running it."""

    LAUNCH = "launch-bound"
    DEVICE = "device-bound"


@dataclass(frozen=True)
class KernelRate:
    """One device kernel's launches and device time per iteration."""

    name: str
    calls_per_iteration: float
    device_us_per_iteration: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "calls_per_iteration": self.calls_per_iteration,
            "device_us_per_iteration": self.device_us_per_iteration,
        }


@dataclass(frozen=True)
class DeviceActivity:
    """A variant's device work per iteration, from the profiles that recorded the device."""

    host_us_per_iteration: float  # self CPU time of the host-side ops: dispatch and launches
    device_us_per_iteration: float  # self device time of kernels and copies
    launches_per_iteration: float
    copies_per_iteration: float
    synchronisations_per_iteration: float  # the statement's own (the worker leaves out its)
    kernels: tuple[KernelRate, ...]  # most device time first
    wait_us_per_iteration: float = 0.0  # host time in synchronisations: waiting, not working

    @property
    def pace_us_per_iteration(self) -> float:
        """The side that sets the pace: the host issuing work, or the device doing it."""
        return max(self.host_us_per_iteration, self.device_us_per_iteration)

    @property
    def bound(self) -> DeviceBound:
        if self.host_us_per_iteration >= self.device_us_per_iteration:
            return DeviceBound.LAUNCH
        return DeviceBound.DEVICE

    def to_json(self) -> dict[str, Any]:
        return {
            "host_us_per_iteration": self.host_us_per_iteration,
            "device_us_per_iteration": self.device_us_per_iteration,
            "launches_per_iteration": self.launches_per_iteration,
            "copies_per_iteration": self.copies_per_iteration,
            "synchronisations_per_iteration": self.synchronisations_per_iteration,
            "wait_us_per_iteration": self.wait_us_per_iteration,
            "bound": str(self.bound),
            "kernels": [kernel.to_json() for kernel in self.kernels],
        }


def device_activity(tables: Iterable[OpTable]) -> DeviceActivity | None:
    """Per iteration over the tables that recorded the device; None where none did."""
    tables = [t for t in tables if t.device is not None]
    if not tables:
        return None
    loops = sum(t.loops for t in tables)
    ops = [op for t in tables for op in t.ops]
    host = [op for op in ops if not op.on_device]
    device = [op for op in ops if op.on_device]
    kernels: dict[str, list[float]] = {}
    for op in device:
        if not op.name.startswith(COPY_PREFIXES):
            total = kernels.setdefault(op.name, [0.0, 0.0])
            total[0] += op.count
            total[1] += op.self_device_us
    rates = [KernelRate(n, c / loops, us / loops) for n, (c, us) in kernels.items()]
    waits = [op for op in host if op.name in SYNC_CALLS]
    return DeviceActivity(
        # a synchronisation's time is the host waiting for the device, not issuing work
        host_us_per_iteration=sum(op.self_cpu_us for op in host if op.name not in SYNC_CALLS)
        / loops,
        device_us_per_iteration=sum(op.self_device_us for op in device) / loops,
        launches_per_iteration=sum(op.count for op in host if op.name in LAUNCH_CALLS) / loops,
        copies_per_iteration=sum(op.count for op in device if op.name.startswith(COPY_PREFIXES))
        / loops,
        synchronisations_per_iteration=sum(op.count for op in waits) / loops,
        kernels=tuple(sorted(rates, key=lambda k: (-k.device_us_per_iteration, k.name))),
        wait_us_per_iteration=sum(op.self_cpu_us for op in waits) / loops,
    )


class LaunchKind(StrEnum):
    """What an op put on the device: a kernel, or a copy or fill."""

    KERNEL = "kernel"
    COPY = "copy"  # a copy or a fill (Memcpy, Memset)


def launch_kind(name: str) -> LaunchKind:
    return LaunchKind.COPY if name.startswith(COPY_PREFIXES) else LaunchKind.KERNEL


@dataclass(frozen=True)
class KernelSlot:
    """What one op launched at one place of its calls, per iteration: the op's `ordinal`-th
    kernel (or copy). The slot, not the kernel's name, is what pairs across variants: a
    library update or a flag that picks another kernel for the same work renames it."""

    op: str
    kind: LaunchKind
    ordinal: int
    names: tuple[str, ...]  # most device time first; several where calls chose differently
    calls_per_iteration: float
    device_us_per_iteration: float


def kernel_slots(tables: Iterable[OpTable]) -> dict[tuple[str, LaunchKind, int], KernelSlot]:
    """Per (op, kind, ordinal) over the tables that recorded the device. The ordinal counts an
    op's launches of one kind in the order of a call, so that a fill added before a kernel
    (cuBLAS zeroing a workspace) leaves the kernel in its slot."""
    tables = [t for t in tables if t.device is not None]
    loops = sum(t.loops for t in tables)
    totals: dict[tuple[str, LaunchKind, int], dict[str, list[float]]] = {}
    for table in tables:
        for op in table.ops:
            positions: dict[LaunchKind, list[int]] = {}
            for kernel in op.kernels:
                kind = launch_kind(kernel.name)
                known = positions.setdefault(kind, [])
                if kernel.position not in known:
                    known.append(kernel.position)
            for kind in positions:
                positions[kind].sort()
            for kernel in op.kernels:
                kind = launch_kind(kernel.name)
                key = (op.name, kind, positions[kind].index(kernel.position))
                total = totals.setdefault(key, {}).setdefault(kernel.name, [0.0, 0.0])
                total[0] += kernel.count
                total[1] += kernel.device_us
    return {
        key: KernelSlot(
            op=key[0],
            kind=key[1],
            ordinal=key[2],
            names=tuple(sorted(names, key=lambda n: (-names[n][1], n))),
            calls_per_iteration=sum(c for c, _ in names.values()) / loops,
            device_us_per_iteration=sum(us for _, us in names.values()) / loops,
        )
        for key, names in sorted(totals.items())
    }


@dataclass(frozen=True)
class KernelChange:
    """One slot of both variants: its kernel in each (None where the slot is empty there)."""

    op: str
    kind: LaunchKind
    ordinal: int
    baseline_kernel: str | None
    variant_kernel: str | None
    baseline_calls_per_iteration: float
    variant_calls_per_iteration: float
    baseline_device_us_per_iteration: float
    variant_device_us_per_iteration: float

    @property
    def renamed(self) -> bool:
        """The same slot ran another kernel: the work is the op's, the implementation not."""
        return (
            self.baseline_kernel is not None
            and self.variant_kernel is not None
            and self.baseline_kernel != self.variant_kernel
        )

    @property
    def device_us_delta(self) -> float:
        return self.variant_device_us_per_iteration - self.baseline_device_us_per_iteration

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "kind": str(self.kind),
            "ordinal": self.ordinal,
            "baseline_kernel": self.baseline_kernel,
            "variant_kernel": self.variant_kernel,
            "renamed": self.renamed,
            "baseline_calls_per_iteration": self.baseline_calls_per_iteration,
            "variant_calls_per_iteration": self.variant_calls_per_iteration,
            "baseline_device_us_per_iteration": self.baseline_device_us_per_iteration,
            "variant_device_us_per_iteration": self.variant_device_us_per_iteration,
        }


def diff_kernels(
    baseline: Mapping[tuple[str, LaunchKind, int], KernelSlot],
    variant: Mapping[tuple[str, LaunchKind, int], KernelSlot],
) -> tuple[KernelChange, ...]:
    """Every slot of either variant, paired by op, kind and ordinal; largest change of device
    time first."""
    changes = []
    for key in set(baseline) | set(variant):
        base, var = baseline.get(key), variant.get(key)
        changes.append(
            KernelChange(
                op=key[0],
                kind=key[1],
                ordinal=key[2],
                baseline_kernel=None if base is None else base.names[0],
                variant_kernel=None if var is None else var.names[0],
                baseline_calls_per_iteration=0.0 if base is None else base.calls_per_iteration,
                variant_calls_per_iteration=0.0 if var is None else var.calls_per_iteration,
                baseline_device_us_per_iteration=0.0
                if base is None
                else base.device_us_per_iteration,
                variant_device_us_per_iteration=0.0 if var is None else var.device_us_per_iteration,
            )
        )
    return tuple(sorted(changes, key=lambda c: (-abs(c.device_us_delta), c.op, c.ordinal)))
