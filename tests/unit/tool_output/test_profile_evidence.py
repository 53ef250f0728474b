"""What the sampled call stacks say of a function one profile has and the other lacks
(tool_output/profile_evidence.py): a frame only between a caller and a callee the other side
calls directly is no new work; kernels under one call site are one dispatch change."""

from __future__ import annotations

from collections import Counter

from perflab.lenses.profile.analyse import ProfileDetails
from perflab.tool_output.profile_diff import diff_profiles
from perflab.tool_output.profile_evidence import with_stack_evidence
from perflab.tool_output.profile_stacks import Stack, hot_symbols


def _stacks(rows: dict[tuple[str, ...], int]) -> Counter[Stack]:
    """Stacks given root first, stored leaf first as perf_script does."""
    return Counter({tuple(("lib", f) for f in reversed(frames)): n for frames, n in rows.items()})


def test_an_outer_frame_inlined_on_one_side_is_no_new_work() -> None:

    # 3.11 inlines pymain_run_python into Py_RunMain; 3.12 calls it: on every 3.12 stack
    base = _stacks({("main", "Py_RunMain", "run_file", "eval"): 600})
    new = _stacks(
        {("main", "Py_RunMain", "pymain_run_python.constprop.0", "run_file", "eval"): 600}
    )
    diff = diff_profiles(hot_symbols(base), hot_symbols(new))
    assert diff.appeared == ("pymain_run_python.constprop.0",)
    checked = with_stack_evidence(diff, base, new)
    assert checked.appeared == () and checked.claims == ()
    [frame] = checked.pass_through
    assert (frame.caller, frame.callee) == ("Py_RunMain", "run_file")
    # the stacks do not say why the other side calls the callee directly: a hook only one side
    # installs (torch.compile's frame evaluator) looks the same, so inlining is not asserted
    assert "inlined into its caller there, or not called" in frame.message()
    # a function that does work of its own (a leaf) is new work: still claimed
    new_work = _stacks({("main", "Py_RunMain", "run_file", "eval", "helper"): 600})
    diff = diff_profiles(hot_symbols(base), hot_symbols(new_work))
    assert with_stack_evidence(diff, base, new_work).appeared == ("helper",)


def test_kernels_from_one_call_site_are_one_dispatch_change() -> None:
    base = _stacks({
        ("main", "dgemm_nn", "dgemm_kernel_SKYLAKEX"): 800,
        ("main", "dgemm_nn", "dgemm_oncopy_SKYLAKEX"): 100,
        ("main", "dgemm_nn"): 100,
    })  # fmt: skip
    new = _stacks({
        ("main", "dgemm_nn", "dgemm_kernel_HASWELL"): 850,
        ("main", "dgemm_nn", "dgemm_oncopy_HASWELL"): 100,
        ("main", "dgemm_nn"): 50,
    })  # fmt: skip
    diff = diff_profiles(hot_symbols(base), hot_symbols(new))
    assert len(diff.claims) == 4
    checked = with_stack_evidence(diff, base, new)
    assert checked.claims == ()
    pairs = {(c.old, c.new, c.caller) for c in checked.dispatches}
    # the caller pairs them; the names only break the tie between the two pairs
    assert pairs == {
        ("dgemm_kernel_SKYLAKEX", "dgemm_kernel_HASWELL", "dgemm_nn"),
        ("dgemm_oncopy_SKYLAKEX", "dgemm_oncopy_HASWELL", "dgemm_nn"),
    }
    details = ProfileDetails(checked, "cpu-clock", "dwarf", 1000, 1000)
    claims = [(str(d.claim), d.detail.get("from")) for d in details.diagnoses()]
    assert ("dispatch_changed", "dgemm_kernel_SKYLAKEX") in claims
    assert all(c == "dispatch_changed" for c, _ in claims)


def test_a_kernel_perf_could_not_unwind_past_pairs_by_object_and_name() -> None:

    # dgemm_kernel_HASWELL realigns its stack: perf's stacks end at it (no caller)
    base = _stacks({("main", "dgemm_nn", "dgemm_kernel_SKYLAKEX"): 900, ("main", "dgemm_nn"): 100})
    new = _stacks({("dgemm_kernel_HASWELL",): 900, ("main", "dgemm_nn"): 100})
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    [change] = checked.dispatches
    assert (change.old, change.new, change.caller, change.unwound) == (
        "dgemm_kernel_SKYLAKEX", "dgemm_kernel_HASWELL", "dgemm_nn", "variant",
    )  # fmt: skip
    assert "could not unwind" in change.evidence()[1]
    # names that differ in more than one word make no pair
    other = _stacks({("some_other_kernel",): 900, ("main", "dgemm_nn"): 100})
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(other)), base, other)
    assert checked.dispatches == ()


def test_a_dispatch_claim_names_the_kernel_and_never_pairs_under_an_unnamed_frame() -> None:

    base = _stacks({("main", "run", "sum_ints_avx2"): 900, ("main", "run"): 100})
    new = _stacks({("main", "run", "sum_ints_sse2"): 900, ("main", "run"): 100})
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    details = ProfileDetails(checked, "cpu-clock", "dwarf", 1000, 1000)
    [claim] = details.diagnoses()
    assert (str(claim.claim), claim.function, claim.detail["caller"]) == (
        "dispatch_changed", "sum_ints_avx2", "run",
    )  # fmt: skip
    # perf could not name the caller on either side: `[unknown]` is no call site
    base = _stacks({("main", "[unknown]", "f_one"): 900, ("main",): 100})
    new = _stacks({("main", "[unknown]", "g_two"): 900, ("main",): 100})
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    assert checked.dispatches == ()


