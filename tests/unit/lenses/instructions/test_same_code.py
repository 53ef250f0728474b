"""The instructions lens's word on whether two variants ran the same code
(lenses/instructions/same_code.py): the counts within 0.1% between repeats and variants, no
function above the handshake's residue in one variant only or moved beyond its tolerance."""

from __future__ import annotations

from dataclasses import replace

import pytest

from perflab.lenses.instructions.details import InstructionsDetails
from perflab.lenses.instructions.explain import FunctionDelta
from perflab.lenses.instructions.same_code import instructions_finding, same_code
from perflab.records.accounting import Presence
from perflab.records.code_findings import Seen
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Comparison
from perflab.tool_output.callgrind import FunctionId


def delta(
    name: str, before: float, after: float, presence: Presence = Presence.BOTH
) -> FunctionDelta:
    return FunctionDelta(
        function=FunctionId(name, "prog"),
        file="",
        baseline_self=before,
        variant_self=after,
        baseline_inclusive=before,
        variant_inclusive=after,
        presence=presence,
    )


SAME = InstructionsDetails(
    100_000.0,
    100_001.0,
    (delta("work", 90_000.0, 90_001.0), delta("drop_gil", 1.0, 1.5, Presence.VARIANT_ONLY)),
    (),
    baseline_repeats=(100_000.0, 100_002.0),
    variant_repeats=(100_001.0, 100_003.0),
)


def test_the_same_counts_and_functions_are_the_same_code() -> None:
    found = instructions_finding(SAME)
    assert found.seen is Seen.SAME and found.metric == Metric.INSTRUCTIONS
    assert found.evidence == "instruction counts within 0.1%, the same 1 functions"
    assert found.avx512_hidden and "--cache-sim" in found.look_further


@pytest.mark.parametrize(
    ("details", "seen", "reason"),
    [
        (replace(SAME, baseline_repeats=()), Seen.CANNOT_TELL, "no repeats stored"),
        (
            replace(SAME, variant_repeats=(100_000.0, 101_000.0)),
            Seen.CANNOT_TELL,
            "between repeats",
        ),
        (replace(SAME, variant_repeats=(101_000.0,)), Seen.DIFFERENT, "counts differ by"),
        (
            replace(SAME, functions=(delta("avx2_path", 0.0, 500.0, Presence.VARIANT_ONLY),)),
            Seen.DIFFERENT,
            "avx2_path ran in one variant only",
        ),
        (replace(SAME, functions=(delta("work", 90_000.0, 90_100.0),)), Seen.DIFFERENT, "work: "),
        (
            replace(SAME, functions=(delta("drop_gil", 1.0, 1.0),)),
            Seen.CANNOT_TELL,
            "no function above residue",
        ),
    ],
    ids=["no-repeats", "repeats-moved", "counts-differ", "one-side-only", "moved", "residue-only"],
)
def test_what_says_the_code_differs_or_cannot_be_told(
    details: InstructionsDetails, seen: Seen, reason: str
) -> None:
    found = instructions_finding(details)
    assert found.seen is seen and reason in found.reason


def test_only_the_whole_count_comparison_gives_a_finding() -> None:
    whole = Comparison(
        "b", Metric.INSTRUCTIONS, "A", "B", 1.0, 1.0, 1.0, Verdict.EQUIVALENT,
        100_000.0, 100_001.0, "instructions", details=SAME,
    )  # fmt: skip
    finding = same_code(whole)
    assert finding is not None and finding.seen is Seen.SAME
    assert same_code(replace(whole, event="D1_misses")) is None
    assert same_code(replace(whole, details=None)) is None
