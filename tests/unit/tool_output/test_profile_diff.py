"""The profile lens claims `appeared`/`disappeared` only from enough samples, says how many
more would settle a claim it does not make, and gives a verdict on its ratio only beyond what
separate processes of the same code differ by."""

from __future__ import annotations

from collections import Counter

import pytest

from perflab.lenses.profile.analyse import ProfileDetails
from perflab.records.kinds import Metric, Verdict
from perflab.stats.comparison import SideValues, Subject, comparison_from
from perflab.tool_output.profile_diff import diff_profiles, even_across_parts, samples_to_settle
from perflab.tool_output.profile_stacks import Stack, hot_symbols


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
        Subject("b", Metric.PROFILE, "a", "b"),
        SideValues(1.0, interval[0], "ns"),
        equivalence_band=0.01,
        one_process=True,
    )
    assert comparison.verdict is verdict


def strlen_profile(memset: int, total: int, strlen: str = "__strlen_evex") -> Counter[Stack]:
    """glibc_strlen_tunables' statement, `libc.strlen(buf)` through ctypes: `total` samples,
    `memset` of them in the `memset` that `_ctypes_callproc` calls for its argument array."""
    call = (("_ctypes.so", "_ctypes_callproc"), ("libpython3.11.so", "_PyEval_EvalFrameDefault"))
    return Counter(
        {
            (("libc.so.6", strlen), ("libffi.so.8", "ffi_call"), *call): total - memset,
            (("libc.so.6", "__memset_avx512_unaligned_erms"), *call): memset,
        }
    )


def test_a_one_off_in_one_process_of_identical_code_makes_no_claim() -> None:
    # the corpus's false claim: memset on 22 of 1014 baseline samples (all in one process's
    # recording) and none of 1010 of the identical copy's; pooled, the rule holds
    one_off, usual = strlen_profile(21, 507), strlen_profile(1, 507)
    same_a, same_b = strlen_profile(0, 505), strlen_profile(0, 505)
    pooled = diff_profiles(hot_symbols(one_off + usual), hot_symbols(same_a + same_b))
    assert pooled.disappeared == ("__memset_avx512_unaligned_erms",)  # what the lens said
    diff = diff_profiles(
        hot_symbols(one_off + usual),
        hot_symbols(same_a + same_b),
        baseline_parts=[hot_symbols(one_off), hot_symbols(usual)],
        variant_parts=[hot_symbols(same_a), hot_symbols(same_b)],
    )
    assert diff.claims == () and diff.disappeared == ()
    (entry,) = diff.uneven
    assert entry.name == "__memset_avx512_unaligned_erms" and entry.parts == ((21, 507), (1, 507))
    # in both processes, under the floor in one: said as that, not as missing from one
    assert "under 2% of some baseline process's samples (21 of 507, 1 of 507)" in (
        entry.uneven_message()
    )
    absent = diff_profiles(
        hot_symbols(one_off + same_a),
        hot_symbols(same_a + same_b),
        baseline_parts=[hot_symbols(one_off), hot_symbols(same_a)],
        variant_parts=[hot_symbols(same_a), hot_symbols(same_b)],
    )
    assert "not in every baseline process (21 of 507, 0 of 505)" in (
        absent.uneven[0].uneven_message()
    )
    details = ProfileDetails(diff, "cpu-clock", "dwarf", 1014, 1010).to_json()
    assert details["diagnoses"] == [] and details["disappeared"] == []
    assert details["uneven"][0]["per_process"] == [
        {"samples": 21, "total_samples": 507},
        {"samples": 1, "total_samples": 507},
    ]


def test_a_function_that_really_disappeared_is_claimed_from_every_process() -> None:
    base_a, base_b = strlen_profile(1, 507), strlen_profile(0, 507)
    change_a = strlen_profile(0, 730, "__strlen_sse2")
    change_b = strlen_profile(0, 731, "__strlen_sse2")
    diff = diff_profiles(
        hot_symbols(base_a + base_b),
        hot_symbols(change_a + change_b),
        baseline_parts=[hot_symbols(base_a), hot_symbols(base_b)],
        variant_parts=[hot_symbols(change_a), hot_symbols(change_b)],
    )
    assert diff.appeared == ("__strlen_sse2",) and diff.disappeared == ("__strlen_evex",)
    assert diff.uneven == ()
    (claim,) = [c for c in diff.claims if c.name == "__strlen_sse2"]
    assert claim.parts == ((730, 730), (731, 731))


def test_each_process_of_a_side_must_hold_the_share_floor() -> None:
    assert even_across_parts([(30, 500), (12, 500)])  # 6% and 2.4%
    assert not even_across_parts([(30, 500), (9, 500)])  # 1.8% in one process
    assert not even_across_parts([(30, 500), (0, 0)])  # a process that recorded nothing
    assert even_across_parts([(1, 500)])  # one process: nothing to compare


def test_a_function_two_builds_spell_differently_neither_appeared_nor_disappeared() -> None:
    """Rust's hash differs between two flag sets: the variant's stacks are respelled as the
    baseline's (the rule every lens shares) before anything is claimed."""
    from perflab.tool_output.profile_stacks import respelled_stacks, stack_symbols
    from perflab.tool_output.symbol_names import pair_names

    a, b = "sumbench::sum_slice::hb17a8c125cb85c7d", "sumbench::sum_slice::h6d32bd3152f0eb41"
    before, after = profile({a: 300, "loop": 17}), profile({b: 227, "loop": 10})
    assert diff_profiles(hot_symbols(before), hot_symbols(after)).disappeared == (a,)
    pairing = pair_names(stack_symbols(before), stack_symbols(after))
    diff = diff_profiles(hot_symbols(before), hot_symbols(respelled_stacks(after, pairing)))
    assert diff.claims == () and diff.unsettled == ()
    [row] = [d for d in diff.symbols if d.name == a]
    assert row.baseline_share > 0.9 and row.variant_share > 0.9