def test_a_kernel_is_not_paired_with_another_role_when_its_partner_could_not_be_unwound() -> None:

    # the HASWELL kernel's stacks end at it; its packing routine is called from dgemm_nn: the
    # SKYLAKEX kernel pairs with the HASWELL kernel (one word apart), not with the packing routine
    base = _stacks({("main", "dgemm_nn", "dgemm_kernel_SKYLAKEX"): 900, ("main", "dgemm_nn"): 100})
    new = _stacks({
        ("dgemm_kernel_HASWELL",): 800,
        ("main", "dgemm_nn", "dgemm_itcopy_HASWELL"): 100,
        ("main", "dgemm_nn"): 100,
    })  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    assert [(c.old, c.new) for c in checked.dispatches] == [
        ("dgemm_kernel_SKYLAKEX", "dgemm_kernel_HASWELL")
    ]


def test_another_callee_in_another_build_is_a_callee_change_not_a_dispatch() -> None:

    # renamed_base calls compute_v1, renamed_change compute_v2: two programs, one call site
    base = Counter({(("renamed_base", "compute_v1"), ("renamed_base", "driver")): 900})
    new = Counter({(("renamed_change", "compute_v2"), ("renamed_change", "driver")): 900})
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    [claim] = ProfileDetails(checked, "cpu-clock", "dwarf", 900, 900).diagnoses()
    assert (str(claim.claim), claim.function) == ("callee_changed", "driver")


def _objects(rows: dict[tuple[tuple[str, str], ...], int]) -> Counter[Stack]:
    """Stacks of (object, function) given root first, stored leaf first."""
    return Counter({tuple(reversed(frames)): n for frames, n in rows.items()})


def test_a_kernel_under_one_sided_frames_pairs_with_what_it_replaced_under_their_caller() -> None:
    # torch.relu vs torch.compile(torch.relu) (field trial 34): ATen's loop and inductor's kernel
    # are both reached from cfunction_call, the kernel through kernel_py (the variant's only)
    py = ("libpython", "_PyEval_EvalFrameDefault")
    call = ("libpython", "cfunction_call")
    aten = ("libtorch_cpu.so", "callback_fn<clamp_min_scalar_kernel_impl>")
    base = _objects({
        (py, call, ("libtorch_cpu.so", "serial_for_each"), aten): 229,
        (py, call, ("libtorch_cpu.so", "serial_for_each")): 2,
        (py,): 50,
    })  # fmt: skip
    kernel = ("main.so", "kernel")
    new = _objects({
        (py, call, ("main.so", "kernel_py"), kernel): 354,
        (py, call, ("main.so", "kernel_py")): 4,
        (py, ("libpython", "_PyType_Lookup")): 51,
        (py,): 667,
    })  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    [change] = checked.dispatches
    assert (change.old, change.new, change.caller) == (aten[1], "kernel", "cfunction_call")
    assert "under cfunction_call (the nearest caller on both sides) on 354" in change.evidence()[1]
    # the interpreter's own new work under another caller is no part of the pair
    assert "_PyType_Lookup" in checked.appeared
    [claim] = [
        d
        for d in ProfileDetails(checked, "cpu-clock", "dwarf", 299, 1076).diagnoses()
        if d.replacement is not None
    ]
    assert (str(claim.claim), claim.function) == ("callee_changed", "cfunction_call")


def test_one_sided_kernels_under_different_nearest_callers_are_not_paired() -> None:
    main, parse = ("app", "main"), ("app", "parse")
    base = _objects({(main, parse, ("libtok", "tokenize")): 500, (main,): 500})
    new = _objects({
        (main, ("app", "render"), ("liblayout", "layout")): 500, (main, parse): 10, (main,): 490
    })  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    assert checked.dispatches == ()
    assert "tokenize" in checked.disappeared and "layout" in checked.appeared


def test_several_kernels_under_one_far_caller_pair_only_by_one_template_or_word() -> None:
    # np.sort without AVX-512: QSort_X86_V4 -> QSort_X86_V3 at quicksort_float, and under each
    # the zmm sorting network and partition replaced by the avx2 ones
    def side(isa: str, width: str) -> Counter[Stack]:
        entry = ("umath", f"QSort_{isa}")
        return _objects({
            (("umath", "quicksort_float"), entry, ("umath", f"sort_n_vec<{width}>")): 450,
            (("umath", "quicksort_float"), entry, ("umath", f"partition_unrolled<{width}>")): 440,
            (("umath", "quicksort_float"), entry): 30,
            (("umath", "quicksort_float"),): 80,
        })  # fmt: skip

    base, new = side("X86_V4", "zmm_vector"), side("X86_V3", "avx2_vector")
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    assert {(c.old, c.new) for c in checked.dispatches} == {
        ("QSort_X86_V4", "QSort_X86_V3"),
        ("sort_n_vec<zmm_vector>", "sort_n_vec<avx2_vector>"),
        ("partition_unrolled<zmm_vector>", "partition_unrolled<avx2_vector>"),
    }
    # two unrelated kernels each under one far caller, beside another: no pair by size
    main = ("app", "main")
    base = _objects({
        (main, ("app", "load"), ("libz", "inflate")): 400,
        (main, ("app", "load"), ("libz", "crc32")): 300,
        (main,): 300,
    })  # fmt: skip
    new = _objects({
        (main, ("app", "draw"), ("libgl", "rasterise")): 400,
        (main, ("app", "draw"), ("libgl", "blend")): 300,
        (main,): 300,
    })  # fmt: skip
    checked = with_stack_evidence(diff_profiles(hot_symbols(base), hot_symbols(new)), base, new)
    assert checked.dispatches == ()
