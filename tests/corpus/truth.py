"""Ground truth from tools independent of perflab: nm, objdump, readelf, perf report.

Each function returns facts about built code or a measured process; a case's `check` turns
them into evidence sentences and raises `CaseInvalid` when the code does not show what the
case is about (a compiler that inlined anyway, a clone gcc did not make), so no case can
silently lie."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


class CaseInvalid(AssertionError):
    """The built code does not have the property the case's ground truth needs."""


def _out(argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None) -> str:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, env=dict(env) if env else None, cwd=cwd
    )
    if done.returncode != 0:
        raise CaseInvalid(f"{' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def text_symbols(path: Path) -> dict[str, str]:
    """nm: defined code symbols (name -> type letter), including local ones."""
    out = _out(["nm", "--defined-only", str(path)])
    symbols: dict[str, str] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwi":
            symbols[parts[2]] = parts[1]
    return symbols


def disassembly(path: Path, symbol: str) -> list[str]:
    """objdump -d of one symbol: its instruction lines ("mnemonic operands <target>")."""
    out = _out(
        ["objdump", "-d", "--no-show-raw-insn", "-M", "intel", f"--disassemble={symbol}", str(path)]
    )
    lines = []
    for line in out.splitlines():
        match = re.match(r"^\s*[0-9a-f]+:\s+(.*)$", line)
        if match:
            lines.append(match.group(1).strip())
    if not lines:
        raise CaseInvalid(f"objdump: no code for {symbol} in {path.name}")
    return lines


def calls_in(path: Path, symbol: str) -> set[str]:
    """objdump: the direct call (and tail call) targets of a function."""
    out = set()
    for line in disassembly(path, symbol):
        match = re.match(r"^(?:call|jmp)\s+[0-9a-f]+\s+<([^>+]+)", line)  # jmp: a tail call
        if match:
            out.add(match.group(1))
    return out


def normalised_functions(path: Path) -> dict[str, list[str]]:
    """objdump -d of a whole object: each symbol's instructions with addresses, offsets and
    comments removed (what stays differs only when the code does)."""
    out = _out(["objdump", "-d", "--no-show-raw-insn", "-M", "intel", str(path)])
    functions: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in out.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            current = functions.setdefault(header.group(1), [])
            continue
        insn = re.match(r"^\s*[0-9a-f]+:\s+(.*)$", line)
        if insn and current is not None:
            text = insn.group(1).split("#")[0]
            text = re.sub(r"<([^>+]+)(\+0x[0-9a-f]+)?>", r"<\1>", text)
            current.append(re.sub(r"\b(0x)?[0-9a-f]{3,}\b", "N", text).strip())
    return functions


def code_differs(base: Path, change: Path) -> list[str]:
    """Functions defined in both objects whose normalised code differs (register allocation
    included: gcc's interprocedural register allocation changes callers of a changed callee)."""
    a, b = normalised_functions(base), normalised_functions(change)
    return sorted(name for name in set(a) & set(b) if a[name] != b[name] and "@plt" not in name)


def vector_width(path: Path, symbol: str) -> int:
    """objdump: the widest register of a packed (vector) instruction, 0 when there is none."""
    widest = 0
    for line in disassembly(path, symbol):
        mnemonic = line.split()[0]
        if re.match(r"v?(p|.*p[sd]$|.*ps\b|.*pd\b)", mnemonic) is None:
            continue
        if mnemonic in ("push", "pop") or mnemonic.startswith(("pxor", "vpxor")):
            continue  # zeroing idioms and stack moves are not vector work
        for reg, bits in (("zmm", 512), ("ymm", 256), ("xmm", 128)):
            if reg in line:
                widest = max(widest, bits)
    return widest


def inlined_subroutines(path: Path) -> set[str]:
    """readelf --debug-dump=info: names of functions with DW_TAG_inlined_subroutine records."""
    out = _out(["readelf", "--wide", "--debug-dump=info", str(path)])
    names: dict[str, str] = {}
    origin_of: dict[str, str] = {}
    inlined_origins: list[str] = []
    offset = tag = ""
    for line in out.splitlines():
        die = re.match(r"^\s*<\d+><([0-9a-f]+)>: Abbrev Number: \d+ \((DW_TAG_\w+)\)", line)
        if die:
            offset, tag = die.group(1), die.group(2)
            continue
        attribute = re.match(r"^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$", line)
        if not attribute or not offset:
            continue
        name, value = attribute.groups()
        if name == "DW_AT_name":
            # "(string) mix", "(strp) (offset: 0x5): helper", "(indirect string, ...): helper"
            names[offset] = re.sub(r"^(\([^()]*\)\s*:?\s*)+", "", value).strip()
        elif name in ("DW_AT_abstract_origin", "DW_AT_specification"):
            ref = re.search(r"<0x([0-9a-f]+)>", value)
            if ref:
                origin_of[offset] = ref.group(1).lstrip("0") or "0"
                if tag == "DW_TAG_inlined_subroutine" and name == "DW_AT_abstract_origin":
                    inlined_origins.append(offset)
    names = {k.lstrip("0") or "0": v for k, v in names.items()}
    origin_of = {k.lstrip("0") or "0": v for k, v in origin_of.items()}

    def name_of(ref: str) -> str | None:
        seen = set()
        while ref not in names and ref in origin_of and ref not in seen:
            seen.add(ref)
            ref = origin_of[ref]
        return names.get(ref)

    found = set()
    for die_offset in inlined_origins:
        name = name_of(origin_of.get(die_offset.lstrip("0") or "0", ""))
        if name:
            found.add(name)
    return found


# cpu-clock (no PMU needed); without reading the loaded BPF programs at start-up, which took
# 0.6-0.9 s of every recording
_RECORD = ("-e", "cpu-clock", "-F", "2000", "--no-bpf-event")


def hottest_symbols(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, workdir: Path, top: int = 3
) -> list[tuple[str, float]]:
    """perf record (cpu-clock) of one whole process, then perf report: the user-space symbols
    with the most samples, hottest first, as (symbol, percent of all samples)."""
    data = workdir / f"truth-{os.getpid()}-{abs(hash(tuple(argv)))}.data"
    full_env = {**os.environ, **env}
    _out(
        ["perf", "record", "-q", *_RECORD, "-o", str(data), "--", *argv],
        full_env,
        cwd,
    )
    return _report(data, top, " ".join(argv))


def _report(data: Path, top: int, what: str) -> list[tuple[str, float]]:
    report = _out(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", "sym"])
    data.unlink(missing_ok=True)
    rows = []
    for line in report.splitlines():
        match = re.match(r"^\s*([\d.]+)%\s+\[\.\]\s+(.+?)\s*$", line)  # user space only
        if match:
            rows.append((match.group(2), float(match.group(1))))
    if not rows:
        raise CaseInvalid(f"perf report found no samples for {what}")
    return rows[:top]


REGION_SCRIPT = """
import sys, time
{setup}
control, ack = open(sys.argv[1], "w"), open(sys.argv[2])
def perf(command):  # perf's control fifo: sampling on/off, acknowledged
    control.write(command + "\\n")
    control.flush()
    ack.readline()
perf("enable")
end = time.monotonic() + {seconds}
while time.monotonic() < end:
    for _ in range(10):
        {stmt}
perf("disable")
"""


def statement_argv(python: str, setup: str, stmt: str, seconds: float = 1.5) -> list[str]:
    """A process that runs the statement's setup, then the statement in a loop with perf's
    sampling switched on around the loop only (perf's control fifo): perf report then sees the
    measured region only. The fifos are the last two arguments, which `hottest_in_region`
    appends."""
    script = REGION_SCRIPT.format(setup=setup, stmt=stmt, seconds=seconds)
    return [python, "-c", script]


def hottest_in_region(
    argv: Sequence[str], env: Mapping[str, str], cwd: str, workdir: Path, top: int = 3
) -> list[tuple[str, float]]:
    """perf report of a `statement_argv` process, started under perf record with sampling off
    until the process switches it on (no race with attaching to a running process, which on a
    loaded machine could miss the whole loop)."""
    data = workdir / f"truth-{os.getpid()}-{abs(hash(tuple(argv)))}.data"
    control, ack = workdir / "perf-control.fifo", workdir / "perf-ack.fifo"
    for fifo in (control, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    _out(
        ["perf", "record", "-q", *_RECORD, "--delay", "-1",
         "--control", f"fifo:{control},{ack}", "-o", str(data),
         "--", *argv, str(control), str(ack)],
        {**os.environ, **env},
        cwd,
    )  # fmt: skip
    return _report(data, top, " ".join(argv[:1]))


def debug_file_for(path: Path) -> Path | None:
    """The separate debug file of a stripped object, by its build-id (readelf -n)."""
    notes = _out(["readelf", "-n", str(path)])
    match = re.search(r"Build ID:\s*([0-9a-f]+)", notes)
    if not match:
        return None
    build_id = match.group(1)
    candidate = Path("/usr/lib/debug/.build-id") / build_id[:2] / f"{build_id[2:]}.debug"
    return candidate if candidate.exists() else None


def demangle(name: str) -> str:
    """c++filt: the readable name of a mangled C++ symbol (others unchanged)."""
    if not name.startswith("_Z"):
        return name
    done = subprocess.run(["c++filt", name], capture_output=True, text=True)
    return done.stdout.strip() or name


def has_symbols(path: Path) -> bool:
    done = subprocess.run(["nm", str(path)], capture_output=True, text=True)
    return done.returncode == 0 and "no symbols" not in done.stderr and bool(done.stdout.strip())
