"""The asm lens's claims about one row (`perflab.lenses.asm.claims`), called directly on rows
built from constructed listings: each claim only from the evidence it names, nothing on
byte-identical code, and a note where a claim cannot be made."""

from __future__ import annotations

from collections.abc import Mapping

from perflab.lenses.asm.claims import (
    call_target,
    one_sided,
    plain_name,
    row_claims,
    vector_width_change,
)
from perflab.lenses.asm.code_diff import compare_functions
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.lenses.asm.rows import Row, VariantCode, side_of
from perflab.records.diagnosis import Claim

SUBJECT = "perflab.lenses.asm.claims"

# vmovups ymm0, [rdi]; vmaxps ymm0, ymm0, ymm1; vmovups [rsi], ymm0; ret
YMM = bytes.fromhex("c5fc1007c5fc5fc1c5fc1106c3")
# movups xmm0, [rdi]; maxps xmm0, xmm1; movups [rsi], xmm0; ret
XMM = bytes.fromhex("0f10070f5fc10f1106c3")
CALL_A = bytes.fromhex("e8fb0f0000c3")  # call 0x2000 (from 0x1000); ret
CALL_B = bytes.fromhex("e8fb1f0000c3")  # call 0x3000; ret
NAMES = {0x2000: "expf8", 0x3000: "expf16"}
OBJ = "/lib/libk.so"


def listing(name: str, code: bytes, samples: float) -> FunctionListing:
    return build_listing(
        FunctionCode(name, name, OBJ, 0x1000, code=code),
        NAMES.get,
        costs={0x1000: samples} if samples else None,
    )


def variant_code(
    *listings: FunctionListing, total: float = 1000.0, build: str | None = None,
    family_samples: Mapping[str, float] | None = None,
) -> VariantCode:  # fmt: skip
    return VariantCode(
        tuple(listings), total, family_samples=family_samples or {}, identities={OBJ: build}
    )


def row(name: str, base: VariantCode, new: VariantCode) -> Row:
    """The row of family `name`, each side its listings of that name's family."""
    b = side_of(base, name, [x for x in base.listings if x.name.startswith(name)])
    v = side_of(new, name, [x for x in new.listings if x.name.startswith(name)])
    return Row(
        name=name, baseline=b, variant=v, change=compare_functions(name, b.primary, v.primary)
    )


def claimed(r: Row) -> list[Claim]:
    return sorted(d.claim for d in r.diagnoses)


def test_names_and_call_targets_as_claims_compare_them() -> None:
    assert plain_name("f(int, long)") == "f"
    assert plain_name("memcpy@plt") == "memcpy"
    assert plain_name("std::vector<int>::push_back(int const&)") == "std::vector<int>::push_back"
    assert call_target("call expf8") == "expf8"
    assert call_target("jmp expf8") == "expf8"  # a tail call out of the function
    assert call_target("jmp .L3") == ""  # a jump inside it
    assert call_target("call qword ptr [rip + memcpy@GOTPCREL]") == "memcpy@GOTPCREL"
    assert call_target("mov eax, 1") == ""


def test_byte_identical_objects_claim_nothing_even_where_the_listings_differ() -> None:
    base = variant_code(listing("f", YMM, 500.0), build="build-id:ab")
    new = variant_code(listing("f", XMM, 500.0), build="build-id:ab")
    r = row("f", base, new)
    assert row_claims(r, base, new, set()) is r
    # the same code in two different builds: nothing changed, nothing claimed
    same = variant_code(listing("f", YMM, 500.0), build="build-id:cd")
    assert claimed(row_claims(row("f", base, same), base, same, set())) == []


def test_changed_code_is_claimed_with_how_much_changed_and_which_objects() -> None:
    base = variant_code(listing("f", YMM, 500.0), build="build-id:ab")
    new = variant_code(listing("f", XMM, 500.0), build="build-id:cd")
    out = row_claims(row("f", base, new), base, new, set())
    assert claimed(out) == [Claim.CODE_CHANGED, Claim.VECTOR_WIDTH_CHANGED]
    [code] = [d for d in out.diagnoses if d.claim is Claim.CODE_CHANGED]
    assert "normalised instructions differ; 13 -> 10 bytes" in code.evidence[0]
    assert code.evidence[1] == "objects differ: build-id:ab vs build-id:cd"
    assert code.samples == 500
    [width] = [d for d in out.diagnoses if d.claim is Claim.VECTOR_WIDTH_CHANGED]
    assert dict(width.detail) == {"from": 256, "to": 128}


def test_another_member_of_a_dispatch_family_is_a_dispatch_change_not_a_code_change() -> None:
    base = variant_code(listing("scale.sse2", XMM, 600.0))
    new = variant_code(listing("scale.avx2", YMM, 700.0))
    out = row_claims(row("scale", base, new), base, new, set())
    assert claimed(out) == [Claim.DISPATCH_CHANGED, Claim.VECTOR_WIDTH_CHANGED]
    [dispatch] = [d for d in out.diagnoses if d.claim is Claim.DISPATCH_CHANGED]
    assert dispatch.replacement is not None
    assert (dispatch.replacement.old, dispatch.replacement.new) == ("scale.sse2", "scale.avx2")
    assert (
        dispatch.evidence[0] == "perf: ran scale.sse2 in the baseline (600 of 1000 samples, 60.0%)"
    )
    assert dispatch.samples == 600  # the fewer side's


