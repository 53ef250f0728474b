"""A diagnosis read back from its JSON is the diagnosis written, and the analysis reads its
replaced pair and vector widths as fields (records/diagnosis.py)."""

from __future__ import annotations

from perflab.records.diagnosis import Claim, Diagnosis, Replacement, VectorWidths


def test_a_diagnosis_survives_its_json() -> None:
    written = Diagnosis(
        Claim.DISPATCH_CHANGED,
        "memcpy",
        ("perf: __memcpy_evex in the baseline, __memcpy_avx_unaligned in the variant",),
        samples=120,
        detail={"from": "__memcpy_evex", "to": "__memcpy_avx_unaligned", "caller": "main"},
    )
    read = Diagnosis.from_json(written.to_json())
    assert read == written
    assert read.to_json() == written.to_json()
    assert read.replacement == Replacement(old="__memcpy_evex", new="__memcpy_avx_unaligned")
    assert read.vector_widths is None


def test_the_typed_views_of_a_claim() -> None:
    widths = Diagnosis(Claim.VECTOR_WIDTH_CHANGED, "saxpy", (), 38, {"from": 512, "to": None})
    assert widths.vector_widths == VectorWidths(512, None)
    assert widths.replacement is None
    callee = Diagnosis(Claim.CALLEE_CHANGED, "main", (), detail={"from": "a", "to": "b"})
    assert callee.replacement == Replacement(old="a", new="b")
    # a pair is named only when both functions are known
    half = Diagnosis(Claim.DISPATCH_CHANGED, "f", (), detail={"from": "a"})
    assert half.replacement is None
    assert Diagnosis.from_json(half.to_json()).to_json() == half.to_json()
