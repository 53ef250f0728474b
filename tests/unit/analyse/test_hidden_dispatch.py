"""Dispatch changes the counting lens's tool could not see (analyse/hidden_dispatch.py): a pair
the CPU lenses claim is hidden only where neither function's count changed under the tool;
what the sentence says of it; the vector widths that lead the summary."""

from __future__ import annotations

from typing import Any

from perflab.analyse.hidden_dispatch import (
    SHOWN_WIDTHS,
    HiddenDispatch,
    counted_blind_spot,
    hidden_dispatches,
    width_lead,
)
from perflab.lenses.registry import descriptor_for
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison
from tests.support.explanation_comparisons import comparison, instructions, row


def _dispatch(old: str, new: str) -> dict[str, Any]:
    return {"claim": "dispatch_changed", "function": old, "evidence": ["perf"],
            "detail": {"from": old, "to": new}}  # fmt: skip


def _width(function: str, old: int, new: int, samples: int = 10) -> dict[str, Any]:
    return {"claim": "vector_width_changed", "function": function, "samples": samples,
            "evidence": ["disassembly"], "detail": {"from": old, "to": new}}  # fmt: skip


def _claims(metric: Metric, *diagnoses: dict[str, Any]) -> Comparison:
    return comparison(metric, 1, 1, {"diagnoses": list(diagnoses)})


def _counted(kernel_before: float, kernel_after: float) -> Comparison:
    """valgrind ran the HASWELL kernel in both variants."""
    rows = [row("dgemm_kernel_HASWELL", kernel_before, kernel_after)]
    return instructions(rows, 9e6, 9e6, verdict=Verdict.EQUIVALENT)


ASM = _claims(
    Metric.ASM,
    _dispatch("dgemm_kernel_SKYLAKEX", "dgemm_kernel_HASWELL"),
    _width("dgemm_kernel_SKYLAKEX", 512, 256),
)


def test_a_dispatch_the_tool_ran_the_same_in_both_is_hidden_with_what_it_ran() -> None:
    [hidden] = hidden_dispatches([_counted(8e6, 8e6), ASM])
    assert hidden == HiddenDispatch(
        cpu_baseline="dgemm_kernel_SKYLAKEX",
        cpu_variant="dgemm_kernel_HASWELL",
        lenses=("asm",),
        width="512 → 256-bit vectors",
        tool_ran="dgemm_kernel_HASWELL",
        tool_per_iteration=8e6,
        tool="valgrind",
        unit="instructions",
    )
    assert hidden.sentence == (
        "the CPU ran dgemm_kernel_SKYLAKEX → dgemm_kernel_HASWELL (asm, 512 → 256-bit vectors), "
        "valgrind ran dgemm_kernel_HASWELL in both (8,000,000 instructions per iteration each)"
    )


def test_a_count_that_moved_by_the_residue_or_more_is_no_hidden_dispatch() -> None:
    # the residue is the counting lens's own figure (its blind spot's), not the analysis's
    blind = descriptor_for(Metric.INSTRUCTIONS).explanation.blind_spot
    assert blind is not None
    residue = blind.residue_per_iteration
    assert hidden_dispatches([_counted(8e6, 8e6 + residue), ASM]) == []
    # below it, the change is the handshake's, not the code's
    assert len(hidden_dispatches([_counted(8e6, 8e6 + residue / 2), ASM])) == 1


def test_without_the_counting_lens_nothing_is_hidden_and_no_blind_spot_is_named() -> None:
    assert hidden_dispatches([ASM]) == []
    assert counted_blind_spot([ASM]) is None
    blind = counted_blind_spot([_counted(8e6, 8e6), ASM])
    assert blind is not None and blind.hides == "valgrind hides AVX-512 from the code it runs"


def test_a_pair_both_cpu_lenses_claim_is_one_with_both_lenses() -> None:
    profile = _claims(Metric.PROFILE, _dispatch("dgemm_kernel_SKYLAKEX", "dgemm_kernel_HASWELL"))
    [hidden] = hidden_dispatches([_counted(8e6, 8e6), profile, ASM])
    assert set(hidden.lenses) == {"asm", "profile"}


def test_the_sentence_says_a_copy_and_a_tool_that_ran_neither() -> None:
    copy = HiddenDispatch("simd_exp", "simd_exp", ("asm",), "", "", tool="valgrind")
    assert copy.sentence == (
        "the CPU ran another copy of simd_exp (its object defines that name more than once) "
        "(asm), valgrind ran neither differently"
    )


def test_the_widest_changes_lead_the_summary_the_rest_counted() -> None:
    functions = [f"f{n}" for n in range(SHOWN_WIDTHS + 2)]
    asm = _claims(Metric.ASM, *(_width(f, 256, 512, samples=100 - n)
                                for n, f in enumerate(functions)))  # fmt: skip
    lead = width_lead([asm])
    shown = "; ".join(f"{f}: 256-bit → 512-bit vectors (asm)" for f in functions[:SHOWN_WIDTHS])
    assert lead == f"{shown}; and 2 more. "


def test_a_width_change_is_named_by_its_dispatch_pair_and_no_vectors_is_said_so() -> None:
    asm = _claims(
        Metric.ASM,
        _dispatch("k_AVX512", "k_SSE"),
        _width("k_AVX512", 512, 0),
    )
    assert width_lead([asm]) == "k_AVX512 → k_SSE: 512-bit → no vectors (asm). "
    assert width_lead([_counted(8e6, 8e6)]) == ""