def test_a_retargeted_call_is_claimed_only_where_a_callee_ran() -> None:
    base = variant_code(listing("driver", CALL_A, 500.0), family_samples={"expf8": 300.0})
    new = variant_code(listing("driver", CALL_B, 500.0), family_samples={"expf16": 200.0})
    explained: set[str] = set()
    out = row_claims(row("driver", base, new), base, new, explained)
    assert claimed(out) == [Claim.CALLEE_CHANGED]
    [d] = out.diagnoses
    assert (d.detail["from"], d.detail["to"]) == ("expf8", "expf16")
    assert d.evidence == (
        "objdump: driver calls expf8 (baseline)",
        "objdump: driver calls expf16 instead (variant)",
    )
    assert explained == {"expf8", "expf16"}  # their own rows claim nothing more
    # no debug info: whether the calls were inlined cannot be told, and the note says so
    assert any("build with -g" in note for note in out.notes)
    # neither callee sampled: the change is listed apart, not claimed
    cold_b, cold_v = variant_code(*base.listings), variant_code(*new.listings)
    cold = row_claims(row("driver", cold_b, cold_v), cold_b, cold_v, set())
    assert cold.diagnoses == () and [d.claim for d in cold.not_run] == [Claim.CALLEE_CHANGED]


def test_a_function_sampled_on_one_side_only_disappeared_when_the_samples_settle_it() -> None:
    base = variant_code(listing("gone", YMM, 300.0), listing("main", XMM, 700.0))
    new = variant_code(listing("main", XMM, 1000.0))
    r = row("gone", base, new)
    [d] = one_sided(r, base, new, set()).diagnoses
    assert d.claim is Claim.DISAPPEARED and d.samples == 300
    assert (
        d.evidence[0]
        == "perf: 300 of 1000 samples, 30.0% in the baseline; 0 of 1000 in the variant"
    )
    # a pair already explained (a callee_changed claim named it) claims nothing again
    assert one_sided(r, base, new, {"gone"}) is r
    # too few samples for zero on the other side to be more than chance: a note, no claim
    few = variant_code(listing("gone", YMM, 15.0), listing("main", XMM, 985.0))
    quiet = one_sided(row("gone", few, new), few, new, set())
    assert quiet.diagnoses == ()
    assert "no disappeared claim for gone: 15 samples" in quiet.notes[0]


def test_a_width_claim_needs_a_different_width() -> None:
    a, b = listing("f", YMM, 1.0), listing("g", YMM, 1.0)
    assert vector_width_change("f", a, b, 10) == []
    [d] = vector_width_change("f", a, listing("h", XMM, 1.0), 10)
    assert d.vector_widths is not None and d.vector_widths.variant_bits == 128


def listing_at(name: str, code: bytes, samples: float, address: int) -> FunctionListing:
    return build_listing(
        FunctionCode(name, name, OBJ, address, code=code),
        NAMES.get,
        costs={address: samples},
    )


def test_another_copy_of_one_name_in_one_object_is_a_dispatch_with_its_widths() -> None:
    # numpy: the X86_V4 and X86_V3 objects of _multiarray_umath both define simd_exp_FLOAT
    base = variant_code(listing_at("simd_exp_FLOAT", YMM, 600.0, 0x70A340), build="sha:1")
    new = variant_code(listing_at("simd_exp_FLOAT", XMM, 700.0, 0x547290), build="sha:1")
    out = row_claims(row("simd_exp_FLOAT", base, new), base, new, set())
    assert claimed(out) == [Claim.DISPATCH_CHANGED, Claim.VECTOR_WIDTH_CHANGED]
    [dispatch] = [d for d in out.diagnoses if d.claim is Claim.DISPATCH_CHANGED]
    assert "defines simd_exp_FLOAT at 0x70a340 and at 0x547290" in dispatch.evidence[0]
    assert "the baseline ran the one at 0x70a340" in dispatch.evidence[1]
    # both copies ran in both variants, another one hottest in each: nothing the variants changed
    both = variant_code(
        listing_at("simd_exp_FLOAT", YMM, 600.0, 0x70A340),
        listing_at("simd_exp_FLOAT", XMM, 100.0, 0x547290),
        build="sha:1",
    )
    flipped = variant_code(
        listing_at("simd_exp_FLOAT", YMM, 100.0, 0x70A340),
        listing_at("simd_exp_FLOAT", XMM, 600.0, 0x547290),
        build="sha:1",
    )
    assert claimed(row_claims(row("simd_exp_FLOAT", both, flipped), both, flipped, set())) == []
    # the same copy in both: byte-identical code, nothing claimed
    same = variant_code(listing_at("simd_exp_FLOAT", YMM, 700.0, 0x70A340), build="sha:1")
    assert claimed(row_claims(row("simd_exp_FLOAT", base, same), base, same, set())) == []


def test_a_function_gone_from_a_byte_identical_object_is_another_path_not_inlining() -> None:
    base = variant_code(listing("gone", YMM, 300.0), listing("main", XMM, 700.0), build="sha:1")
    new = variant_code(listing("main", XMM, 1000.0), build="sha:1")
    out = one_sided(row("gone", base, new), base, new, set())
    assert [d.claim for d in out.diagnoses] == [Claim.DISAPPEARED]
    assert not any("inlined cannot be told" in note for note in out.notes)
    assert any("byte-identical in both, so the variant took another path" in n for n in out.notes)
