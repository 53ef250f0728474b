"""`perflab doctor`: what this machine can measure, what makes its numbers noisy, and the command
that fixes each problem.

Every probe of a tool goes through the ProcessRunner seam, and every file read through a
:class:`HostFiles` reader, so tests can describe any machine.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from perflab.lenses.descriptor import ProbeFacts
from perflab.lenses.registry import DESCRIPTORS
from perflab.machine import cpu_lock
from perflab.machine.gpu import gpu_checks
from perflab.machine.host import cpu_flags, read_text, tool_version
from perflab.machine.proc import LaunchSpec, ProcessRunner, SubprocessRunner
from perflab.machine.scratch import private_folder
from perflab.records.checks import Check as Check
from perflab.records.checks import DoctorReport as DoctorReport
from perflab.records.checks import LensStatus as LensStatus
from perflab.records.checks import Status as Status
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.perf import (
    CallGraph,
    RecordOptions,
    probe_stat,
    record_argv,
    sampled_events,
)


class HostFiles(Protocol):
    """The machine as doctor's probes read it (files, globs, tools on PATH, CPUs, root, modules), so
    tests can describe any machine."""

    def read(self, path: str) -> str | None: ...

    def glob(self, pattern: str) -> list[str]: ...

    def which(self, tool: str) -> str | None: ...

    def cpu_count(self) -> int: ...

    def is_root(self) -> bool: ...

    def has_module(self, name: str) -> bool: ...


class RealHost:
    """The HostFiles of the machine perflab runs on."""

    def read(self, path: str) -> str | None:
        return read_text(path)

    def glob(self, pattern: str) -> list[str]:
        return sorted(glob.glob(pattern))

    def which(self, tool: str) -> str | None:
        return shutil.which(tool)

    def cpu_count(self) -> int:
        return os.cpu_count() or 1

    def is_root(self) -> bool:
        return os.geteuid() == 0

    def has_module(self, name: str) -> bool:
        return importlib.util.find_spec(name) is not None


_LLVM_VERSIONS = ("", "-19", "-18", "-17", "-16", "-15", "-14")
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "firefox")


def _find_llvm(host: HostFiles, tool: str) -> str | None:
    for suffix in _LLVM_VERSIONS:
        path = host.which(tool + suffix)
        if path:
            return path
    return None


@dataclass(frozen=True)
class _PerfFacts:
    present: bool
    version: str | None
    software: bool
    hardware: bool
    sampled_event: str | None


def _perf_facts(runner: ProcessRunner, host: HostFiles) -> _PerfFacts:
    perf = host.which("perf")
    if perf is None:
        return _PerfFacts(False, None, False, False, None)
    version = tool_version(runner, (perf, "--version"), timeout_s=30)
    counts = probe_stat(
        runner, ["task-clock", "cycles", "instructions"], perf=perf, timeout_s=30
    ).counts

    def usable(name: str) -> bool:
        count = counts.get(name)
        return count is not None and count.availability.usable

    sampled = None
    with private_folder("doctor") as tmp:
        data = Path(tmp) / "probe.data"
        # cycles alone: whether perf samples it here, or falls back (read back below)
        cycles = RecordOptions(call_graph=CallGraph.NONE, no_bpf_event=False)
        record = runner.run(
            LaunchSpec(argv=(*record_argv(perf, data, cycles), "true")), timeout_s=30
        )
        if record.ok:
            sampled = next(iter(sampled_events(runner, perf, data, timeout_s=30)), None)
    return _PerfFacts(
        True, version, usable("task-clock"), usable("cycles") and usable("instructions"), sampled
    )


def _hypervisor(host: HostFiles) -> bool:
    return "hypervisor" in cpu_flags(host.read("/proc/cpuinfo") or "")


def _tool_checks(runner: ProcessRunner, host: HostFiles, perf: _PerfFacts) -> list[Check]:
    checks = _perf_checks(host, perf)
    paranoid = _paranoid_check(host)
    if paranoid is not None:
        checks.append(paranoid)
    valgrind = host.which("valgrind")
    version = tool_version(runner, (valgrind, "--version"), timeout_s=30) if valgrind else None
    checks.append(
        _installed(
            "valgrind",
            (version or "present") if valgrind else None,
            "not installed: no instructions lens",
            "sudo apt-get install valgrind",
        )
    )
    objdump = host.which("objdump")
    objdump_version = (
        (tool_version(runner, (objdump, "--version"), timeout_s=30) or "present")
        if objdump
        else None
    )
    checks.append(
        _installed("objdump", objdump_version, "not installed", "sudo apt-get install binutils")
    )
    for tool in ("llvm-objdump", "llvm-mca", "llvm-symbolizer"):
        path = _find_llvm(host, tool)
        checks.append(_installed(tool, path, "not installed", "sudo apt-get install llvm"))
    addr2line = host.which("addr2line")
    checks.append(
        Check("addr2line", Status.OK if addr2line else Status.MISSING, addr2line or "not installed")
    )
    browser = next((path for name in _BROWSERS if (path := host.which(name))), None)
    checks.append(
        _installed(
            "headless browser",
            browser,
            "none found: HTML report tests that render in a browser are skipped",
            "sudo apt-get install chromium",
        )
    )
    return checks


def _installed(name: str, found: str | None, missing: str, fix: str) -> Check:
    """OK with what was found (a version, a path); MISSING, with how to install it, else."""
    if found:
        return Check(name, Status.OK, found)
    return Check(name, Status.MISSING, missing, fix)


def _perf_checks(host: HostFiles, perf: _PerfFacts) -> list[Check]:
    """perf itself, whether the hardware counters count, and what `perf record` samples."""
    if not perf.present:
        return [
            Check(
                "perf",
                Status.MISSING,
                "not installed: no counters or profile lens",
                "sudo apt-get install linux-perf  (Ubuntu: linux-tools-$(uname -r))",
            )
        ]
    checks = [Check("perf", Status.OK, perf.version or "present")]
    if perf.hardware:
        checks.append(Check("hardware counters", Status.OK, "cycles and instructions count"))
    else:
        vm = _hypervisor(host)
        checks.append(
            Check(
                "hardware counters",
                Status.MISSING,
                "cycles/instructions are <not supported>"
                + (": this VM exposes no PMU" if vm else ""),
                "run on bare metal, or enable a virtual PMU (KVM/libvirt: "
                "<cpu mode='host-passthrough'/> with <pmu state='on'/>)"
                if vm
                else "check the kernel's PMU driver for this CPU: dmesg | grep -i pmu",
            )
        )
    if perf.sampled_event and perf.sampled_event.split(":")[0] != "cycles":
        checks.append(
            Check(
                "perf record",
                Status.WARNING,
                f"`perf record -e cycles` silently samples {perf.sampled_event} instead",
                "profiles are then of CPU time; cycles need a hardware PMU",
            )
        )
    return checks


def _paranoid_check(host: HostFiles) -> Check | None:
    paranoid = host.read("/proc/sys/kernel/perf_event_paranoid")
    if not paranoid or not paranoid.lstrip("-").isdigit():
        return None
    level = int(paranoid)
    restricted = level >= 2 and not host.is_root()
    return Check(
        "perf_event_paranoid",
        Status.WARNING if restricted else Status.OK,
        f"kernel.perf_event_paranoid={level}"
        + (", running as root" if host.is_root() else "")
        + ("; kernel events are excluded for this user" if restricted else ""),
        "sudo sysctl kernel.perf_event_paranoid=1  (or: sudo setcap "
        "cap_perfmon,cap_sys_ptrace+ep $(command -v perf))"
        if restricted
        else None,
    )


def _perflab_runs_check(held: dict[int, int]) -> Check:
    """Other perflab runs measuring now (the per-CPU locks, machine/cpu_lock.py)."""
    if not held:
        return Check("other perflab runs", Status.OK, "none measuring now")
    runs = ", ".join(f"pid {pid or '?'} on CPU {cpu}" for cpu, pid in sorted(held.items()))
    return Check(
        "other perflab runs",
        Status.WARNING,
        f"measuring now: {runs}; a run started now picks a free CPU, or waits for one and "
        "then shares it (and says so)",
        "wait for them, or give each run its own CPU (--cpu N)",
    )


def _noise_checks(host: HostFiles, cpu: int | None, held: dict[int, int]) -> list[Check]:
    checks = [
        _boost_check(host),
        _governor_check(host),
        _smt_check(host, cpu),
        _load_check(host),
        _perflab_runs_check(held),
        _hypervisor_check(host),
        _watchdog_check(host),
        _isolated_check(host),
    ]
    return [check for check in checks if check is not None]


def _boost_check(host: HostFiles) -> Check:
    no_turbo = host.read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        fix = "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"
        return _clock_boost("turbo boost", on=no_turbo == "0", fix=fix)
    boost = host.read("/sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        fix = "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"
        return _clock_boost("boost", on=boost == "1", fix=fix)
    return Check("boost", Status.INFO, "not controllable here (no cpufreq: a VM, or hidden)")


def _clock_boost(name: str, *, on: bool, fix: str) -> Check:
    if on:
        return Check(name, Status.WARNING, "on: the clock follows temperature and load", fix)
    return Check(name, Status.OK, "off", None)


def _governor_check(host: HostFiles) -> Check | None:
    governors = {
        path.split("/")[5]: value
        for path in host.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
        if (value := host.read(path)) is not None
    }
    if not governors:
        return None
    slow = sorted(cpu_name for cpu_name, value in governors.items() if value != "performance")
    return Check(
        "cpufreq governor",
        Status.WARNING if slow else Status.OK,
        f"not 'performance' on {', '.join(slow)}" if slow else "performance everywhere",
        "sudo cpupower frequency-set -g performance" if slow else None,
    )


def _smt_check(host: HostFiles, cpu: int | None) -> Check | None:
    smt = host.read("/sys/devices/system/cpu/smt/active")
    if smt == "0":
        return Check("SMT", Status.OK, "off")
    if smt != "1":
        return None
    target = cpu if cpu is not None else host.cpu_count() - 1
    siblings = host.read(f"/sys/devices/system/cpu/cpu{target}/topology/thread_siblings_list")
    return Check(
        "SMT",
        Status.WARNING,
        f"on: CPU {target} shares its core with {siblings or 'a sibling'}; anything "
        "running there slows the measurement",
        "echo off | sudo tee /sys/devices/system/cpu/smt/control  (or keep it idle)",
    )


def _load_check(host: HostFiles) -> Check | None:
    loadavg = host.read("/proc/loadavg")
    if not loadavg:
        return None
    load = float(loadavg.split()[0])
    busy = load > 0.5 * host.cpu_count()
    return Check(
        "load",
        Status.WARNING if busy else Status.OK,
        f"1-minute load {load:.2f} on {host.cpu_count()} CPUs"
        + (
            ": other processes will take turns on the measuring CPU; the time lens "
            "takes the time they took out of each sample, says how much in a note, "
            "and needs more time to decide"
            if busy
            else ""
        ),
        "stop other work (see `top -o %CPU`) before measuring" if busy else None,
    )


def _hypervisor_check(host: HostFiles) -> Check | None:
    if not _hypervisor(host):
        return None
    return Check(
        "hypervisor",
        Status.WARNING,
        "running in a VM: steal time and neighbours add noise; expect a few % spread",
        "use bare metal or a dedicated-host instance for small effects",
    )


def _watchdog_check(host: HostFiles) -> Check | None:
    if host.read("/proc/sys/kernel/nmi_watchdog") != "1":
        return None
    return Check(
        "NMI watchdog",
        Status.WARNING,
        "on: it holds one hardware counter, so more events multiplex",
        "sudo sysctl kernel.nmi_watchdog=0",
    )


def _isolated_check(host: HostFiles) -> Check:
    isolated = host.read("/sys/devices/system/cpu/isolated")
    if isolated:
        return Check("isolated CPUs", Status.OK, isolated)
    return Check(
        "isolated CPUs",
        Status.INFO,
        "none: the scheduler may run other tasks on the measurement CPU",
        "boot with isolcpus=N nohz_full=N rcu_nocbs=N for the CPU perflab pins to",
    )


def _lenses(host: HostFiles, perf: _PerfFacts) -> list[LensStatus]:
    """Every registered lens's own probe, on what doctor found."""
    facts = ProbeFacts(
        which=host.which,
        find_llvm=lambda tool: _find_llvm(host, tool),
        has_module=host.has_module,
        perf_present=perf.present,
        perf_software=perf.software,
        perf_hardware=perf.hardware,
        perf_sampled_event=perf.sampled_event,
    )
    statuses = []
    for descriptor in DESCRIPTORS:
        probe = descriptor.probe(facts)
        statuses.append(LensStatus(descriptor.metric, probe.available, probe.detail, probe.fix))
    return statuses


