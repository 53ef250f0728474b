"""Same code, same work (perflab.analyse.same_work) on constructed comparisons: the note is given
when the deterministic lenses saw the same code and a setting differs, never when the code differs,
never from a lens that cannot tell, and the time lens's difference is placed outside the code."""

from __future__ import annotations

import json

from perflab.analyse.same_work import same_work_notes, setting_differences
from perflab.api import make_experiment
from perflab.lenses.asm.analyse import ARTIFACT_FUNCTIONS, AsmDetails, analyse_asm
from perflab.lenses.asm.machine_code import FunctionListing
from perflab.lenses.asm.same_code import asm_finding
from perflab.lenses.instructions.details import InstructionsDetails
from perflab.lenses.instructions.explain import FunctionDelta
from perflab.lenses.instructions.same_code import COUNT_TOLERANCE, instructions_finding
from perflab.records.accounting import Presence
from perflab.records.code_findings import Seen
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import (
    Artifact,
    Benchmark,
    BenchmarkData,
    Comparison,
    Experiment,
    Severity,
    Variant,
)
from perflab.records.run_facts import MachineInfo
from perflab.tool_output.callgrind import FunctionId
from tests.support.asm_listings import XMM, YMM, listing

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.analyse.same_work"

BENCH = "sum(range(200))"


def _experiment(*variants: str) -> Experiment:
    return make_experiment(stmt=BENCH, variants=list(variants))


def _function(name: str, base: float, other: float) -> FunctionDelta:
    presence = Presence.BOTH if base and other else Presence.BASELINE_ONLY
    if not base:
        presence = Presence.VARIANT_ONLY
    return FunctionDelta(
        function=FunctionId(name, "libpython3.11.so.1.0"),
        file="",
        baseline_self=base,
        variant_self=other,
        baseline_inclusive=base,
        variant_inclusive=other,
        presence=presence,
    )


# the residue of the worker's handshake, measured: functions at hundredths of an instruction
# per iteration, on one side only
RESIDUE = (_function("drop_gil", 0.0, -0.046), _function("_Py_read", 0.0, -0.026))
SAME_FUNCTIONS = (
    _function("PyLong_FromLong", 3048.0, 3048.0),
    _function("PyIter_Next", 2615.0, 2615.0),
    _function("_PyEval_EvalFrameDefault", 315.001, 315.001),
    *RESIDUE,
)


def _instructions(
    base: tuple[float, ...] = (16699.102, 16699.121),
    other: tuple[float, ...] = (16698.926, 16699.121),
    functions: tuple[FunctionDelta, ...] = SAME_FUNCTIONS,
    variant: str = "b",
    verdict: Verdict = Verdict.EQUIVALENT,
) -> Comparison:
    details = InstructionsDetails(
        baseline_per_iteration=base[0],
        variant_per_iteration=other[0],
        functions=functions,
        inlining=(),
        baseline_repeats=base,
        variant_repeats=other,
    )
    ratio = other[0] / base[0]
    return Comparison(
        benchmark=BENCH,
        metric=Metric.INSTRUCTIONS,
        baseline="a",
        variant=variant,
        ratio=ratio,
        ci_low=ratio,
        ci_high=ratio,
        verdict=verdict,
        baseline_value=base[0],
        variant_value=other[0],
        unit="instructions",
        details=details,
    )


def _time(verdict: Verdict, ratio: float, variant: str = "b") -> Comparison:
    return Comparison(
        benchmark=BENCH,
        metric=Metric.TIME,
        baseline="a",
        variant=variant,
        ratio=ratio,
        ci_low=ratio * 0.99,
        ci_high=ratio * 1.01,
        verdict=verdict,
        baseline_value=1000.0,
        variant_value=1000.0 * ratio,
        unit="ns",
    )


def _messages(experiment: Experiment, *comparisons: Comparison, avx512: bool = False) -> list[str]:
    notes = same_work_notes(experiment, comparisons, MachineInfo(avx512=avx512))
    assert all(n.severity is Severity.WARNING and n.benchmark == BENCH for n in notes)
    return [n.message for n in notes]


