"""The asm lens's pure parts: decoding, normalisation, loops, summaries, pairing, diffs, parsers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from perflab.lenses.asm.analyse import ARTIFACT_FUNCTIONS, analyse_asm, asm_views
from perflab.lenses.asm.code_diff import (
    RowTag,
    align,
    canonical_name,
    change_sentence,
    diff_text,
    pair_names,
)
from perflab.lenses.asm.demangling import CxxFiltDemangler
from perflab.lenses.asm.disassembly import AsmLine, Flow, Instruction, disassemble, vector_bits
from perflab.lenses.asm.elf_objects import ElfObject, LoadSegment, runtime_to_link_address
from perflab.lenses.asm.loops import find_loops, hot_loop
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.lenses.asm.mca import parse_mca_summary
from perflab.lenses.asm.sources import region_from_json, region_of, region_to_json
from perflab.lenses.asm.summaries import instruction_mix
from perflab.machine.fake_processes import FakeRunner as ScriptedRunner
from perflab.measure.perf.recordings import RecordedProfile
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, BenchmarkData, Comparison
from perflab.records.settings import Settings
from perflab.tool_drivers.perf import CallGraph
from perflab.tool_drivers.process_maps import mapped_objects, parse_proc_maps
from perflab.tool_output.perf_script import executable_mappings, parse_perf_script

# A counted loop calling a helper and reading a global:
#   0x1000 xor eax, eax
#   0x1002 add rax, 1            <- loop head
#   0x1006 call 0x2000
#   0x100b lea rcx, [rip + 0xff1] (-> 0x2003)
#   0x1012 cmp rax, rdi
#   0x1015 jne 0x1002
#   0x1017 ret
LOOP_CODE = bytes.fromhex("31c04883c001e8f50f0000488d0df10f00004839f875ebc3")
NAMES = {0x2000: "helper", 0x2003: "table+0x3"}


def loop_lines(costs: dict[int, float] | None = None) -> FunctionListing:
    return build_listing(
        FunctionCode("f", "f", "/lib/x.so", 0x1000, code=LOOP_CODE), NAMES.get, costs=costs
    )


def test_normalise_replaces_addresses_with_labels_and_names() -> None:
    texts = [line.text for line in loop_lines().lines]
    assert texts == [
        "xor eax, eax",
        "add rax, 1",
        "call helper",
        "lea rcx, [rip + table+0x3]",
        "cmp rax, rdi",
        "jne .L1",
        "ret",
    ]
    listing = loop_lines()
    assert listing.lines[1].label == ".L1"
    assert listing.lines[5].instruction.flow is Flow.BRANCH
    # llvm-mca gets placeholders instead of C++ names it could not parse
    assert listing.lines[2].assembly == "call __perflab_external"


def test_loop_summary_and_mix() -> None:
    listing = loop_lines({0x1002: 5.0, 0x1006: 3.0, 0x1000: 1.0})
    assert listing.size_bytes == len(LOOP_CODE)
    assert listing.hot_loop is not None
    assert listing.hot_loop.size_bytes == 0x1017 - 0x1002
    assert listing.hot_loop.instructions == 5
    assert listing.hot_loop.cost_share == pytest.approx(8 / 9)
    assert [line.in_hot_loop for line in listing.lines] == [False] + [True] * 5 + [False]
    assert dict(listing.calls) == {"helper": 1}
    mix = listing.mix
    assert (mix.total, mix.branches, mix.calls, mix.vector, mix.loads) == (7, 1, 1, 0, 0)


def test_loads_and_stores_follow_the_operand_order() -> None:
    # mov rax, [rdi]; mov [rdi], rax; add [rdi], rax; vmovaps zmmword ptr [rdi], zmm0
    code = bytes.fromhex("488b0748890748010762f17c482907")
    flags = [(i.loads, i.stores) for i in disassemble(code, 0)]
    assert flags == [(True, False), (False, True), (True, True), (False, True)]


def insn(mnemonic: str, operands: str, flow: Flow = Flow.NONE) -> Instruction:
    return Instruction(0, 4, mnemonic, operands, flow)


@pytest.mark.parametrize(
    ("mnemonic", "operands", "bits"),
    [
        ("addps", "xmm0, xmm1", 128),
        ("vaddps", "ymm0, ymm1, ymmword ptr [rdi]", 256),
        ("vmovaps", "zmmword ptr [rdx + rax], zmm0", 512),
        ("kmovw", "k1, eax", 512),
        ("add", "rax, 1", 0),
    ],
)
def test_vector_width(mnemonic: str, operands: str, bits: int) -> None:
    assert vector_bits(insn(mnemonic, operands)) == bits


def test_scalar_fp_is_not_vector_work() -> None:
    mix = instruction_mix([insn("addss", "xmm0, xmm1"), insn("vaddps", "ymm0, ymm0, ymm1")])
    assert (mix.scalar_fp, mix.vector) == (1, 1)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (
            "at::native::AVX2::(anonymous namespace)::relu_kernel(at::TensorIteratorBase&)",
            "at::native::AVX512::(anonymous namespace)::relu_kernel(at::TensorIteratorBase&)",
        ),
        ("threshold_kernel.constprop.0", "threshold_kernel"),
        ("foo(int) [clone .isra.0]", "foo(int)"),
        ("kernel_avx2", "kernel_AVX512F"),
        ("f.cold", "f"),
    ],
)
def test_canonical_names_pair(left: str, right: str) -> None:
    assert canonical_name(left) == canonical_name(right)


def test_pairing_prefers_exact_names() -> None:
    pairs = pair_names(["f", "f.cold", "g.constprop.0"], ["f.cold", "g", "f", "h"])
    assert pairs == [(0, 2), (1, 0), (2, 1), (None, 3)]


def line(text: str, address: int, label: str | None = None) -> AsmLine:
    return AsmLine(Instruction(address, 1, text.split()[0], ""), text, text, label)


def lines(texts: Sequence[str]) -> tuple[AsmLine, ...]:
    return tuple(line(text, k) for k, text in enumerate(texts))


def test_align_masks_label_numbers_and_finds_moves() -> None:
    block = ["mov a", "mov b", "mov c"]
    left = lines(["push", *block, "jne .L1", "x", "y", "z", "ret"])
    right = lines(["push", "jne .L2", "x", "y", "z", *block, "ret"])
    rows = align(left, right)
    tags = [row.tag for row in rows]
    assert RowTag.MOVED in tags
    assert sum(tag is RowTag.MOVED for tag in tags) == 6  # the block on both sides
    assert all(row.tag is RowTag.SAME for row in rows if row.left and row.left.text == "jne .L1")
    text = diff_text(rows)
    assert "<    mov a" in text and ">    mov a" in text


def test_change_sentence_names_the_replacement() -> None:
    def listing(mnemonics: Sequence[str], width: str) -> FunctionListing:
        body = tuple(
            AsmLine(Instruction(k * 4, 4, m, f"{width}0, {width}1"), f"{m} {width}0", m)
            for k, m in enumerate(mnemonics)
        )
        return FunctionListing("relu", "relu", "/x", 0, body)

    before = listing(["vcmpps", "vblendvps", "ret"], "ymm")
    after = listing(["vmaxps", "ret"], "zmm")
    sentence = change_sentence(before, after)
    assert sentence.startswith(
        "uses 512-bit registers (baseline 256); vmaxps replaces vcmpps+vblendvps"
    )
    assert change_sentence(before, before) == "identical after normalisation"


def test_listing_json_round_trip() -> None:
    listing = loop_lines({0x1002: 2.0})
    again = FunctionListing.from_json(json.loads(json.dumps(listing.to_json())))
    assert again == listing


def test_analyse_uses_code_size_as_ratio_and_hottest_first() -> None:
    small = loop_lines({0x1002: 100.0})
    hot = build_listing(
        FunctionCode("g", "g", "/x", 0, code=bytes.fromhex("c3")), NAMES.get, costs={0: 900.0}
    )
    bigger = build_listing(
        FunctionCode(
            "f.constprop.0",
            "f.constprop.0",
            "/y",
            0x1000,
            code=LOOP_CODE[:-1] + bytes.fromhex("90c3"),
        ),
        NAMES.get,
        costs={0x1002: 100.0},
    )

    def artifact(variant: str, listings: Sequence[FunctionListing]) -> Artifact:
        payload = {"version": 1, "total_cost": 1e3, "functions": [f.to_json() for f in listings]}
        return Artifact("b", variant, Metric.ASM, ARTIFACT_FUNCTIONS, json.dumps(payload))

    data = BenchmarkData(artifacts=(artifact("base", [small, hot]), artifact("new", [bigger, hot])))
    analysis = analyse_asm(Benchmark("b", cmd="x"), ["base", "new"], data, Settings())
    [comparison] = analysis.comparisons
    out = comparison.to_json()
    assert out["ratio"] == pytest.approx((len(LOOP_CODE) + 2) / (len(LOOP_CODE) + 1))  # +1 nop, ret
    assert comparison.verdict is Verdict.INCONCLUSIVE  # larger code says nothing about speed
    names = [f["name"] for f in out["functions"]]
    assert names == ["g", "f"]
    f = out["functions"][1]
    for side in ("baseline", "variant"):
        assert {"symbol", "object", "size_bytes", "vector_width_bits", "calls"} <= set(f[side])
    assert f["variant"]["symbol"] == "f.constprop.0"
    assert "+" in f["diff"]
    views = asm_views("b", ["base", "new"], data, "^f")
    assert [view.change.name for view in views] == ["f"]


def asm_data(
    base: Sequence[FunctionListing], new: Sequence[FunctionListing], **extra: Any
) -> BenchmarkData:
    """Stored listings; without samples they stand for functions named by --symbol."""

    def artifact(variant: str, listings: Sequence[FunctionListing]) -> Artifact:
        payload = {
            "version": 1,
            "total_cost": 10.0,
            "named": True,
            "functions": [f.to_json() for f in listings],
        }
        payload.update(extra.get(variant, {}))
        return Artifact("b", variant, Metric.ASM, ARTIFACT_FUNCTIONS, json.dumps(payload))

    return BenchmarkData(artifacts=(artifact("base", base), artifact("new", new)))


def listing_of(code: bytes, name: str = "f") -> FunctionListing:
    return build_listing(FunctionCode(name, name, "/x", 0x1000, code=code), NAMES.get)


def asm_comparison(base: Sequence[FunctionListing], new: Sequence[FunctionListing]) -> Comparison:
    analysis = analyse_asm(
        Benchmark("b", cmd="x"), ["base", "new"], asm_data(base, new), Settings()
    )
    [comparison] = analysis.comparisons
    return comparison


def test_smaller_code_is_not_called_faster() -> None:
    # the QA case: 70 -> 62 bytes while llvm-mca predicted more cycles per iteration
    bigger = listing_of(LOOP_CODE[:-1] + bytes.fromhex("90" * 8 + "c3"))
    comparison = asm_comparison([bigger], [listing_of(LOOP_CODE)])
    assert comparison.ratio < 1 and comparison.ci_low == comparison.ci_high == comparison.ratio
    assert comparison.verdict is Verdict.INCONCLUSIVE


def test_identical_code_is_equivalent_even_when_renamed() -> None:
    comparison = asm_comparison(
        [listing_of(LOOP_CODE)], [listing_of(LOOP_CODE, name="f.constprop.0")]
    )
    assert comparison.ratio == 1.0
    assert comparison.verdict is Verdict.EQUIVALENT


def test_a_function_on_one_side_only_is_not_equivalent() -> None:
    ret = bytes.fromhex("c3")
    comparison = asm_comparison(
        [listing_of(LOOP_CODE)], [listing_of(LOOP_CODE), listing_of(ret, "g")]
    )
    assert comparison.ratio == 1.0  # the size counts paired functions only
    assert comparison.verdict is Verdict.INCONCLUSIVE
    assert asm_comparison([], []).verdict is Verdict.INCONCLUSIVE


MAPS = """\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:00 1 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:00 1 /usr/bin/prog
7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/libc.so.6
7f0000200000-7f0000201000 r-xp 00000000 00:00 0 [vdso]
7f0000300000-7f0000301000 rw-p 00000000 00:00 0
"""


def test_proc_maps_and_load_bias() -> None:
    regions = parse_proc_maps(MAPS)
    assert mapped_objects(regions) == ("/usr/bin/prog", "/usr/lib/libc.so.6")
    obj = ElfObject(
        path="/usr/lib/libc.so.6",
        position_independent=True,
        segments=(LoadSegment(vaddr=0x27000, offset=0x26000, filesz=0x200000, executable=True),),
        sections=(),
        symbols=(),
        plt={},
        got={},
    )
    assert runtime_to_link_address(regions, obj, 0x7F0000000010) == 0x27010
    assert runtime_to_link_address(regions, obj, 0x55D0C0A01000) is None


PERF_SCRIPT = """\
k 38/38 1.0000: PERF_RECORD_MMAP2 38/38: [0x55f7(0x1000) @ 0x1000 fe:00 2]: r-xp /tmp/k
k 38/38 1.0001: PERF_RECORD_MMAP2 38/38: [0x7f79(0x156) @ 0x26000 fe:00 3]: r-xp /lib/c.so
k 38/38 1.0001: PERF_RECORD_MMAP2 38/38: [0x7f79(0x156) @ 0x26000 fe:00 3]: r--p /lib/d
k 38/38 1.0002: PERF_RECORD_MMAP2 38/38: [0x7f79(0x2000) @ 0 00:00 0 0]: r-xp [vdso]
k 38/38 1.0100:     250000 cpu-clock:      55f7feaa818e relu.constprop.0+0x2e (/tmp/k)
k 38/38 1.0350:     250000 cpu-clock:      55f7feaa818e relu.constprop.0+0x2e (/tmp/k)
k 38/38 1.0600:     250000 cpu-clock:      55f7feaa8190 relu.constprop.0+0x30 (/tmp/k)
k 38/38 1.0850:     250000 cpu-clock:      55f7feaa8300 [unknown] (/tmp/k)
k 38/38 1.1100:     250000 cpu-clock:  ffffffff8100 [unknown] ([kernel.kallsyms])
"""


def test_profile_lens_samples_as_the_asm_lens_keeps_them() -> None:
    samples = parse_perf_script(PERF_SCRIPT)
    assert len(samples) == 5  # the mmap records are not samples
    objects = executable_mappings(PERF_SCRIPT)
    assert objects == ("/tmp/k", "/lib/c.so")
    profile = RecordedProfile("cpu-clock", (), CallGraph.NONE, tuple(samples), objects=objects)
    region = region_of(profile)
    assert region.objects == objects
    assert region.total == 5
    assert region.by_function() == {("/tmp/k", "relu.constprop.0"): 3.0}
    assert region.offsets("/tmp/k", "relu.constprop.0") == {0x2E: 2.0, 0x30: 1.0}
    assert region_from_json(json.loads(json.dumps(region_to_json(region)))) == region


MCA = """\
Iterations:        100
Instructions:      600
Total Cycles:      181
Total uOps:        900

