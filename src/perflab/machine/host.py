"""Machine facts recorded with every run, so an unfair or noisy setup is visible later."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.records.model import VARIANT_FIELDS, Variant, VariantFieldKind
from perflab.records.run_facts import MachineInfo

_TOOLS_VERSION_ARGS: dict[str, tuple[str, ...]] = {
    "perf": ("perf", "--version"),
    "valgrind": ("valgrind", "--version"),
    "gcc": ("gcc", "--version"),
    "objdump": ("objdump", "--version"),
    "llvm-mca": ("llvm-mca", "--version"),
}


def read_text(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def process_age_s(stat: str | None = None, uptime: str | None = None) -> float | None:
    """How long ago this process started (seconds, to the kernel's clock tick), from
    /proc/self/stat and /proc/uptime; None where they cannot be read."""
    stat = read_text("/proc/self/stat") if stat is None else stat
    uptime = read_text("/proc/uptime") if uptime is None else uptime
    if not stat or not uptime:
        return None
    try:
        # the command name (field 2) may hold spaces and parentheses: count after its last ")"
        start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
        return max(0.0, float(uptime.split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (IndexError, ValueError, OSError):
        return None


def process_command(pid: int, *, limit: int = 80) -> str | None:
    """Another process's command line, shortened to `limit` characters, for messages; None
    where it cannot be read (gone, another user's, no /proc)."""
    if pid <= 0:
        return None
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    text = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part)
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cpuinfo_fields(text: str) -> dict[str, str]:
    """The first processor's `key : value` lines of /proc/cpuinfo."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return fields


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The first processor's flags from /proc/cpuinfo text (avx512f, hypervisor ...)."""
    return frozenset(cpuinfo_fields(cpuinfo).get("flags", "").split())


def online_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def default_measurement_cpu() -> int:
    """The last CPU we may run on: CPU 0 takes most interrupts and housekeeping."""
    return online_cpus()[-1]


def boost_state() -> str:
    no_turbo = read_text("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        return "off" if no_turbo == "1" else "on"
    boost = read_text("/sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        return "on" if boost == "1" else "off"
    return "unknown (no cpufreq control: a VM, or the driver hides it)"


def tool_version(
    runner: ProcessRunner, argv: Sequence[str], *, timeout_s: float = 10
) -> str | None:
    """The first line a tool prints for `--version` (stdout, else stderr); None if it fails."""
    completed = runner.run(LaunchSpec(argv=tuple(argv)), timeout_s=timeout_s)
    if not completed.ok:
        return None
    first = (completed.stdout or completed.stderr).strip().splitlines()
    return first[0] if first else None


# the facts machine_facts gathers, in the order the JSON document's `machine` writes them, each
# written even when unknown (null): outside checks read these keys (add, never rename)
GATHERED_FACTS = (
    "hostname", "cpu_model", "cpu_flags", "avx512", "cores", "hypervisor", "hypervisor_vendor",
    "governor", "boost", "smt", "kernel", "os", "perf_event_paranoid", "aslr", "load_average",
    "pinned_cpu", "perflab_python", "tools",
)  # fmt: skip


def machine_facts(runner: ProcessRunner, *, cpu: int | None) -> MachineInfo:
    """The facts of this machine a run stores beside its samples (CPU, kernel, frequency, load
    ...)."""
    info = cpuinfo_fields(read_text("/proc/cpuinfo") or "")
    flags = tuple(info.get("flags", "").split())
    return MachineInfo(
        hostname=platform.node(),
        cpu_model=info.get("model name", platform.processor()),
        cpu_flags=flags,
        avx512=any(f.startswith("avx512") for f in flags),
        cores=os.cpu_count(),
        hypervisor="hypervisor" in flags,
        hypervisor_vendor=read_text("/sys/class/dmi/id/sys_vendor"),
        governor=read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        boost=boost_state(),
        smt=read_text("/sys/devices/system/cpu/smt/active"),
        kernel=platform.release(),
        os=platform.platform(),
        perf_event_paranoid=read_text("/proc/sys/kernel/perf_event_paranoid"),
        aslr=read_text("/proc/sys/kernel/randomize_va_space"),
        load_average=os.getloadavg(),
        pinned_cpu=cpu,
        perflab_python=sys.version.split()[0],
        tools={name: tool_version(runner, argv) for name, argv in _TOOLS_VERSION_ARGS.items()},
        keys=GATHERED_FACTS,
    )


def variant_differences(variants: Sequence[Variant]) -> list[str]:
    """What differs between the variants' set-ups, in words (the environment a variable at a
    time, then each field); empty for an A/A test."""
    differences = []
    keys = sorted({k for v in variants for k in v.env})
    for key in keys:
        values = {v.name: v.env.get(key) for v in variants}
        if len(set(values.values())) > 1:
            differences.append(
                f"env {key}: " + ", ".join(f"{n}={_shown(x)}" for n, x in values.items())
            )
    for spec in VARIANT_FIELDS:
        if spec.kind is VariantFieldKind.TABLE:
            continue
        if len({spec.joined(getattr(v, spec.name)) for v in variants}) > 1:
            shown = {v.name: spec.shown(getattr(v, spec.name)) for v in variants}
            differences.append(
                f"{spec.name}: " + ", ".join(f"{n}={_shown(x)}" for n, x in shown.items())
            )
    return differences


def _shown(value: str | None) -> str:
    return "(unset)" if value is None else value


def interpreter_differences(variant_info: Mapping[str, Mapping[str, Any]]) -> list[str]:
    versions = {name: info.get("python_version") for name, info in variant_info.items()}
    if len({v for v in versions.values() if v}) > 1:
        return ["python version: " + ", ".join(f"{n}={v}" for n, v in versions.items())]
    return []
