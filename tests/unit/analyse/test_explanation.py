"""One paragraph per comparison (`perflab.analyse.explanation`): the causes that account for the
difference, only code that ran, nothing for identical code, every cause with its evidence."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from perflab.analyse.explanation import summaries, summary_section
from perflab.records.document import Table
from perflab.records.kinds import Metric, Verdict
from tests.support.explanation_comparisons import comparison, instructions, row

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.analyse.explanation"


def test_the_causes_are_the_largest_changes_with_the_difference_until_80_percent() -> None:
    functions = [
        row("PyFunction_NewWithQualName", 106, 0, "baseline_only"),
        row("_PyEvalFramePushAndInit", 94, 0),
        row("_PyFrame_Clear", 83, 0),
        row("_Py_IsImmortal", 0, 40, "variant_only"),  # against the difference: never a cause
        row("func_dealloc", 60, 0),
        row("handshake", 1.0, 0.0),  # the residue: never a cause
        row("tiny", 20, 0),
    ]
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "disappeared", "function": "PyFunction_NewWithQualName",
         "evidence": ["perf: 30 of 900 samples in the baseline"]}],
        "changed_not_run": [{"claim": "inlined", "function": "format_exc_check_arg"}],
        "functions": [{}], "byte_identical_functions": []})  # fmt: skip
    time = comparison(Metric.TIME, 2.17, 1.89, {})
    [summary] = summaries([time, instructions(functions, 1000.0, 677.0), asm])
    assert [c.function for c in summary.causes] == [
        "PyFunction_NewWithQualName", "_PyEvalFramePushAndInit", "_PyFrame_Clear",
    ]  # fmt: skip
    assert summary.accounted is not None and summary.accounted >= 0.8
    first = summary.causes[0]
    assert first.delta_per_iteration == -106 and round(first.share, 3) == round(106 / 323, 3)
    assert "(ran in the baseline only)" in first.evidence[0]
    assert "asm: disappeared PyFunction_NewWithQualName" in first.evidence[1]
    assert summary.text.startswith("32.3% fewer instructions per iteration (1,000 → 677)")
    assert "time 0.871 agrees" in summary.text and "account for 88%" in summary.text
    assert "format_exc_check_arg" in summary.text  # listed apart, not a cause
    assert "format_exc_check_arg" not in [c.function for c in summary.causes]
    body = summary.to_json()["summary"]
    assert set(body) >= {"text", "causes"}
    assert set(body["causes"][0]) >= {"function", "delta_per_iteration", "share", "evidence"}
    section = summary_section([summary])
    assert section is not None and section.key == "summary"
    [overview] = section.blocks
    assert isinstance(overview, Table) and overview.rows[0][1].text == summary.text
    assert any(isinstance(b, Table) for b in section.subsections[0].blocks)


def test_identical_code_names_no_cause() -> None:
    same = instructions([row("malloc_consolidate", 100.0, 100.3)], 9867.0, 9867.3,
                        verdict=Verdict.EQUIVALENT)  # fmt: skip
    [summary] = summaries([same])
    assert summary.causes == () and summary.accounted is None
    assert "nothing to account for" in summary.text
    # processes of one variant apart by more than the difference: the interval spans 1
    spread = instructions([row("malloc_consolidate", 100.0, 130.0)], 9836.0, 9866.0,
                          verdict=Verdict.EQUIVALENT, ci=(0.997, 1.004))  # fmt: skip
    assert summaries([spread])[0].causes == ()


def test_no_instructions_the_profile_accounts_in_time() -> None:
    data = {"symbols": [
        {"name": "kernel", "object": "k", "baseline_share": 0.8, "variant_share": 0.5},
        {"name": "other", "object": "k", "baseline_share": 0.2, "variant_share": 0.5},
    ]}  # fmt: skip
    [summary] = summaries([comparison(Metric.PROFILE, 1000.0, 600.0, data)])
    # kernel: 800 -> 300 ns, other: 200 -> 300 ns (against the difference)
    assert [(c.function, c.delta_per_iteration) for c in summary.causes] == [("kernel", -500.0)]
    assert summary.unit == "ns" and summary.causes[0].share == 1.25
    assert summaries([comparison(Metric.TIME, 1, 1, {})]) == ()


def test_a_dispatch_change_valgrind_cannot_see_is_said_with_both_names() -> None:
    # OpenBLAS: SKYLAKEX kernel on the CPU, HASWELL under valgrind in both variants
    same = instructions([row("dgemm_kernel_HASWELL", 8077930.0, 8077930.0)], 8776870.0,
                        8776863.0, verdict=Verdict.EQUIVALENT)  # fmt: skip
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "dispatch_changed", "function": "dgemm_kernel_SKYLAKEX", "evidence": ["perf"],
         "detail": {"from": "dgemm_kernel_SKYLAKEX", "to": "dgemm_kernel_HASWELL"}},
        {"claim": "vector_width_changed", "function": "dgemm_kernel_SKYLAKEX",
         "evidence": ["disassembly"], "detail": {"from": 512, "to": 256}},
    ]})  # fmt: skip
    [summary] = summaries([same, asm])
    assert summary.causes == ()
    [hidden] = summary.valgrind_ran_other_code
    assert "dgemm_kernel_SKYLAKEX → dgemm_kernel_HASWELL" in hidden
    assert "512 → 256-bit" in hidden and "valgrind ran dgemm_kernel_HASWELL in both" in hidden
    assert "cannot see what changed" in summary.text
    # the width comes first, with the pair of kernels that ran
    assert summary.text.startswith(
        "dgemm_kernel_SKYLAKEX → dgemm_kernel_HASWELL: 512-bit → 256-bit vectors (asm). "
    )
    # without a dispatch change, identical counts say nothing more
    assert summaries([same])[0].valgrind_ran_other_code == ()


def test_another_copy_of_one_name_is_said_as_a_copy_not_as_x_to_x() -> None:
    # numpy 2.4's float32 exp: simd_exp_FLOAT, defined by its X86_V4 and X86_V3 objects alike;
    # AVX2's copy under valgrind in both variants, AVX-512's on the CPU in the baseline
    same = instructions([row("simd_exp_FLOAT", 625087.0, 625087.0)], 629221.0, 629220.0,
                        verdict=Verdict.EQUIVALENT)  # fmt: skip
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "dispatch_changed", "function": "simd_exp_FLOAT", "evidence": ["perf"],
         "detail": {"from": "simd_exp_FLOAT", "to": "simd_exp_FLOAT"}},
        {"claim": "vector_width_changed", "function": "simd_exp_FLOAT",
         "evidence": ["disassembly"], "detail": {"from": 512, "to": 256}},
    ]})  # fmt: skip
    [summary] = summaries([same, asm])
    [hidden] = summary.valgrind_ran_other_code
    assert "the CPU ran another copy of simd_exp_FLOAT" in hidden
    assert "simd_exp_FLOAT → simd_exp_FLOAT" not in summary.text
    assert summary.text.startswith("simd_exp_FLOAT: 512-bit → 256-bit vectors (asm). ")


def test_one_dispatch_named_two_ways_by_two_lenses_is_one_sentence() -> None:
    # np.sort without AVX-512: perf names the kernel as a call, objdump with its return type
    # and parameters; valgrind ran the avx2 instantiation in both variants
    zmm, avx2 = "sort_n_vec<zmm_vector<float>, 32>", "sort_n_vec<avx2_vector<float>, 32>"
    counted = f"void {avx2}(avx2_vector<float>::type_t*, int)"
    same = instructions([row(counted, 1493390.0, 1493390.0)], 4569155.0, 4569072.0,
                        verdict=Verdict.EQUIVALENT)  # fmt: skip
    profile = comparison(Metric.PROFILE, 1.0e6, 1.7e6, {"symbols": [], "diagnoses": [
        {"claim": "dispatch_changed", "function": zmm, "evidence": ["perf"],
         "detail": {"from": zmm, "to": avx2}},
    ]})  # fmt: skip
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "dispatch_changed", "function": f"void {zmm}(zmm_vector<float>::type_t*, int)",
         "evidence": ["perf"], "detail": {"from": f"void {zmm}(zmm_vector<float>::type_t*, int)",
                                          "to": counted}},
        {"claim": "vector_width_changed", "function": f"void {zmm}(zmm_vector<float>::type_t*, "
         "int)", "evidence": ["disassembly"], "detail": {"from": 512, "to": 256}},
    ]})  # fmt: skip
    [summary] = summaries([same, profile, asm])
    [hidden] = summary.valgrind_ran_other_code
    assert f"the CPU ran {zmm} → {avx2} (profile, asm, 512 → 256-bit vectors)" in hidden
    assert f"valgrind ran {counted} in both" in hidden
    assert summary.text.startswith(f"{zmm} → {avx2}: 512-bit → 256-bit vectors (asm). ")


def test_a_vector_width_change_leads_the_summary() -> None:
    # the corpus's avx2_vs_avx512: valgrind cannot run the AVX-512 build (no instructions
    # comparison) and a short profile cannot tell the times apart; the asm saw the widths
    profile = comparison(Metric.PROFILE, 245.0, 214.0, {"symbols": []},
                         verdict=Verdict.INCONCLUSIVE)  # fmt: skip
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "vector_width_changed", "function": "saxpy", "samples": 38,
         "evidence": ["disassembly: widest vector register 256 bits in saxpy.constprop.0"],
         "detail": {"from": 256, "to": 512}},
        {"claim": "code_changed", "function": "saxpy", "samples": 38, "evidence": []},
    ]})  # fmt: skip
    [summary] = summaries([profile, asm])
    assert summary.text.startswith(
        "saxpy: 256-bit → 512-bit vectors (asm). No difference the profile can tell"
    )
    # no width claim: the paragraph starts with the difference, as before
    assert summaries([profile])[0].text.startswith("No difference the profile can tell")


def test_the_instructions_row_valgrind_ran_says_what_the_cpu_ran() -> None:
    # the same OpenBLAS pair as above, with the instructions lens's own records: the row of the
    # kernel callgrind ran in both variants says which kernel the CPU ran instead
    from perflab.analyse.hidden_dispatch import with_cpu_ran
    from perflab.lenses.fragments import SectionInput
    from perflab.lenses.instructions.details import InstructionsDetails
    from perflab.lenses.instructions.explain import FunctionDelta
    from perflab.lenses.instructions.render import section
    from perflab.records.accounting import Presence
    from perflab.records.model import Benchmark, Experiment, Variant
    from perflab.records.settings import Settings
    from perflab.tool_output.callgrind import FunctionId

    kernel = FunctionDelta(
        function=FunctionId("dgemm_kernel_HASWELL", "libopenblas.so"),
        file="",
        baseline_self=8077930.0,
        variant_self=8077930.0,
        baseline_inclusive=8077930.0,
        variant_inclusive=8077930.0,
        presence=Presence.BOTH,
    )
    other = replace(kernel, function=FunctionId("dgemm_beta_HASWELL", "libopenblas.so"))
    details = InstructionsDetails(8776870.0, 8776863.0, (other, kernel), (), max_functions=1)
    counted = replace(instructions([], 8776870.0, 8776863.0), details=details)
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "dispatch_changed", "function": "dgemm_kernel_SKYLAKEX", "evidence": ["perf"],
         "detail": {"from": "dgemm_kernel_SKYLAKEX", "to": "dgemm_kernel_HASWELL"}}]})  # fmt: skip
    annotated, same_asm = with_cpu_ran([counted, asm])
    assert same_asm is asm
    rows = annotated.to_json()["functions"]
    # beyond max_functions, but the row that says the CPU ran other code is kept
    assert [r["name"] for r in rows] == ["dgemm_beta_HASWELL", "dgemm_kernel_HASWELL"]
    assert "cpu_ran" not in rows[0]
    assert rows[1]["cpu_ran"] == {
        "baseline": "dgemm_kernel_SKYLAKEX",
        "variant": "dgemm_kernel_HASWELL",
    }
    experiment = Experiment(benchmarks=(Benchmark("b", stmt="x"),),
                            variants=(Variant("py311"), Variant("py312")),
                            settings=Settings(metrics=(Metric.INSTRUCTIONS,)))  # fmt: skip
    (detail,) = section(SectionInput(Metric.INSTRUCTIONS, (annotated,), experiment)).subsections
    texts = [getattr(b, "text", "") for b in detail.blocks]
    assert "valgrind ran dgemm_kernel_HASWELL; the CPU ran dgemm_kernel_SKYLAKEX in the " \
           "baseline (valgrind hides AVX-512 from the code it runs)" in texts  # fmt: skip
    [table] = [b for b in detail.blocks if isinstance(b, Table)]
    assert table.rows[-1][-1].text == "both; the CPU ran dgemm_kernel_SKYLAKEX in the baseline"
    # the summary still says it too, from the same rule
    [summary] = summaries([annotated, asm])
    assert "valgrind ran dgemm_kernel_HASWELL in both" in summary.valgrind_ran_other_code[0]
    # no dispatch change: nothing is annotated
    assert with_cpu_ran([counted]) == [counted]


def test_a_function_two_builds_spell_differently_is_one_cause_shown_as_people_read_it() -> None:
    """The issue's Rust case: callgrind names the function without its hash, asm with the
    baseline's hash (the variant's respelled to it); the summary joins them and shows neither
    the hash nor Rust's legacy escapes."""
    spec_next = (
        "_$LT$core..ops..range..Range$LT$T$GT$$u20$as$u20$core..iter..range..RangeIteratorImpl"
        "$GT$::spec_next::h680aaf5d04044e1f"
    )
    functions = [row("sumbench::sum_slice", 3000, 1200), row(spec_next, 1000, 300)]
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [
        {"claim": "vector_width_changed", "function": "sumbench::sum_slice::hb17a8c125cb85c7d",
         "detail": {"from": 128, "to": 256}, "samples": 300,
         "evidence": ["widest register 128 -> 256 bits"]}],
        "functions": [{}], "byte_identical_functions": []})  # fmt: skip
    [summary] = summaries([instructions(functions, 4000.0, 1500.0), asm])
    assert [c.function for c in summary.causes] == [
        "sumbench::sum_slice",
        "<core::ops::range::Range<T> as core::iter::range::RangeIteratorImpl>::spec_next",
    ]
    assert "asm: vector_width_changed sumbench::sum_slice" in summary.causes[0].evidence[1]
    assert summary.text.startswith("sumbench::sum_slice: 128-bit → 256-bit vectors (asm)")
    assert "$LT$" not in summary.text and "::h" not in summary.text


