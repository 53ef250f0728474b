"""llvm-mca's CPU model of this machine (tool_drivers/llvm_mca.py): the host's scheduling model
from /proc/cpuinfo, or the closest older one this llvm-mca knows."""

from __future__ import annotations

from perflab.tool_drivers.llvm_mca import host_mcpu, supported_model
from perflab.tool_output.llvm_mca import parse_mcpu_help

EPYC_MILAN = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nflags\t\t: avx2\n"
EPYC_GENOA = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\nflags\t\t: avx512f\n"
SPR = "vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nflags\t\t: avx512f amx_tile\n"


def test_llvm_mca_models_the_host_cpu() -> None:
    assert host_mcpu(EPYC_MILAN) == "znver3"
    assert host_mcpu(EPYC_GENOA) == "znver4"
    assert host_mcpu(SPR) == "sapphirerapids"
    assert host_mcpu("") == "native"
    known = parse_mcpu_help(
        "Available CPUs for this target:\n\n  znver2         - Select the znver2 processor.\n"
        "  znver3         - Select the znver3 processor.\n\nAvailable features for this target:\n"
        "  avx            - Enable AVX instructions.\n"
    )
    assert known == {"znver2", "znver3"}
    assert supported_model("znver4", known) == "znver3"  # LLVM 14 has no Zen 4 model
    assert supported_model("znver3", frozenset()) == "znver3"


def intel(flags: str) -> str:
    return f"vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nflags\t\t: {flags}\n"


def test_intel_models_by_their_widest_instructions_and_amd_by_family_and_model() -> None:
    assert host_mcpu(intel("avx2 avx512f avx512_vnni avx512_vbmi2")) == "icelake-server"
    assert host_mcpu(intel("avx2 avx512f avx512_vnni")) == "cascadelake"
    assert host_mcpu(intel("avx2 avx512f")) == "skylake-avx512"
    assert host_mcpu(intel("sse4_2 avx2")) == "skylake"
    assert host_mcpu(intel("sse4_2")) == "native"
    rome = "vendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\nflags\t\t: avx2\n"
    assert host_mcpu(rome) == "znver2"
    assert host_mcpu(rome.replace("model\t\t: 49", "model\t\t: x")) == "native"
