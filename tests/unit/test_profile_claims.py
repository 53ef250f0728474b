"""The profile lens claims `appeared`/`disappeared` only from enough samples, says how many
more would settle a claim it does not make, and gives a verdict on its ratio only beyond what
separate processes of the same code differ by."""

from __future__ import annotations

from collections import Counter

import pytest

from perflab.lenses.profile.measure import ProfileDetails, one_process_verdict
from perflab.lenses.profile.perf_script import (
    Stack,
    diff_profiles,
    hot_symbols,
    samples_to_settle,
)
from perflab.model import Metric, Verdict
from perflab.stats.comparison import comparison_from


def profile(counts: dict[str, int]) -> Counter[Stack]:
    """Stacks `main -> name` (leaf first), `count` samples each."""
    return Counter({(("prog", name), ("prog", "main")): n for name, n in counts.items()})


def test_five_of_seven_samples_make_no_claim_and_a_note_says_how_many_more() -> None:
    before = hot_symbols(profile({"at_add": 5, "loop": 2}))
    after = hot_symbols(profile({"loop": 7}))
    diff = diff_profiles(before, after)
    assert diff.disappeared == () and diff.claims == ()
    (entry,) = diff.unsettled
    assert (entry.name, entry.appeared, entry.samples, entry.total) == ("at_add", False, 5, 7)
    # 20 samples of at_add at a 5/7 share need 28 baseline samples: 21 more
    assert entry.more_samples == 21
    assert "about 21 more samples would settle it" in entry.unsettled_message()


def test_a_well_sampled_function_that_disappeared_is_claimed_with_its_evidence() -> None:
    before = hot_symbols(profile({"at_add": 300, "loop": 700}))
    after = hot_symbols(profile({"loop": 900}))
    diff = diff_profiles(before, after)
    assert diff.disappeared == ("at_add",) and not diff.unsettled
    details = ProfileDetails(diff, "cpu-clock", "fp", 1000, 900)
    (diagnosis,) = details.to_json()["diagnoses"]
    assert diagnosis["claim"] == "disappeared" and diagnosis["function"] == "at_add"
    assert diagnosis["samples"] == 300
    assert diagnosis["evidence"] == [
        "perf: at_add on 300 of 1000 sampled stacks (baseline)",
        "perf: at_add on none of 900 sampled stacks (variant)",
    ]


def test_the_other_side_needs_enough_samples_for_an_absence_to_mean_something() -> None:
    # 30% share: missing it by chance in 10 samples is 2.8%; in 20 samples, 0.08%
    assert samples_to_settle(300, 1000, 10) == 10
    assert samples_to_settle(300, 1000, 20) == 0
    assert samples_to_settle(5, 1000, 1000) is None  # a 0.5% share is never claimed


def test_an_a_over_a_and_a_split_off_cold_part_make_no_claim() -> None:
    same = profile({"kernel": 600, "main_loop": 400})
    assert diff_profiles(hot_symbols(same), hot_symbols(same)).claims == ()
    cold = hot_symbols(profile({"kernel": 600, "kernel.cold": 100, "main_loop": 300}))
    diff = diff_profiles(hot_symbols(same), cold)
    assert diff.claims == () and diff.unsettled == ()


@pytest.mark.parametrize(
    ("interval", "verdict"),
    [
        # an A/A next to the time and counters lenses: two processes, 2.4% apart, no claim
        ((1.024, 1.007, 1.041), Verdict.INCONCLUSIVE),
        ((0.976, 0.969, 0.982), Verdict.INCONCLUSIVE),
        # identical processes that agree say nothing of a small change: never equivalent
        ((1.000, 0.999, 1.001), Verdict.INCONCLUSIVE),
        # a sort of shuffled against presorted data: far beyond what processes differ by
        ((15.3, 15.0, 15.6), Verdict.SLOWER),
        ((0.5, 0.48, 0.52), Verdict.FASTER),
    ],
)
def test_one_worker_per_variant_decides_only_beyond_what_processes_differ_by(
    interval: tuple[float, float, float], verdict: Verdict
) -> None:
    comparison = comparison_from(
        interval,
        equivalence_band=0.01,
        benchmark="b",
        metric=Metric.PROFILE,
        baseline="a",
        variant="b",
        baseline_value=1.0,
        variant_value=interval[0],
        unit="ns",
    )
    assert one_process_verdict(comparison).verdict is verdict