def _loop_row(name: str, base: tuple[int, int], new: tuple[int, int]) -> dict[str, Any]:
    def side(span: tuple[int, int]) -> dict[str, Any]:
        return {"hot_loop": {"start_address": span[0], "end_address": span[1]}}

    return {"name": name, "ran": {"baseline": True, "variant": True},
            "baseline": side(base), "variant": side(new)}  # fmt: skip


def test_a_decisive_time_with_the_same_instructions_looks_at_where_the_hot_loop_lies() -> None:
    """The issue's Rust case: the same 7-instruction loop, 1.67x slower; the iterator build's
    loop (0x14770-0x1478b) crosses a 64-byte line, the indexed one's (0x14790-0x147ab) not."""
    same = instructions([row("sum_slice", 574.0, 574.0)], 574_195_679.0, 574_173_429.0)
    slower = comparison(Metric.TIME, 1.0, 1.665, {}, verdict=Verdict.SLOWER)
    asm = comparison(Metric.ASM, 1, 1, {"diagnoses": [], "byte_identical_functions": [],
        "functions": [_loop_row("sumbench::sum_slice::h1111111111111111",
                                (0x14790, 0x147AC), (0x14770, 0x1478C))]})  # fmt: skip
    [summary] = summaries([slower, same, asm])
    assert "nothing to account for" not in summary.text
    assert "the difference is not in the executed instructions" in summary.text
    assert (
        "the hot loop of sumbench::sum_slice crosses 1 64-byte line(s) and 2 32-byte window(s) "
        "in the baseline (0x14790–0x147ab) and 2 and 2 in the variant (0x14770–0x1478b)"
    ) in summary.text
    assert "-C llvm-args=-align-loops=64" in summary.text and "-falign-loops=64" in summary.text

    # loops that lie alike: it says where the difference is not, and what is left
    alike = comparison(Metric.ASM, 1, 1, {"diagnoses": [], "byte_identical_functions": [],
        "functions": [_loop_row("f", (0x1000, 0x1020), (0x2000, 0x2020))]})  # fmt: skip
    [summary] = summaries([slower, same, alike])
    assert "nor in the placement of the 1 hot loop(s) it compared" in summary.text
    assert "data layout and memory, frequency" in summary.text
    assert "to rule out code placement, rebuild both" in summary.text
    [summary] = summaries([slower, same])
    assert "where the code lies was not read" in summary.text

    # time undecided: the same counts leave nothing to account for
    even = comparison(Metric.TIME, 1.0, 1.001, {}, verdict=Verdict.EQUIVALENT)
    [summary] = summaries([even, same, asm])
    assert "nothing to account for" in summary.text