Dispatch Width:    6
Block RThroughput: 1.5
"""


def test_parse_mca_summary() -> None:
    result = parse_mca_summary(MCA, "sapphirerapids")
    assert result is not None
    assert (result.cycles_per_iteration, result.uops_per_iteration) == (1.81, 9.0)
    assert parse_mca_summary("error: invalid instruction", "x") is None


def FakeRunner(stdout: str) -> ScriptedRunner:  # noqa: N802
    return ScriptedRunner().on_run(r".", stdout=stdout)


def test_cxxfilt_is_batched_and_skips_plain_names() -> None:
    runner = FakeRunner("foo(int)\nbar()\n")
    names = CxxFiltDemangler(runner).demangle(["_Z3fooi", "main", "_Z3barv"])
    assert names == {"_Z3fooi": "foo(int)", "main": "main", "_Z3barv": "bar()"}
    assert len(runner.calls) == 1 and runner.calls[0][1] == "_Z3fooi\n_Z3barv\n"


def test_hot_loop_without_costs_prefers_the_vector_loop() -> None:
    # two sibling loops: a scalar remainder and a vector main loop
    def at(
        address: int,
        mnemonic: str,
        operands: str,
        flow: Flow = Flow.NONE,
        target: int | None = None,
    ) -> AsmLine:
        return AsmLine(
            Instruction(address, 4, mnemonic, operands, flow, target), mnemonic, mnemonic
        )

    body = (
        at(0, "vaddps", "ymm0, ymm0, ymm1"),
        at(4, "jne", "0x0", Flow.BRANCH, 0),
        at(8, "add", "rax, 1"),
        at(12, "add", "rbx, 1"),
        at(16, "jne", "0x8", Flow.BRANCH, 8),
    )
    loop = hot_loop(find_loops(body))
    assert loop is not None and loop.start == 0
