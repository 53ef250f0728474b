"""The asm lens's rows and claims (pure): pairing by what ran, fragments, dispatch families,
claims only from evidence. Names' identities are test_identity.py's; host CPU models and
separate debug files tests/unit/tool_drivers'."""

from __future__ import annotations

from pathlib import Path

from perflab.lenses.asm.explain import explain
from perflab.lenses.asm.machine_code import FunctionCode, FunctionListing, build_listing
from perflab.tool_drivers.debuginfo import SourceFrame
from tests.support.asm_listings import XMM, YMM, ZMM, claims, code, listing

CALL_A = bytes.fromhex("e8fb0f0000c3")  # call 0x2000 (from 0x1000); ret
CALL_B = bytes.fromhex("e8fb1f0000c3")  # call 0x3000; ret


# -- pairing by what ran ---------------------------------------------------------------------


def test_an_executed_kernel_is_never_paired_with_its_unexecuted_copy() -> None:
    # the bug: AVX2 ran (97.6%) in the baseline, the DEFAULT copy (0%) was shown as the variant
    base = code(listing("at::native::AVX2::k(float)", YMM, 976.0))
    new = code(
        listing("at::native::DEFAULT::k(float)", XMM, 0.0),
        listing("at::native::AVX512::k(float)", YMM, 950.0),
    )
    [row] = explain(base, new)
    assert row.variant.primary is not None
    assert row.variant.primary.name == "at::native::AVX512::k(float)"
    assert ("dispatch_changed", row.name) in claims([row])
    [d] = [d for d in row.diagnoses if str(d.claim) == "dispatch_changed"]
    assert d.detail == {"from": "at::native::AVX2::k(float)", "to": "at::native::AVX512::k(float)"}
    assert any("976 of 1000" in e for e in d.evidence)


def test_another_isa_kernel_shaped_differently_is_a_dispatch_change() -> None:
    # ATen: DEFAULT runs vectorized_loop from a thin callback; AVX2 inlines it into the callback
    ids = {"/lib/libtorch_cpu.so": "build-id:ab12"}
    old = "at::native::DEFAULT::vectorized_loop<add>(char**)"
    new = "callback_fn<at::native::AVX2::VectorizedLoop2d<add>>(char**)"
    base = code(listing(old, XMM, 880.0, obj="/lib/libtorch_cpu.so"), identities=ids)
    changed = code(listing(new, YMM, 740.0, obj="/lib/libtorch_cpu.so"), identities=ids)
    [row] = explain(base, changed)
    assert sorted(c for c, _ in claims([row])) == ["dispatch_changed", "vector_width_changed"]
    assert row.paired_by == "paired by dispatch: DEFAULT -> AVX2 in libtorch_cpu.so"
    # another object: not one dispatcher's choice, no such pairing
    other = code(
        listing(new, YMM, 740.0, obj="/lib/libtorch_cpu.so"),
        identities={"/lib/libtorch_cpu.so": "build-id:cd34"},
    )
    assert "dispatch_changed" not in [c for c, _ in claims(explain(base, other))]


def test_a_side_that_did_not_run_says_so_and_is_not_compared() -> None:
    base = code(listing("add_kernel", YMM, 500.0))
    new = code(
        listing("other", XMM, 900.0),
        defined={"add_kernel": ("add_kernel in libk.so",)},
        family_samples={"other": 900.0},
    )
    rows = {row.name: row for row in explain(base, new)}
    row = rows["add_kernel"]
    assert row.variant.primary is None and not row.variant.ran
    assert "not sampled (0 of 1000 samples)" in row.variant.why_not
    assert "defined as add_kernel in libk.so" in row.variant.why_not
    [d] = row.diagnoses
    assert str(d.claim) == "disappeared"
    assert any("add_kernel in libk.so" in e for e in d.evidence)
    assert "removed" not in row.sentence and "inlined" not in row.sentence


