"""The corpus scorer on hand-written comparisons (no tools run)."""

from __future__ import annotations

from .scoring import Expect, claims_of, fold, score


def test_fold_gives_a_readable_identity() -> None:
    assert fold("helper.isra.0") == "helper"
    assert fold("process.cold") == "process"
    assert fold("classify.part.0") == "classify"
    assert fold("scale.constprop.0.isra.0") == "scale"
    assert fold("dot.avx2") == fold("dot.default") == fold("dot.resolver") == "dot"
    assert fold("KernelFunction::isValid() const (.isra.0)") == "KernelFunction::isValid"
    assert fold("at::native::AVX2::add_kernel(at::TensorIterator&, c10::Scalar const&)") == (
        "at::native::AVX2::add_kernel"
    )
    assert fold("puts@plt") == "puts"
    assert fold("void at::native::DEFAULT::loop<float (float, float)>(char**, long)") == (
        "at::native::DEFAULT::loop<float (float, float)>"
    )
    assert fold("__strlen_avx2") == "__strlen_avx2"


def test_diagnoses_are_read_when_present() -> None:
    comparison = {
        "metric": "instructions",
        "inlining_changes": [{"function": "helper", "change": "outlined"}],
        "diagnoses": [
            {"claim": "outlined", "function": "helper", "evidence": ["DWARF: ..."], "samples": None}
        ],
    }
    [found] = claims_of(comparison)
    assert (found.lens, found.claim, found.function, found.source) == (
        "instructions", "outlined", "helper", "diagnoses",
    )  # fmt: skip


def test_legacy_asm_sentences_are_read_as_the_claims_they_make() -> None:
    rows = {
        "kernel": "call replaces lea; now calls helper (outlined?); hot loop 17 -> 18 bytes",
        "helper": "only in the variant (new, renamed beyond pairing, or no longer inlined)",
        "relu": "uses 512-bit registers (baseline 256); code size 40 -> 80 bytes (2.00x)",
        "same": "identical after normalisation",
    }
    comparison = {
        "metric": "asm",
        "functions": [{"name": name, "change": change} for name, change in rows.items()],
    }
    got = {(f.claim, f.function) for f in claims_of(comparison)}
    assert got == {
        ("outlined", "helper"),
        ("code_changed", "kernel"),
        ("appeared", "helper"),
        ("vector_width_changed", "relu"),
        ("code_changed", "relu"),
    }


def test_score_counts_found_false_and_tolerated() -> None:
    comparison = {
        "metric": "profile",
        "appeared": ["helper"],
        "disappeared": ["subtype_dealloc"],
    }
    expected = [Expect("profile", ("appeared",), "helper"), Expect("asm", ("outlined",), "x")]
    s = score("c", "A/B", "profile", comparison, expected, [])
    assert s.found == ["profile: appeared helper"] and s.missed == []
    assert s.false == ["profile: disappeared subtype_dealloc"]
    tolerated = [Expect("profile", ("disappeared",), "subtype_dealloc")]
    assert score("c", "A/B", "profile", comparison, expected, tolerated).false == []
    # an A/A expects and tolerates nothing
    aa = score("c", "A/A", "profile", comparison, [], [])
    assert len(aa.false) == 2 and aa.expected == []
    assert score("c", "A/B", "profile", None, expected, []).missed == ["profile: appeared helper"]


def test_claims_about_functions_perf_never_sampled_are_counted() -> None:
    from .scoring import not_run_claims

    comparisons = [
        {"metric": "asm", "diagnoses": [
            {"claim": "inlined", "function": "format_exc_check_arg", "evidence": ["DWARF"]},
            {"claim": "disappeared", "function": "rangeiter_next", "evidence": ["perf"]},
            {"claim": "callee_changed", "function": "list_dealloc", "evidence": ["objdump"],
             "detail": {"from": "PyThreadState_Get@plt", "to": "_PyThreadState_UncheckedGet"}},
        ]},
        {"metric": "time", "diagnoses": [{"claim": "x", "function": "y"}]},
    ]  # fmt: skip
    ran = {"rangeiter_next", "_PyThreadState_UncheckedGet", "list_dealloc"}
    assert not_run_claims(comparisons, ran) == ["asm: inlined format_exc_check_arg"]


def test_a_claim_about_a_dispatch_family_ran_when_a_member_was_sampled() -> None:
    from .scoring import not_run_claims, ran_names

    claims = [{"metric": "asm", "diagnoses": [
        {"claim": "vector_width_changed", "function": "strlen", "evidence": ["disassembly"]},
    ]}]  # fmt: skip
    assert not_run_claims(claims, ran_names(["__strlen_evex"])) == []
    assert not_run_claims(claims, ran_names(["memcpy"])) == ["asm: vector_width_changed strlen"]
