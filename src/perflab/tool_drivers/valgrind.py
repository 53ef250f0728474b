"""valgrind (callgrind) and vgdb, started behind narrow calls: callgrind's command line and
its fixed cache geometry, vgdb's, whether valgrind runs here, and valgrind's words when it meets
code it cannot execute. Counting with them (workers, loops, switching, dumps) is
perflab.measure.callgrind's; what callgrind writes is parsed in perflab.tool_output.callgrind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from perflab.machine.host import cpu_flags, read_text
from perflab.machine.proc import LaunchSpec, ProcessRunner
from perflab.records.errors import BenchmarkFailedError, ToolUnavailableError

# Simulated cache geometry (size,associativity,line): fixed so counts do not depend on the host.
# A typical recent x86 core: 32 KiB 8-way L1i, 48 KiB 12-way L1d, 2 MiB 16-way last level.
CACHE_GEOMETRY: Mapping[str, str] = {
    "I1": "32768,8,64",
    "D1": "49152,12,64",
    "LL": "2097152,16,64",
}

VALGRIND_HINT = "install valgrind (Debian/Ubuntu: apt-get install valgrind)"


@dataclass(frozen=True)
class CallgrindOptions:
    """What valgrind's callgrind is asked for: where it writes, whether it counts from the start
    (else the worker switches it on through vgdb at `vgdb_prefix`), the cache simulation,
    per-instruction costs, a `region` (a function to count inside) and the children."""

    out_file: str
    instr_at_start: bool
    vgdb_prefix: str | None
    cache_sim: bool
    dump_instr: bool
    region: str | None = None
    trace_children: bool = False

    def argv(self) -> tuple[str, ...]:
        """valgrind's options for this (`command` puts valgrind before them)."""
        options = [
            "--tool=callgrind",
            f"--callgrind-out-file={self.out_file}",
            f"--instr-atstart={'yes' if self.instr_at_start else 'no'}",
            f"--dump-instr={'yes' if self.dump_instr else 'no'}",
            "--quiet",
        ]
        if self.vgdb_prefix is not None:
            options += ["--vgdb=yes", f"--vgdb-prefix={self.vgdb_prefix}"]
        else:
            options.append("--vgdb=no")
        if self.cache_sim:
            options += ["--cache-sim=yes", "--branch-sim=yes"]
            options += [f"--{level}={geometry}" for level, geometry in CACHE_GEOMETRY.items()]
        if self.region is not None:
            options += [f"--toggle-collect={self.region}", "--collect-atstart=no"]
        if self.trace_children:
            options.append("--trace-children=yes")
        return tuple(options)

    def command(self, *program: str, more: Sequence[str] = ()) -> tuple[str, ...]:
        """valgrind, these options (then `more` of valgrind's) and `program`."""
        return ("valgrind", *self.argv(), *more, *program)


def vgdb_argv(vgdb_prefix: str, pid: int, commands: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """vgdb sending `commands` (each a monitor command's words) to callgrind in process `pid`,
    found at `vgdb_prefix`."""
    argv: list[str] = [
        "vgdb",
        f"--vgdb-prefix={vgdb_prefix}",
        f"--pid={pid}",
        # the worker waits in read(): force vgdb's ptrace invocation after 5 ms, not 100
        "--max-invoke-ms=5",
    ]
    for i, command in enumerate(commands):
        argv += (["-c"] if i else []) + list(command)
    return tuple(argv)


# valgrind's words when its decoder meets an instruction it does not know (then SIGILL)
_CANNOT_EXECUTE = re.compile(
    r"(unhandled instruction bytes: [^\n]*|Illegal opcode at address \S+|"
    r"Unrecognised instruction at address \S+)"
)


def cannot_execute(error: BenchmarkFailedError) -> str | None:
    """Valgrind's message when it stopped at an instruction it cannot execute, else None.

    A Python worker's fault handler takes the SIGILL valgrind raises, and valgrind (--quiet)
    then prints nothing: a worker killed by SIGILL under valgrind counts as the same. Code that
    is itself at fault fails again in the native lenses that follow."""
    text = "\n".join(t for t in (error.message, error.detail or "") if t)
    match = _CANNOT_EXECUTE.search(text)
    if match is not None:
        return match.group(1).strip()
    if "killed by signal 4 (SIGILL)" in error.message:
        return "SIGILL, without a message of valgrind's (the interpreter's fault handler took it)"
    return None


def cpu_has_avx512(cpuinfo: str) -> bool:
    return any(flag.startswith("avx512") for flag in cpu_flags(cpuinfo))


def check_valgrind_runs(runner: ProcessRunner) -> None:
    """`valgrind --version` succeeds: an installed valgrind can still be broken."""
    version = runner.run(LaunchSpec(("valgrind", "--version")), timeout_s=30)
    if not version.ok:
        raise ToolUnavailableError(
            f"valgrind --version {version.describe_failure()}",
            hint=VALGRIND_HINT,
            detail=version.stderr,
        )


def read_cpuinfo() -> str:
    return read_text("/proc/cpuinfo") or ""