def test_too_few_samples_make_no_claim_and_say_how_many_more() -> None:
    base = code(listing("f", YMM, 3.0), total=10.0)
    new = code(listing("f", XMM, 4.0), total=10.0)
    [row] = explain(base, new)
    assert not row.diagnoses and not row.baseline.ran
    # one side ran, the other had a few samples too: no "disappeared"
    base = code(listing("g", YMM, 30.0), total=100.0)
    new = code(listing("h", YMM, 96.0), family_samples={"g": 2.0, "h": 96.0}, total=100.0)
    assert "disappeared" not in [c for c, _ in claims(explain(base, new))]
    # zero samples where about 2 were expected is chance, not a disappearance
    base = code(listing("g", YMM, 20.0), total=1000.0)
    new = code(listing("h", YMM, 96.0), total=100.0)
    rows = explain(base, new)
    assert "disappeared" not in [c for c, _ in claims(rows)]
    assert any("more samples" in note for row in rows for note in row.notes)


def test_a_and_a_makes_no_claims() -> None:
    same = [
        listing("at::native::AVX2::k(float)", YMM, 600.0),
        listing("work.cold", XMM, 0.0),
        listing("work", CALL_A, 300.0),
    ]
    rows = explain(code(*same), code(*same))
    assert claims(rows) == []
    assert all(row.change.identical for row in rows)


def test_byte_identical_objects_carry_no_code_claims() -> None:
    ids = {"/lib/libk.so": "build-id:ab12"}
    base = code(listing("f", YMM, 500.0), identities=ids)
    new = code(listing("f", XMM, 500.0), identities=ids)  # impossible, but must not be claimed
    assert claims(explain(base, new)) == []
    other = code(listing("f", XMM, 500.0), identities={"/lib/libk.so": "build-id:cd34"})
    assert sorted(claims(explain(base, other))) == [
        ("code_changed", "f"),
        ("vector_width_changed", "f"),
    ]


def test_fragments_are_parts_of_their_function() -> None:
    base = code(listing("work", YMM, 500.0), listing("work.cold", CALL_A, 0.0))
    new = code(listing("work", YMM, 500.0))
    [row] = explain(base, new)
    assert row.name == "work"
    assert row.baseline.size_bytes == len(YMM) + len(CALL_A)
    assert [p["role"] for p in row.baseline.parts_json()] == ["fragment"]
    assert "Sleef_expf8_u10" in row.baseline.calls


def test_a_callee_that_changed_width_is_callee_changed_not_identical() -> None:
    base = code(listing("kernel", CALL_A, 500.0), listing("Sleef_expf8_u10", YMM, 300.0))
    new = code(listing("kernel", CALL_B, 500.0), listing("Sleef_expf16_u10", YMM, 300.0))
    rows = explain(base, new)
    assert claims(rows) == [("callee_changed", "kernel")]
    [d] = [d for row in rows for d in row.diagnoses]
    assert {k: d.detail[k] for k in ("from", "to")} == {
        "from": "Sleef_expf8_u10",
        "to": "Sleef_expf16_u10",
    }
    assert d.detail["ran_samples"] == {"baseline": 500.0, "variant": 500.0}
    # the two callees play one role (the same call site): one row, both sides ran
    [callee] = [row for row in rows if row.name != "kernel"]
    assert callee.baseline.primary is not None and callee.variant.primary is not None
    assert callee.baseline.primary.name == "Sleef_expf8_u10"
    assert callee.variant.primary.name == "Sleef_expf16_u10"
    assert callee.paired_by.startswith("paired by call site: kernel calls")