def _replaced_case(diagnoses: list[dict[str, Any]]) -> Any:
    functions = [
        row("sum_scalar", 1000, 0, "baseline_only"),
        row("sum_pairs", 0, 700, "variant_only"),
        row("main", 20, 20),
    ]
    data = {"baseline_per_iteration": 1020.0, "variant_per_iteration": 720.0,
            "functions": functions, "diagnoses": diagnoses}  # fmt: skip
    [summary] = summaries([comparison(Metric.INSTRUCTIONS, 1020.0, 720.0, data)])
    return summary


def test_a_function_called_in_place_of_another_is_one_cause_with_their_net_change() -> None:
    # apart, the gone one read "-1,000 sum_scalar ... 3.3 times the difference"
    callee_changed = {
        "claim": "callee_changed",
        "function": "main",
        "evidence": ["callgrind's call graph: `main` calls ..."],
        "detail": {"from": "sum_scalar", "to": "sum_pairs", "caller": "main"},
    }
    summary = _replaced_case([callee_changed])
    (cause,) = summary.causes
    assert (cause.function, cause.replaced_by) == ("sum_scalar", "sum_pairs")
    assert cause.delta_per_iteration == -300 and cause.share == 1.0
    assert "sum_scalar (1,000) → sum_pairs (700), -300" in summary.text
    assert "account for 100%" in summary.text
    assert any("callee_changed" in line for line in cause.evidence)
    body = summary.to_json()["summary"]["causes"][0]
    assert (body["replaced_by"], body["baseline_per_iteration"], body["variant_per_iteration"]) == (
        "sum_pairs", 1000, 700,
    )  # fmt: skip


