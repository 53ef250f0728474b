"""The functions that account for a pair's difference (`perflab.analyse.causes`): the largest
changes moving with the difference until they account for most of it, every lens's claims
beside each, and a function one build ran in place of another joined into one cause."""

from __future__ import annotations

from perflab.analyse.causes import ACCOUNTED_TARGET, MAX_CAUSES, Found, from_account
from perflab.analyse.pair_claims import dispatched_pairs
from perflab.records.accounting import Accounting, FunctionPart, Presence
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison

SUBJECT = "perflab.analyse.causes"


def part(
    name: str, before: float, after: float, presence: Presence = Presence.BOTH
) -> FunctionPart:
    return FunctionPart(
        name=name,
        obj="prog",
        before=before,
        after=after,
        presence=presence,
        evidence=f"callgrind: {name} {before} → {after}",
        delta=after - before,
    )


def account(before: float, after: float, *parts: FunctionPart, settled: bool = False) -> Accounting:
    return Accounting(
        source="instructions",
        unit="instructions",
        amount="self instructions",
        tool="callgrind",
        before=before,
        after=after,
        what="fewer instructions",
        parts=parts,
        settled=settled,
    )


def test_identical_code_has_no_causes() -> None:
    settled = account(1000, 1000, settled=True)
    assert from_account(settled, {}, {}) == Found(
        "instructions", "instructions", 0, (), "fewer instructions"
    )  # fmt: skip
    # nothing moved, though the lens listed its functions: no difference, nothing to share
    still = account(1000, 1000, part("f", 500, 500), part("g", 10, 10))
    assert from_account(still, {}, {}).causes == ()


def test_the_largest_changes_with_the_difference_until_the_target_share() -> None:
    acc = account(
        1000, 700,
        part("a", 200, 50),  # -150
        part("b", 100, 20),  # -80
        part("c", 60, 10),  # -50, 280 of 300 once it is named
        part("d", 30, 0),  # -30: named only while the target is not reached
        part("e", 0, 10),  # against the difference: never a cause
    )  # fmt: skip
    found = from_account(acc, {}, {})
    causes = found.causes
    assert (found.source, found.unit, found.difference) == ("instructions", "instructions", -300)
    assert [c.function for c in causes] == ["a", "b", "c"]
    assert sum(c.share for c in causes) >= ACCOUNTED_TARGET
    assert causes[0].share == 0.5 and causes[0].delta_per_iteration == -150
    assert causes[0].evidence == ("callgrind: a 200 → 50",)
    assert "e" not in [c.function for c in causes]


def test_each_cause_carries_every_lens_claim_about_its_function_clones_folded() -> None:
    acc = account(100, 50, part("hot.constprop.0", 80, 30))
    claims = {"hot": ["asm: code_changed hot (objdump: 3 lines)"]}
    [cause] = from_account(acc, claims, {}).causes
    assert cause.function == "hot.constprop.0"
    assert cause.evidence == (
        "callgrind: hot.constprop.0 80 → 30",
        "asm: code_changed hot (objdump: 3 lines)",
    )
    assert not cause.replaced_by and cause.named() == "hot.constprop.0"
    assert "replaced_by" not in cause.to_json()


def test_a_dispatch_change_joins_the_gone_and_the_new_function_into_one_cause() -> None:
    # the CPU ran the AVX2 copy in place of the SSE2 one: one cause of their net change
    asm = Comparison(
        benchmark="b",
        metric=Metric.ASM,
        baseline="a",
        variant="b",
        ratio=0.8,
        ci_low=0.8,
        ci_high=0.8,
        verdict=Verdict.FASTER,
        baseline_value=1,
        variant_value=1,
        unit="x",
        details=_Raw(
            {
                "diagnoses": [
                    {
                        "claim": "dispatch_changed",
                        "function": "memcpy_sse2",
                        "evidence": ["perf: 40 of 100 samples"],
                        "detail": {"from": "memcpy_sse2", "to": "memcpy_avx2"},
                    }
                ]
            }
        ),
    )
    acc = account(
        1000, 800,
        part("memcpy_sse2", 300, 0, Presence.BASELINE_ONLY),
        part("memcpy_avx2", 0, 120, Presence.VARIANT_ONLY),
        part("loop", 400, 380),
    )  # fmt: skip
    causes = from_account(acc, {}, dispatched_pairs([asm])).causes
    # the pair's net -180 is 90% of the -200: the loop's -20 is not named
    assert [c.named() for c in causes] == ["memcpy_sse2 → memcpy_avx2"]
    joined = causes[0]
    assert joined.delta_per_iteration == -180 and joined.share == 0.9
    assert (joined.baseline_per_iteration, joined.variant_per_iteration) == (300, 120)
    assert joined.evidence[1] == "asm: dispatch_changed (perf: 40 of 100 samples)"
    assert "baseline only" in joined.evidence[0] and "variant only" in joined.evidence[0]
    assert joined.words() == "memcpy_sse2 (300) → memcpy_avx2 (120), -180"
    body = joined.to_json()
    assert body["replaced_by"] == "memcpy_avx2" and body["variant_per_iteration"] == 120


def test_a_renamed_rust_function_pairs_across_its_build_hashes() -> None:
    # the claim names the functions as one build spelled them; the rows as the other did
    dispatched = {"mycrate::old": ("mycrate::new", "asm: callee_changed (objdump: call)")}
    acc = account(
        500, 400,
        part("mycrate::old::h0123456789abcdef", 200, 0, Presence.BASELINE_ONLY),
        part("mycrate::new::hfedcba9876543210", 0, 100, Presence.VARIANT_ONLY),
    )  # fmt: skip
    [cause] = from_account(acc, {}, dispatched).causes
    assert cause.function == "mycrate::old" and cause.replaced_by == "mycrate::new"
    assert cause.delta_per_iteration == -100 and cause.share == 1.0


def test_functions_that_came_and_went_are_never_paired_by_size_alone() -> None:
    # one went, another came, nothing claims one ran in place of the other: two rows, and the
    # one against the difference is no cause
    acc = account(
        1000, 900,
        part("PyFunction_NewWithQualName", 106, 0, Presence.BASELINE_ONLY),
        part("_Py_IsImmortal", 0, 40, Presence.VARIANT_ONLY),
        part("eval", 500, 466),
    )  # fmt: skip
    causes = from_account(acc, {}, {}).causes
    assert [c.function for c in causes] == ["PyFunction_NewWithQualName"]
    assert not causes[0].replaced_by


class _Raw:
    def __init__(self, data: dict[str, object]) -> None:
        self.data = data

    def to_json(self) -> dict[str, object]:
        return self.data


def test_at_most_max_causes_are_named_however_little_they_account_for() -> None:
    # twenty functions of 5% each: the target would need sixteen
    parts = [part(f"f{i:02}", 10, 5) for i in range(20)]
    causes = from_account(account(200, 100, *parts), {}, {}).causes
    assert len(causes) == MAX_CAUSES
    assert sum(c.share for c in causes) < ACCOUNTED_TARGET