def test_a_callee_renamed_under_a_cold_caller_is_callee_changed() -> None:
    # driver is too cold for a row; its disassembly still shows which callee it calls
    base = code(listing("compute_v1", YMM, 900.0), call_sites={"driver": ("compute_v1",)})
    new = code(listing("compute_v2", YMM, 900.0), call_sites={"driver": ("compute_v2",)})
    rows = explain(base, new)
    assert claims(rows) == [("callee_changed", "driver")]
    [row] = rows
    assert row.baseline.primary is not None and row.variant.primary is not None
    assert (row.baseline.primary.name, row.variant.primary.name) == ("compute_v1", "compute_v2")
    # without that evidence: what was sampled, and nothing about a rename
    rows = explain(code(listing("compute_v1", YMM, 900.0)), code(listing("compute_v2", YMM, 900.0)))
    assert sorted(claims(rows)) == [("appeared", "compute_v2"), ("disappeared", "compute_v1")]


def test_a_function_the_other_side_calls_where_it_ran_did_not_appear() -> None:
    """gcc's scale.constprop.0, called from `total`'s hot loop in both builds, was on 35-41%
    of one build's cpu-clock samples and on none of the other's (perf report agreed): its
    samples went to its caller. objdump shows the call where samples landed: no claim."""
    scale = {0x2000: "scale.constprop.0"}
    base = code(listing("total", CALL_A, 900.0, names=scale))
    new = code(
        listing("total", CALL_A, 500.0, names=scale), listing("scale.constprop.0", YMM, 400.0)
    )
    rows = explain(base, new)
    assert "appeared" not in [c for c, _ in claims(rows)]
    [note] = [n for row in rows for n in row.notes if "no appeared claim" in n]
    assert "total calls scale.constprop.0 at 0x1000" in note
    rows = explain(new, base)  # and the other way round
    assert "disappeared" not in [c for c, _ in claims(rows)]
    # a call site that nothing shows ran (no samples on it or after it) is no such evidence
    cold_call = bytes.fromhex("90e8fa0f0000c3")  # nop; call 0x2000; ret
    base = code(listing("total", cold_call, 900.0, names=scale))
    new = code(
        listing("total", cold_call, 500.0, names=scale), listing("scale.constprop.0", YMM, 400.0)
    )
    assert ("appeared", "scale") in claims(explain(base, new))


def test_inlining_is_claimed_only_with_dwarf_evidence() -> None:
    inlined = {0x1000: (SourceFrame("helper", "k.c", 3), SourceFrame("kernel", "k.c", 9))}
    calls_helper = listing("kernel", CALL_A, 400.0, frames={}, names={0x2000: "helper"})
    base = code(calls_helper, listing("helper", YMM, 500.0))
    rows = explain(base, code(listing("kernel", YMM, 900.0, frames=inlined)))
    assert claims(rows) == [("inlined", "helper")]  # said once: no code_changed, no disappeared
    [d] = rows[0].diagnoses or rows[1].diagnoses
    assert d.evidence[0] == "DWARF: helper inlined into kernel at k.c:9 (variant)"
    # and the other way round
    rows = explain(code(listing("kernel", YMM, 900.0, frames=inlined)), base)
    assert claims(rows) == [("outlined", "helper")]
    # without debug info: no inlining claim, and a note that says why
    rows = explain(base, code(listing("kernel", YMM, 900.0)))
    assert "inlined" not in [c for c, _ in claims(rows)]
    assert any("no debug info" in note for row in rows for note in row.notes)


def test_a_change_no_sample_landed_on_is_listed_apart_not_claimed() -> None:
    # kernel ran in both (its samples on its first instruction); the call to the error path
    # (nop; call; ret: the call and the ret after it unsampled) and, in the variant, the
    # inlined copy (at an address with no sample) never ran
    error_path = bytes.fromhex("90e8fa0f0000c3")  # nop; call 0x2000; ret
    base = code(listing("kernel", error_path, 900.0, frames={}, names={0x2000: "raise_error"}))
    inlined = {0x1001: (SourceFrame("raise_error", "k.c", 3), SourceFrame("kernel", "k.c", 9))}
    new = code(listing("kernel", bytes.fromhex("909090c3"), 900.0, frames=inlined))
    rows = explain(base, new)
    assert claims(rows) == []  # no inlined claim, and no code_changed for the same change
    [change] = [d for row in rows for d in row.not_run]
    assert (str(change.claim), change.function) == ("inlined", "raise_error")
    assert change.detail["ran_samples"] == {"baseline": 0.0, "variant": 0.0}