def test_without_a_lens_that_saw_one_called_in_place_of_the_other_nothing_is_paired() -> None:
    summary = _replaced_case([])
    assert [c.function for c in summary.causes] == ["sum_scalar"]
    assert not summary.causes[0].replaced_by and "→ sum_pairs" not in summary.text


# torch.relu vs torch.compile(torch.relu), field trial 34: callgrind spells ATen's loop with its
# return type and parameters, perf without them
ATEN_LOOP = "c10::function_ref<void (char**, long)>::callback_fn<clamp_min_scalar_kernel_impl>"
KERNEL_SO = "cocme5thc6qzyvpreqlnkfmi5w3t24kl.main.so"


def _torch_rows() -> list[dict[str, Any]]:
    def at(name: str, obj: str, before: float, after: float, presence: str) -> dict[str, Any]:
        return {"name": name, "object": obj, "baseline": before, "variant": after,
                "delta": after - before, "presence": presence}  # fmt: skip

    return [
        at(f"void {ATEN_LOOP}(long, char**, long)", "libtorch_cpu.so", 50050, 0, "baseline_only"),
        at("_PyEval_EvalFrameDefault", "libpython3.11.so.1.0", 212, 27737, "both"),
        at("kernel", KERNEL_SO, 0, 18771, "variant_only"),
        at("_mm256_max_ps(float vector[8], float vector[8])", KERNEL_SO, 0, 6251, "variant_only"),
        at("_Py_dict_lookup", "libpython3.11.so.1.0", 98, 2881, "both"),
        at("pybind11::cpp_function::dispatcher", "libtorch_python.so", 0, 2036, "variant_only"),
    ]


