"""The lenses' claims about one pair's functions (`perflab.analyse.pair_claims`): which
comparisons make claims, the pairs a lens saw run one function in place of another, and the
claims by function, names folded so one function reads as one across builds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from perflab.analyse.pair_claims import (
    call_identity,
    claims_by_function,
    cpu_claiming,
    diagnoses_of,
    dispatched_pairs,
    first_counted,
    first_wall_time,
    function_identity,
)
from perflab.records.diagnosis import Claim
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison

SUBJECT = "perflab.analyse.pair_claims"


@dataclass(frozen=True)
class Raw:
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def comparison(
    metric: Metric, diagnoses: list[dict[str, Any]] | None = None, *, event: str | None = None
) -> Comparison:
    details = Raw({"diagnoses": diagnoses}) if diagnoses is not None else None
    return Comparison(
        benchmark="b",
        metric=metric,
        baseline="a",
        variant="b",
        ratio=0.9,
        ci_low=0.88,
        ci_high=0.92,
        verdict=Verdict.FASTER,
        baseline_value=10.0,
        variant_value=9.0,
        unit="x",
        event=event,
        details=details,
    )


def dispatch(old: str, new: str, evidence: str = "") -> dict[str, Any]:
    return {
        "claim": "dispatch_changed",
        "function": old,
        "evidence": [evidence] if evidence else [],
        "detail": {"from": old, "to": new},
    }


def test_a_function_is_one_identity_across_clones_and_rust_hashes() -> None:
    assert function_identity("hot.constprop.0") == "hot"
    assert function_identity("f.isra.0.cold") == "f"
    # the hash differs between two builds of the same Rust function: one identity
    assert function_identity("mycrate::hot::h0123456789abcdef") == function_identity(
        "mycrate::hot::hfedcba9876543210"
    )


def test_no_details_no_diagnoses() -> None:
    assert diagnoses_of(None) == ()
    assert diagnoses_of(comparison(Metric.ASM)) == ()
    [d] = diagnoses_of(comparison(Metric.ASM, [dispatch("memcpy_sse2", "memcpy_avx2")]))
    assert d.claim is Claim.DISPATCH_CHANGED and d.replacement is not None
    assert (d.replacement.old, d.replacement.new) == ("memcpy_sse2", "memcpy_avx2")


def test_a_dispatch_change_pairs_the_gone_function_with_the_new_one_named_by_identity() -> None:
    asm = comparison(
        Metric.ASM,
        [dispatch("memcpy_sse2.constprop.0", "memcpy_avx2", "perf: 40 of 100 samples")],
    )
    pairs = dispatched_pairs([asm])
    assert pairs == {
        "memcpy_sse2": (
            "memcpy_avx2",
            "asm: dispatch_changed (perf: 40 of 100 samples)",
        )
    }


def test_the_first_lens_to_claim_a_replacement_wins_and_non_claiming_lenses_are_ignored() -> None:
    # time makes no claims about functions: a diagnosis in its details is not read
    time = comparison(Metric.TIME, [dispatch("f", "from_time")])
    instructions = comparison(Metric.INSTRUCTIONS, [dispatch("f", "g", "callgrind: call graph")])
    asm = comparison(Metric.ASM, [dispatch("f", "h")])
    # a per-event comparison repeats its lens's claims: read once, from the event-less one
    counted = comparison(Metric.INSTRUCTIONS, [dispatch("k", "l")], event="cycles")
    pairs = dispatched_pairs([time, instructions, asm, counted])
    assert pairs == {"f": ("g", "instructions: dispatch_changed (callgrind: call graph)")}


def test_a_claim_that_names_no_replacement_pairs_nothing() -> None:
    asm = comparison(
        Metric.ASM,
        [
            {"claim": "dispatch_changed", "function": "f", "evidence": [], "detail": {"from": "f"}},
            {
                "claim": "inlined",
                "function": "g",
                "evidence": [],
                "detail": {"from": "a", "to": "b"},
            },
        ],
    )
    assert dispatched_pairs([asm]) == {}


def test_claims_are_gathered_by_function_from_every_claiming_lens() -> None:
    asm = comparison(
        Metric.ASM,
        [
            {"claim": "code_changed", "function": "hot.constprop.0", "evidence": ["objdump: 3"]},
            {"claim": "appeared", "function": "new_fn", "evidence": []},
        ],
    )
    profile = comparison(
        Metric.PROFILE, [{"claim": "disappeared", "function": "hot", "evidence": ["perf: 9"]}]
    )
    assert claims_by_function([asm, profile, comparison(Metric.TIME)]) == {
        "hot": ["asm: code_changed hot (objdump: 3)", "profile: disappeared hot (perf: 9)"],
        "new_fn": ["asm: appeared new_fn"],
    }


def test_identical_code_has_nothing_to_claim() -> None:
    quiet = [comparison(Metric.ASM, []), comparison(Metric.INSTRUCTIONS, [])]
    assert claims_by_function(quiet) == {} and dispatched_pairs(quiet) == {}


def test_the_wall_time_and_the_counted_comparison_are_found_by_their_descriptors() -> None:
    time = comparison(Metric.TIME)
    instructions = comparison(Metric.INSTRUCTIONS)
    per_event = comparison(Metric.TIME, event="cycles")
    assert first_wall_time([per_event, instructions, time]) is time
    assert first_counted([per_event, time, instructions]) is instructions
    assert first_wall_time([instructions]) is None and first_counted([time]) is None


def test_the_lenses_claiming_what_the_cpu_ran_machine_code_first_on_request() -> None:
    # instructions counts under a tool running other code than the CPU: never among them
    assert set(cpu_claiming()) == {Metric.PROFILE, Metric.ASM}
    assert Metric.INSTRUCTIONS not in cpu_claiming()
    assert cpu_claiming(code_first=True)[0] is Metric.ASM


def test_a_call_identity_leaves_out_what_perf_does_not_spell() -> None:
    # callgrind and objdump write a C++ function's return type and parameters, perf does not
    loop = (
        "c10::function_ref<void (char**, long)>::callback_fn<at::native::(anonymous namespace)::f>"
    )
    assert call_identity(f"void {loop}(long, char**, long)") == loop == call_identity(loop)
    assert call_identity("unsigned long partition_unrolled<avx2_vector<float>, 8>(float*)") == (
        "partition_unrolled<avx2_vector<float>, 8>"
    )
    assert call_identity("X::operator()() const") == "X::operator()"
    assert call_identity("kernel") == "kernel"
    assert call_identity("foo() [clone .isra.0]") == "foo"