def test_an_inlining_claim_carries_the_samples_it_touches() -> None:
    inlined = {0x1000: (SourceFrame("helper", "k.c", 3), SourceFrame("kernel", "k.c", 9))}
    calls_helper = listing("kernel", CALL_A, 400.0, frames={}, names={0x2000: "helper"})
    base = code(calls_helper, listing("helper", YMM, 500.0), family_samples={"helper": 500.0})
    [d] = [d for row in explain(base, code(listing("kernel", YMM, 900.0, frames=inlined)))
           for d in row.diagnoses]  # fmt: skip
    # the call and its return (400 samples on the call) and the callee's own 500; the inlined
    # copy's 900 in the variant
    assert d.detail["ran_samples"] == {"baseline": 900.0, "variant": 900.0}


def test_a_library_built_for_other_cpus_is_one_dispatch_change_per_role() -> None:
    # OpenBLAS under OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU: the same object's kernel and
    # packing routine for another CPU ran instead; names no ISA list knows
    ids = {"identities": {"/lib/libopenblas.so": "build-id:ab"}}
    obj = "/lib/libopenblas.so"
    base = code(listing("dgemm_kernel_SKYLAKEX", ZMM, 800.0, obj),
                listing("dgemm_oncopy_SKYLAKEX", XMM, 100.0, obj), **ids)  # fmt: skip
    new = code(listing("dgemm_kernel_HASWELL", YMM, 800.0, obj),
               listing("dgemm_oncopy_HASWELL", XMM, 100.0, obj), **ids)  # fmt: skip
    rows = explain(base, new)
    assert sorted(claims(rows)) == [
        ("dispatch_changed", "dgemm_kernel_SKYLAKEX"),
        ("dispatch_changed", "dgemm_oncopy_SKYLAKEX"),
        ("vector_width_changed", "dgemm_kernel_SKYLAKEX"),
    ]
    [width] = [d for row in rows for d in row.diagnoses if d.claim == "vector_width_changed"]
    assert width.detail == {"from": 512, "to": 256}
    # two different objects (another build): no such pairing, each one-sided
    other = code(listing("dgemm_kernel_HASWELL", YMM, 800.0, "/lib/other.so"),
                 identities={"/lib/other.so": "build-id:cd"})  # fmt: skip
    assert ("dispatch_changed", "dgemm_kernel_SKYLAKEX") not in claims(explain(base, other))


# -- objects without symbols, and objects gone since they ran ---------------------------------


def test_unnamed_samples_and_vanished_objects_are_said_per_object(tmp_path: Path) -> None:
    from perflab.lenses.asm.code_notes import symbol_notes
    from perflab.lenses.asm.sources import CodeSample, ProfiledRegion

    present = tmp_path / "libfoo.so"
    present.write_bytes(b"")
    region = ProfiledRegion(
        samples=(
            CodeSample(str(present), "", None, 50.0),  # perf could not name it
            CodeSample(str(tmp_path / "gone.so"), "kernel", 0, 40.0),  # deleted since
            CodeSample(str(present), "f", 0, 10.0),
        ),
        objects=(str(present),),
    )
    messages = [note.message for note in symbol_notes(region)]
    assert any(m.startswith("no symbols for libfoo.so (50% of the samples)") for m in messages)
    assert any("gone.so was deleted or replaced" in m for m in messages)
    assert len(messages) == 2
    jit = ProfiledRegion((CodeSample("//anon", "", None, 30.0), *region.samples), ())
    assert any("without a file (JIT" in note.message for note in symbol_notes(jit))


