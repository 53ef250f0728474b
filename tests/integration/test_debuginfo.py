"""Reading inline frames and object identities (the evidence for inlining claims)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from perflab.machine.proc import SubprocessRunner
from perflab.tool_drivers.debuginfo import (
    InlineSite,
    SourceFrame,
    frames_from_json,
    frames_to_json,
    has_debug_info,
    inline_sites,
    object_identity,
    parse_addr2line,
    parse_symbolizer_json,
    symbolise,
)

pytestmark = pytest.mark.integration

HELPER = SourceFrame("helper", "/s/h.h", 2)
KERNEL_AT_5 = SourceFrame("kernel", "/s/k.c", 5)


def test_symbolizer_outputs_are_parsed_innermost_first_with_call_sites() -> None:
    json_text = (
        '{"Address":"0x1149","ModuleName":"p","Symbol":[{"FunctionName":"helper",'
        '"FileName":"/s/h.h","Line":2},{"FunctionName":"kernel","FileName":"/s/k.c","Line":5}]}\n'
        '{"Address":"0x2000","ModuleName":"p","Symbol":[{"FunctionName":"??","Line":0}]}\n'
    )
    assert parse_symbolizer_json(json_text) == {0x1149: (HELPER, KERNEL_AT_5)}
    addr2line_text = (
        "0x0000000000001149\nhelper\n/s/h.h:2\nkernel\n/s/k.c:5 (discriminator 3)\n"
        "0x0000000000002000\n??\n??:0\n"
    )
    assert parse_addr2line(addr2line_text, [0x1149, 0x2000]) == {0x1149: (HELPER, KERNEL_AT_5)}


def test_inline_sites_name_callee_caller_call_site_and_the_out_of_line_function() -> None:
    frames = {
        0x10: (SourceFrame("kernel", "/s/k.c", 4),),
        0x14: (HELPER, KERNEL_AT_5),
        0x18: (HELPER, KERNEL_AT_5),
        0x20: (SourceFrame("leaf", "/s/l.h", 1), HELPER, KERNEL_AT_5),
    }
    sites = inline_sites(frames)
    assert sites == {
        InlineSite("helper", "kernel", "kernel", "/s/k.c", 5): (0x14, 0x18, 0x20),
        InlineSite("leaf", "helper", "kernel", "/s/h.h", 2): (0x20,),
    }
    assert next(iter(sites)).location() == "k.c:5"


def test_frames_survive_json_and_older_name_only_records_still_load() -> None:
    frames = {0x14: (HELPER, KERNEL_AT_5)}
    assert frames_from_json(frames_to_json(frames)) == frames
    assert frames_from_json({"0x14": ["helper", "kernel"]}) == {
        0x14: (SourceFrame("helper"), SourceFrame("kernel"))
    }


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_real_objects_identity_debug_info_and_symbolisation(tmp_path: Path) -> None:
    source = tmp_path / "p.c"
    source.write_text(
        "static inline int helper(int x)\n"
        "{ int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n"
        "int kernel(int n)\n"
        "{ int t = 0; for (int i = 0; i < n; i++) t += helper(i & 7); return t; }\n"
        "int main(void) { volatile int r = kernel(100); return r == 7; }\n"
    )
    for name, flags in (("a", ["-g"]), ("b", ["-g"]), ("c", ["-g0"])):
        subprocess.run(["gcc", "-O2", *flags, "-o", str(tmp_path / name), str(source)], check=True)
    assert object_identity(str(tmp_path / "a")) == object_identity(str(tmp_path / "b"))
    assert object_identity(str(tmp_path / "a")) != object_identity(str(tmp_path / "c"))
    assert object_identity(str(tmp_path / "missing")) is None
    assert has_debug_info(str(tmp_path / "a")) and not has_debug_info(str(tmp_path / "c"))
    assert symbolise(SubprocessRunner(), str(tmp_path / "c"), [0x1000]) is None
    if shutil.which("llvm-symbolizer") is None and shutil.which("addr2line") is None:
        return
    nm = subprocess.run(["nm", str(tmp_path / "a")], capture_output=True, text=True, check=True)
    start = next(
        int(line.split()[0], 16) for line in nm.stdout.splitlines() if line.endswith(" kernel")
    )
    frames = symbolise(SubprocessRunner(), str(tmp_path / "a"), list(range(start, start + 40)))
    assert frames is not None
    assert any(
        chain[0].function == "helper" and chain[-1].function == "kernel"
        for chain in frames.values()
    )
