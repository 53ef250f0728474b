"""A dispatch in numpy's copies as the profile lens claims it: the variable, the object, the
caller."""

from __future__ import annotations

from collections import Counter

from perflab.lenses.profile.analyse import ProfileDetails
from perflab.tool_output.profile_diff import diff_profiles
from perflab.tool_output.profile_evidence import with_stack_evidence
from perflab.tool_output.profile_stacks import Stack, hot_symbols
from tests.support.symbol_names import DISABLED, NPY

SUBJECT = "perflab.lenses.profile.analyse"


def _stacks(rows: dict[tuple[str, ...], int]) -> Counter[Stack]:
    return Counter({tuple((NPY, f) for f in reversed(frames)): n for frames, n in rows.items()})


def _profile(selectors: tuple[str, ...]) -> ProfileDetails:
    base = _stacks({("main", "ufunc_generic_fastcall", "DOUBLE_add_X86_V3"): 900,
                    ("main", "ufunc_generic_fastcall"): 100})  # fmt: skip
    new = _stacks({("main", "ufunc_generic_fastcall", "DOUBLE_add"): 900,
                   ("main", "ufunc_generic_fastcall"): 100})  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    return ProfileDetails(checked, "cpu-clock", "dwarf", 1000, 1000, selectors=selectors)


def test_profile_claim_names_the_variable_the_object_and_the_caller() -> None:
    [claim] = _profile(DISABLED).diagnoses()
    assert str(claim.claim) == "dispatch_changed"
    assert claim.detail["selected_by"] == list(DISABLED)
    assert claim.detail["object"] == NPY
    assert any("both called from ufunc_generic_fastcall" in e for e in claim.evidence)
    assert any("NPY_DISABLE_CPU_FEATURES" in e for e in claim.evidence)
    # without a selector the claim rests on the call site alone and names no variable
    [plain] = _profile(()).diagnoses()
    assert "selected_by" not in plain.detail