def test_a_retargeted_call_whose_callees_never_ran_is_listed_apart() -> None:
    """CPython 3.11 -> 3.12's list_dealloc calls PyThreadState_Get@plt, then
    _PyThreadState_UncheckedGet@plt: the caller ran in both, a few samples landed on the
    baseline's call site, and perf sampled neither callee. The claim would be about code that
    did not run: listed apart, not claimed."""

    def caller(target: int, name: str, call_site_samples: float) -> FunctionListing:
        rel = (target - 0x1006).to_bytes(4, "little")
        return build_listing(
            FunctionCode(
                "list_dealloc",
                "list_dealloc",
                "/lib/libpython.so",
                0x1000,
                code=bytes.fromhex("90e8") + rel + bytes.fromhex("c3"),
            ),
            {target: name}.get,
            costs={0x1000: 61.0, 0x1001: call_site_samples},
        )

    base = code(caller(0x2000, "PyThreadState_Get@plt", 4.0))
    new = code(caller(0x3000, "_PyThreadState_UncheckedGet@plt", 0.0))
    rows = explain(base, new)
    assert claims(rows) == []
    [change] = [d for row in rows for d in row.not_run]
    assert (str(change.claim), change.function) == ("callee_changed", "list_dealloc")
    # once perf sampled the callee (its PLT stub here), the same change is claimed
    sampled = code(caller(0x2000, "PyThreadState_Get@plt", 4.0),
                   family_samples={"PyThreadState_Get@plt": 12.0})  # fmt: skip
    assert claims(explain(sampled, new)) == [("callee_changed", "list_dealloc")]


# -- one function spelled differently by two builds -------------------------------------------

SUM_A = "sumbench::sum_slice::hb17a8c125cb85c7d"
SUM_B = "sumbench::sum_slice::h6d32bd3152f0eb41"
NAMES_A = {0x2000: SUM_A}
NAMES_B = {0x2000: SUM_B}
CALL_SUM = bytes.fromhex("e8fb0f0000c3")  # call 0x2000; ret


def test_one_rust_function_under_two_hashes_is_one_row_with_its_width_change() -> None:
    """The issue's case: cargo gave the two builds different hashes; the function ran in both
    (SSE2 in the baseline, AVX2 in the variant). One row, no appeared/disappeared claim, the
    width change said, and the row says why the two spellings were taken for one."""
    base = code(
        listing(SUM_A, XMM, 300.0, obj="/a/sumbench"),
        listing("sumbench::main::h1111111111111111", CALL_SUM, 17.0, "/a/sumbench", names=NAMES_A),
        total=317.0,
        # what the baseline's symbol table was asked about the variant's name
        searched={SUM_B: ("/a/sumbench",)},
    )
    new = code(
        listing(SUM_B, YMM, 227.0, obj="/b/sumbench"),
        listing("sumbench::main::h2222222222222222", CALL_SUM, 10.0, "/b/sumbench", names=NAMES_B),
        total=237.0,
        family_samples={SUM_B: 227.0},
    )
    rows = explain(base, new)
    found = claims(rows)
    assert not [c for c in found if c[0] in ("appeared", "disappeared", "callee_changed")]
    [row] = [r for r in rows if r.name == SUM_A]
    assert row.baseline.ran and row.variant.ran
    assert ("vector_width_changed", "sumbench::sum_slice") in found  # as people read it
    assert "the only function named sumbench::sum_slice in each build" in row.paired_by
    assert len(rows) == 2  # sum_slice and main, one row each


def test_two_instantiations_of_one_generic_are_not_guessed_into_pairs() -> None:
    fold_1, fold_2, fold_3 = (f"core::iter::Iterator::fold::h{d * 16}" for d in "123")
    base = code(listing(fold_1, XMM, 400.0), listing(fold_2, XMM, 400.0))
    new = code(listing(fold_3, XMM, 400.0), listing(fold_2, XMM, 400.0))
    rows = explain(base, new)
    assert len(rows) == 3  # fold_2 paired with itself; 1 and 3 are not guessed at
    [row] = [r for r in rows if r.name == fold_1]
    assert not row.paired_by
    assert any("cannot be told by name" in note for note in row.notes)
