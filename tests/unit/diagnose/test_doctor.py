"""doctor on described machines: a fake host and a fake runner, no real tools."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from perflab.diagnose.doctor import Status, diagnose
from perflab.machine.cpu_lock import try_lock
from perflab.machine.fake_processes import FakeRunner as ScriptedRunner
from perflab.machine.proc import Completed
from perflab.records.kinds import Metric

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.diagnose.doctor"

DATA = Path(__file__).parents[2] / "golden" / "data" / "perf"


class FakeHost:
    def __init__(self, files: Mapping[str, str], tools: Sequence[str], root: bool = False) -> None:
        self.files = dict(files)
        self.tools = set(tools)
        self.root = root

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def glob(self, pattern: str) -> list[str]:
        prefix = pattern.split("[")[0]
        return sorted(p for p in self.files if p.startswith(prefix) and p.endswith("governor"))

    def which(self, tool: str) -> str | None:
        return f"/usr/bin/{tool}" if tool in self.tools else None

    def cpu_count(self) -> int:
        return 8

    def is_root(self) -> bool:
        return self.root

    def has_module(self, name: str) -> bool:
        return name in self.tools


def FakeRunner(stat_stderr: str, sampled: str) -> ScriptedRunner:  # noqa: N802
    """perf stat prints `stat_stderr`, perf evlist names `sampled`, tools say version 1.0."""
    return (
        ScriptedRunner()
        .on_run(r"^\S+ stat ", stderr=stat_stderr)
        .on_run(r"^\S+ evlist ", stdout=sampled + "\n")
        .on_run(
            r".",
            lambda spec, stdin: Completed(spec.argv, 0, f"{Path(spec.argv[0]).name} 1.0\n", "", 1),
        )
    )


BARE_METAL = {
    "/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu avx512f\n",
    "/proc/sys/kernel/perf_event_paranoid": "2",
    "/sys/devices/system/cpu/intel_pstate/no_turbo": "0",
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave",
    "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance",
    "/sys/devices/system/cpu/smt/active": "1",
    "/sys/devices/system/cpu/cpu7/topology/thread_siblings_list": "3,7",
    "/proc/loadavg": "0.10 0.20 0.30 1/200 1234",
    "/proc/sys/kernel/nmi_watchdog": "1",
}


def test_bare_metal_non_root_with_noise_sources() -> None:
    counted = (
        "1.0,msec,task-clock,1,100.00,,\n100,,cycles,1,100.00,,\n90,,instructions,1,100.00,,\n"
    )
    report = diagnose(
        FakeRunner(counted, "cycles"),
        host=FakeHost(BARE_METAL, ["perf", "valgrind", "objdump", "llvm-mca-14"]),
    )
    lenses = {lens.lens: lens for lens in report.lenses}
    assert lenses[Metric.COUNTERS].available and "hardware" in lenses[Metric.COUNTERS].detail
    assert lenses[Metric.PROFILE].detail == "samples cycles"
    tools = {check.name: check for check in report.tools}
    assert tools["perf_event_paranoid"].status is Status.WARNING
    assert "perf_event_paranoid=1" in (tools["perf_event_paranoid"].fix or "")
    assert tools["llvm-mca"].detail == "/usr/bin/llvm-mca-14"
    assert tools["headless browser"].status is Status.MISSING
    noise = {check.name: check for check in report.noise}
    assert (
        noise["turbo boost"].fix
        == "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"
    )
    assert (
        "cpu0" in noise["cpufreq governor"].detail
        and "cpu1" not in noise["cpufreq governor"].detail
    )
    assert "3,7" in noise["SMT"].detail
    assert noise["load"].status is Status.OK
    assert noise["NMI watchdog"].fix == "sudo sysctl kernel.nmi_watchdog=0"
    assert "hypervisor" not in noise
    assert report.to_json()["noise"][0]["name"] == "turbo boost"


def test_vm_without_pmu_and_without_perf_record_cycles() -> None:
    files = {
        "/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu hypervisor avx512f\n",
        "/proc/loadavg": "9.0 1 1 1/1 1",
    }
    report = diagnose(
        FakeRunner((DATA / "stat_vm_no_pmu.csv").read_text(), "cpu-clock"),
        host=FakeHost(files, ["perf"], root=True),
    )
    lenses = {lens.lens: lens for lens in report.lenses}
    assert lenses[Metric.COUNTERS].available
    assert "software events only" in lenses[Metric.COUNTERS].detail
    assert not lenses[Metric.INSTRUCTIONS].available
    tools = {check.name: check for check in report.tools}
    assert tools["hardware counters"].status is Status.MISSING
    assert "VM" in tools["hardware counters"].detail
    assert "cpu-clock" in tools["perf record"].detail
    noise = {check.name: check for check in report.noise}
    assert noise["hypervisor"].status is Status.WARNING
    assert noise["load"].status is Status.WARNING


def test_every_registered_lens_is_listed() -> None:
    from perflab.lenses.registry import available_metrics

    report = diagnose(
        FakeRunner((DATA / "stat_vm_no_pmu.csv").read_text(), "cpu-clock"),
        host=FakeHost(BARE_METAL, ["perf", "torch"]),
    )
    assert [lens.lens for lens in report.lenses] == list(available_metrics())
    torch = next(lens for lens in report.lenses if lens.lens == Metric.TORCH)
    assert torch.available and "torch.profiler" in torch.detail


# a lock directory of its own: the other xdist worker's runs hold CPUs in the shared one
@pytest.mark.usefixtures("private_cpu_locks")
def test_a_busy_machine_and_another_perflab_run_holding_a_cpu_are_named() -> None:
    busy = dict(BARE_METAL, **{"/proc/loadavg": "7.50 3.00 2.00 5/200 1234"})
    host = FakeHost(busy, ["perf", "valgrind", "objdump"])
    runner = FakeRunner("1.0,msec,task-clock,1,100.00,,\n", "cpu-clock")
    checks = {check.name: check for check in diagnose(runner, host=host).noise}
    assert checks["load"].status is Status.WARNING and "takes the time" in checks["load"].detail
    assert checks["other perflab runs"].status is Status.OK
    lock = try_lock(3)  # in this test's own lock directory
    assert lock is not None
    try:
        checks = {check.name: check for check in diagnose(runner, host=host).noise}
    finally:
        lock.close()
    held = checks["other perflab runs"]
    assert held.status is Status.WARNING and f"pid {os.getpid()} on CPU 3" in held.detail