def _torch_case(profile_claims: list[dict[str, Any]]) -> Any:
    rows = _torch_rows()
    before = 58536.0
    after = before + sum(r["delta"] for r in rows)
    counted = instructions(rows, before, after, verdict=Verdict.SLOWER)
    profile = comparison(Metric.PROFILE, 1.0, 2.0, {"diagnoses": profile_claims})
    [summary] = summaries([counted, profile])
    return summary


def test_a_kernel_in_place_of_an_aten_loop_is_said_with_the_overhead_around_it() -> None:
    under_caller = {
        "claim": "callee_changed",
        "function": "cfunction_call",
        "evidence": ["perf: kernel on 354 of 1076 sampled stacks (variant), under cfunction_call"],
        "detail": {"from": ATEN_LOOP, "to": "kernel", "caller": "cfunction_call"},
    }
    summary = _torch_case([under_caller])
    [pair] = summary.replaced
    assert (pair.function, pair.replaced_by) == (f"void {ATEN_LOOP}(long, char**, long)", "kernel")
    assert (pair.baseline_per_iteration, pair.variant_per_iteration) == (50050, 18771)
    assert f"{ATEN_LOOP}(long, char**, long) (50,050) → kernel (18,771), -31,279" in summary.text
    assert "and around it +27,525 _PyEval_EvalFrameDefault" in summary.text
    # the kernel is no cause of its own: it is the replacement
    assert "kernel" not in [c.function for c in summary.causes]
    # the added work grouped by object: the interpreter apart from the kernel's own object
    assert summary.added_by_object[0] == ("libpython3.11.so.1.0", 27525 + 2783)
    assert f"+6,251 in {KERNEL_SO} (beside kernel, in its object)" in summary.text
    body = summary.to_json()["summary"]
    assert body["replaced"][0]["replaced_by"] == "kernel"
    assert body["added_by_object"][0]["object"] == "libpython3.11.so.1.0"