def test_an_unread_toggle_names_the_setting_and_says_the_code_was_the_same() -> None:
    [message] = _messages(_experiment("a env.INF=0", "b env.INF=1"), _instructions())
    assert message == (
        "`b` and `a` differ only in INF=1, but the variants executed the same code "
        "(instruction counts within 0.1%, the same 3 functions): is `INF` read by the benchmark?"
    )
    # numpy reads NPY_DISABLE_CPU_FEATURES=X86_V4, yet float32 np.add has no X86_V4 copy: the
    # hint does not only suggest a setting that went unread
    [note] = same_work_notes(
        _experiment("a env.INF=0", "b env.INF=1"), [_instructions()], MachineInfo()
    )
    assert note.hint is not None and "this code does not depend on it" in note.hint


def test_counts_that_differ_more_than_the_tolerance_are_different_code() -> None:
    moved = (16699.102 * (1 + 3 * COUNT_TOLERANCE),) * 2
    assert instructions_finding(_details(_instructions(other=moved))).seen is Seen.DIFFERENT
    assert _messages(_experiment("a", "b env.INF=1"), _instructions(other=moved)) == []


def test_a_function_run_on_one_side_only_is_different_code_even_at_equal_counts() -> None:
    functions = (*SAME_FUNCTIONS, _function("helper", 0.0, 40.0))
    comparison = _instructions(functions=functions)
    assert instructions_finding(_details(comparison)).seen is Seen.DIFFERENT
    assert _messages(_experiment("a", "b env.INF=1"), comparison) == []


def test_work_moved_between_functions_is_different_code() -> None:
    functions = (_function("f", 1000.0, 900.0), _function("g", 500.0, 600.0))
    assert instructions_finding(_details(_instructions(functions=functions))).seen is Seen.DIFFERENT


def test_counts_that_move_between_repeats_of_one_variant_cannot_tell() -> None:
    wobbly = (16699.0, 16699.0 * (1 + 5 * COUNT_TOLERANCE))
    assert instructions_finding(_details(_instructions(other=wobbly))).seen is Seen.CANNOT_TELL
    assert _messages(_experiment("a", "b env.INF=1"), _instructions(other=wobbly)) == []


def test_an_a_a_test_gets_no_same_code_note_since_nothing_differs() -> None:
    assert _messages(_experiment("a", "b"), _instructions()) == []


def test_only_the_time_lens_cannot_know() -> None:
    assert _messages(_experiment("a", "b env.INF=1"), _time(Verdict.FASTER, 0.95)) == []


def test_a_time_difference_with_the_same_instructions_is_not_in_the_code() -> None:
    messages = _messages(
        _experiment("a", "b"),
        _time(Verdict.FASTER, 0.95),
        _instructions(verdict=Verdict.EQUIVALENT),
    )
    assert messages == [
        "`b` measured 5.0% faster than `a`, but the time difference is not in the executed "
        "code: the instruction counts are the same within 0.1% (the same 3 functions); look "
        "at memory layout, caches, frequency or noise"
    ]


def test_with_a_setting_both_notes_are_given() -> None:
    messages = _messages(
        _experiment("a", "b env.INF=1"), _time(Verdict.SLOWER, 1.03), _instructions()
    )
    assert len(messages) == 2
    assert "executed the same code" in messages[0]
    assert "3.0% slower" in messages[1] and "not in the executed code" in messages[1]


def test_an_equivalent_time_says_nothing_about_time() -> None:
    messages = _messages(
        _experiment("a", "b env.INF=1"), _time(Verdict.EQUIVALENT, 1.0), _instructions()
    )
    assert len(messages) == 1 and "executed the same code" in messages[0]


def test_different_instructions_and_a_time_difference_say_nothing() -> None:
    functions = (*SAME_FUNCTIONS, _function("helper", 0.0, 40.0))
    assert (
        _messages(
            _experiment("a", "b env.INF=1"),
            _time(Verdict.SLOWER, 1.03),
            _instructions(functions=functions),
        )
        == []
    )


def test_an_invalid_pair_gets_no_note() -> None:
    invalid = _instructions(verdict=Verdict.INVALID)
    assert _messages(_experiment("a", "b env.INF=1"), invalid) == []


