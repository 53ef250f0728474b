"""A cause as the summary's paragraph says it."""

from __future__ import annotations

from perflab.records.explanation import Cause


def _cause(delta: float, unit: str) -> Cause:
    return Cause(
        function="f", object="prog", delta_per_iteration=delta, share=0.5, unit=unit, evidence=()
    )


def test_a_cause_in_words_is_signed_and_nanoseconds_say_so() -> None:
    assert _cause(1234.4, "ns").words() == "+1,234 ns f"
    assert _cause(-7.0, "instructions").words() == "-7 f"


def test_a_replacement_names_both_functions_and_their_net_change() -> None:
    cause = Cause(
        function="old",
        object="prog",
        delta_per_iteration=-30.0,
        share=1.0,
        unit="instructions",
        evidence=(),
        replaced_by="new",
        baseline_per_iteration=100.0,
        variant_per_iteration=70.0,
    )
    assert cause.named() == "old → new"
    assert cause.words() == "old (100) → new (70), -30"
    assert cause.to_json()["replaced_by"] == "new"