def test_a_gone_and_a_new_function_with_no_shared_caller_are_not_paired() -> None:
    # the profile saw each appear and disappear, under no common caller: no replacing claim
    apart = [
        {"claim": "disappeared", "function": ATEN_LOOP, "evidence": ["perf"], "detail": {}},
        {"claim": "appeared", "function": "kernel", "evidence": ["perf"], "detail": {}},
    ]
    summary = _torch_case(apart)
    assert summary.replaced == () and summary.added_by_object == ()
    # listed as before: the additions only
    assert "→ kernel" not in summary.text and not any(c.replaced_by for c in summary.causes)
    assert summary.causes[0].function == "_PyEval_EvalFrameDefault"
    assert summary.to_json()["summary"]["replaced"] == []


def test_a_dispatch_target_in_place_of_another_is_one_cause_in_the_profile() -> None:
    # np.sort with AVX-512 disabled: the zmm sorting network gone, the avx2 one new, one caller
    zmm = "sort_n_vec<zmm_vector<float>, Comparator<zmm_vector<float>, false>, 32>"
    ymm = "sort_n_vec<avx2_vector<float>, Comparator<avx2_vector<float>, false>, 32>"
    data = {
        "symbols": [
            {"name": ymm, "object": "_multiarray_umath.so", "baseline_share": 0.0,
             "variant_share": 0.5},
            {"name": zmm, "object": "_multiarray_umath.so", "baseline_share": 0.4,
             "variant_share": 0.0},
            {"name": "quicksort_float", "object": "_multiarray_umath.so", "baseline_share": 0.6,
             "variant_share": 0.5},
        ],
        "diagnoses": [{
            "claim": "dispatch_changed", "function": zmm,
            "evidence": ["perf: under quicksort_float (the nearest caller on both sides)"],
            "detail": {"from": zmm, "to": ymm, "caller": "quicksort_float"},
        }],
    }  # fmt: skip
    [summary] = summaries(
        [comparison(Metric.PROFILE, 1000.0, 1600.0, data, verdict=Verdict.SLOWER)]
    )
    [cause, *_] = summary.causes
    assert (cause.function, cause.replaced_by) == (zmm, ymm)
    assert f"{zmm} (400) → {ymm} (800), +400 ns" in summary.text
    # the replacement moved with the difference: a cause, not a replaced pair beside it
    assert summary.replaced == ()