def test_on_an_avx512_machine_counts_cannot_clear_a_time_difference() -> None:
    """Valgrind runs the AVX2 path whatever ATEN_CPU_CAPABILITY says: the time lens's
    difference may well be in code valgrind cannot run, so no "same code" claim; the time note
    says what valgrind hides."""
    experiment = _experiment("a", "b env.ATEN_CPU_CAPABILITY=avx2")
    [message] = _messages(experiment, _time(Verdict.SLOWER, 1.1), _instructions(), avx512=True)
    assert "not in the executed code" in message and "AVX-512" in message
    [quiet] = _messages(experiment, _time(Verdict.EQUIVALENT, 1.0), _instructions(), avx512=True)
    assert "executed the same code" in quiet and "AVX-512" in quiet


def test_each_variant_is_judged_against_its_baseline() -> None:
    experiment = _experiment("a", "b env.INF=1", "c env.N=2")
    functions = (*SAME_FUNCTIONS, _function("helper", 0.0, 40.0))
    messages = _messages(
        experiment, _instructions(), _instructions(variant="c", functions=functions)
    )
    assert len(messages) == 1 and messages[0].startswith("`b` and `a`")


def test_settings_are_named_as_the_variant_sets_them() -> None:
    base = Variant(name="a", env={"KEEP": "1", "DROP": "1"}, python="/envs/a/bin/python")
    other = Variant(name="b", env={"KEEP": "1", "NEW": "x"}, python="/envs/b/bin/python")
    shown = [s.shown for s in setting_differences(base, other)]
    assert shown == ["DROP unset", "NEW=x", "python=/envs/b/bin/python"]
    commit = Variant(name="c", git="0123456789abcdef0123456789abcdef01234567")
    [step] = setting_differences(Variant(name="p", git="main"), commit)
    assert step.shown == "git=0123456789"
    assert step.question == "does the change touch the code the benchmark runs?"


def _details(comparison: Comparison) -> InstructionsDetails:
    assert isinstance(comparison.details, InstructionsDetails)
    return comparison.details


# -- the asm lens's evidence -------------------------------------------------------------------


def _asm(
    base: list[FunctionListing], other: list[FunctionListing], identities: tuple[str, str]
) -> Comparison:
    def artifact(variant: str, listings: list[FunctionListing], identity: str) -> Artifact:
        payload = {
            "functions": [item.to_json() for item in listings],
            "total_cost": 1000.0,
            "identities": {"/lib/libk.so": identity},
        }
        return Artifact(BENCH, variant, Metric.ASM, ARTIFACT_FUNCTIONS, json.dumps(payload))

    data = BenchmarkData(
        samples=(),
        artifacts=(artifact("a", base, identities[0]), artifact("b", other, identities[1])),
    )
    settings = _experiment("a", "b").settings
    [comparison] = analyse_asm(
        Benchmark(name=BENCH, stmt=BENCH), ["a", "b"], data, settings
    ).comparisons
    return comparison


def test_the_same_hot_functions_of_a_byte_identical_object_are_the_same_code() -> None:
    hot = [listing("kernel", samples=600.0), listing("helper", XMM, samples=300.0)]
    comparison = _asm(hot, hot, ("build-id-1", "build-id-1"))
    [message] = _messages(_experiment("a", "b env.INF=1"), comparison)
    assert "the same 2 hot functions with byte-identical code" in message
    assert comparison.to_json()["byte_identical_functions"] == ["kernel", "helper"]


def test_alike_code_of_another_build_is_not_claimed() -> None:
    hot = [listing("kernel", samples=600.0)]
    comparison = _asm(hot, hot, ("build-id-1", "build-id-2"))
    assert asm_finding(_asm_details(comparison)).seen is Seen.CANNOT_TELL
    assert _messages(_experiment("a", "b env.INF=1"), comparison) == []


def test_changed_hot_code_is_different() -> None:
    comparison = _asm(
        [listing("kernel", YMM, samples=600.0)],
        [listing("kernel", XMM, samples=600.0)],
        ("build-id-1", "build-id-1"),
    )
    assert asm_finding(_asm_details(comparison)).seen is Seen.DIFFERENT
    # and the asm lens's "different" outweighs the instructions lens's "same"
    assert _messages(_experiment("a", "b env.INF=1"), comparison, _instructions()) == []


def _asm_details(comparison: Comparison) -> AsmDetails:
    assert isinstance(comparison.details, AsmDetails)
    return comparison.details