def analysis_cache_check(cache: AnalysisCache) -> Check:
    """Where the analysis cache is, how full, and how to bypass or clear it."""
    usage = cache.usage()
    return Check(
        "analysis cache",
        Status.INFO,
        f"{usage.path}: {usage.entries} entries, {usage.bytes / 2**20:.1f} MiB of at most "
        f"{usage.max_bytes / 2**20:.0f} MiB (symbol tables, disassembly, inline frames and "
        "llvm-mca results of the asm lens, by build-id)",
        fix=f"bypass it with --no-analysis-cache; clear it with rm -r {usage.path}",
    )


def diagnose(
    runner: ProcessRunner | None = None,
    *,
    host: HostFiles | None = None,
    cpu: int | None = None,
    analysis_cache: AnalysisCache | None = None,
) -> DoctorReport:
    """Probe this machine: which lenses work, which tools are present, and what adds noise."""
    runner = runner or SubprocessRunner()
    host = host or RealHost()
    perf = _perf_facts(runner, host)
    tools = _tool_checks(runner, host, perf)
    tools.append(analysis_cache_check(analysis_cache or AnalysisCache.default()))
    tools += gpu_checks(runner, host.which("nvidia-smi"), host.has_module("torch"))
    return DoctorReport(
        lenses=tuple(_lenses(host, perf)),
        tools=tuple(tools),
        noise=tuple(_noise_checks(host, cpu, cpu_lock.held_cpus(list(range(host.cpu_count()))))),
    )
