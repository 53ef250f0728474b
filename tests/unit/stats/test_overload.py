"""Load that correcting preempted samples cannot repair: unequal preemption, CPU time that grows
in preempted samples. Synthetic samples reproduce both; the interval must widen (or the verdict
fall back to inconclusive), never stay tight around a biased ratio."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace

import pytest

from perflab.lenses.fragments import verdict_cell
from perflab.lenses.time.analyse import analyse_time
from perflab.lenses.time.artifacts import KIND_SHARED_CPU
from perflab.measure.lens import BenchmarkData
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Artifact, Benchmark, Sample
from perflab.records.settings import Settings
from perflab.records.units import format_ratio
from perflab.stats.comparison import ONE_PROCESS_ALLOWANCE, verdict_for
from perflab.stats.overload import (
    CHANCE_SE,
    ColdStarts,
    OverloadAction,
    cold_share,
    cpu_growth,
    median_shift,
    overload_check,
    seconds_to_decide_under_load,
    uneven_preemption,
)
from perflab.stats.paired import estimate_ratio, pair_samples
from perflab.stats.preemption import Preemption

LOOPS = 10


def _sample(
    variant: str,
    generation: int,
    block: int,
    per_iteration_ns: float,
    *,
    preempted: bool,
    growth: float,
) -> Sample:
    """A sample whose CPU time is the statement's, grown by `growth` when preempted, and whose
    wall time adds the run-queue wait of a preemption."""
    cpu = per_iteration_ns * LOOPS * ((1 + growth) if preempted else 1.0)
    wait = 0.5 * cpu if preempted else 0.0
    return Sample(
        benchmark="b",
        variant=variant,
        metric=Metric.TIME,
        name="wall_ns",
        value=cpu + wait,
        loops=LOOPS,
        generation=generation,
        block=block,
        run_queue_ns=int(wait),
        cpu_ns=int(cpu),
    )


def _run(
    rng: random.Random,
    *,
    ratio: float,
    preempted: tuple[float, float],
    growth: tuple[float, float],
    generations: int = 12,
    blocks: int = 20,
    process_sd: float = 0.01,
) -> tuple[list[Sample], list[Sample]]:
    """Baseline and variant samples: per-generation (process) effects, per-sample noise,
    each side preempted with its own probability and growing its CPU time by its own factor."""
    base: list[Sample] = []
    other: list[Sample] = []
    for g in range(generations):
        offsets = (rng.gauss(0, process_sd), rng.gauss(0, process_sd))
        for b in range(blocks):
            for side, (target, truth) in enumerate(((base, 100_000.0), (other, 100_000 * ratio))):
                value = truth * math.exp(offsets[side] + rng.gauss(0, 0.01))
                hit = rng.random() < preempted[side]
                target.append(
                    _sample(
                        "base" if side == 0 else "other",
                        g,
                        b,
                        value,
                        preempted=hit,
                        growth=growth[side],
                    )
                )
    return base, other


def _corrected(base: list[Sample], other: list[Sample]):  # type: ignore[no-untyped-def]
    return estimate_ratio(pair_samples(base, other, preemption=Preemption.CORRECT))


def test_unequal_preemption_with_cpu_growth_widens_to_hold_the_truth() -> None:
    # the reported situation: one variant preempted 63% of the time, the other 18%, and
    # preempted samples using 60% more CPU per iteration
    base, other = _run(random.Random(1), ratio=1.3, preempted=(0.18, 0.63), growth=(0.6, 0.6))
    estimate = _corrected(base, other)
    assert estimate.ci_low > 1.3  # correction leaves a tight interval that misses the truth
    check = overload_check(base, other, estimate)
    assert check is not None
    assert check.uneven and check.grows
    assert check.action is OverloadAction.FROM_UNPREEMPTED
    assert check.ci_low <= 1.3 <= check.ci_high
    # from the unpreempted pairs: the biased corrected interval is not kept
    assert check.ci_low < estimate.ci_low
    message = check.message("base", "other")
    assert "`other`'s samples were preempted 62% of the time and `base`'s 19%" in message
    assert "+60%" in message and "cannot repair" in message


def test_cpu_growth_alone_is_seen_and_widens() -> None:
    base, other = _run(random.Random(2), ratio=1.0, preempted=(0.4, 0.4), growth=(0.2, 0.2))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None
    assert check.grows and not check.uneven
    assert check.cpu_growth_baseline is not None and 0.15 < check.cpu_growth_baseline < 0.25
    assert check.ci_low <= estimate.ci_low and check.ci_high >= estimate.ci_high
    assert check.ci_low <= 1.0 <= check.ci_high


def test_a_quiet_machine_changes_nothing() -> None:
    base, other = _run(random.Random(3), ratio=1.1, preempted=(0.0, 0.0), growth=(0.0, 0.0))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and not check.seen
    assert check.action is OverloadAction.NONE
    assert (check.ci_low, check.ci_high) == (estimate.ci_low, estimate.ci_high)


def test_preemption_that_costs_nothing_more_is_left_to_the_correction() -> None:
    # both preempted alike, no growth: the correction repairs it, nothing is widened
    base, other = _run(random.Random(4), ratio=1.0, preempted=(0.3, 0.3), growth=(0.0, 0.0))
    check = overload_check(base, other, _corrected(base, other))
    assert check is not None and not check.seen


def test_samples_without_accounting_are_not_checked() -> None:
    base, other = _run(random.Random(5), ratio=1.0, preempted=(0.0, 0.0), growth=(0.0, 0.0))
    strip = [s.__class__(**{**s.__dict__, "run_queue_ns": None}) for s in base]
    assert overload_check(strip, other, _corrected(strip, other)) is None


def test_every_sample_of_one_variant_preempted_is_inconclusive() -> None:
    # no unpreempted sample of the variant: neither its growth nor a clean ratio can be
    # measured, so nothing bounds the bias
    base, other = _run(random.Random(6), ratio=1.3, preempted=(0.1, 1.0), growth=(0.5, 0.5))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.uneven
    assert check.action is OverloadAction.UNBOUNDED
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.INCONCLUSIVE
    assert "only where that interval lies wholly beyond ±10%" in check.message("base", "other")


def test_no_clean_pairs_widen_by_the_growth() -> None:
    # whenever one side ran undisturbed the other was preempted: no pair is clean, but each
    # side has undisturbed samples in every generation, so its growth is measured
    rng = random.Random(7)
    base: list[Sample] = []
    other: list[Sample] = []
    for g in range(8):
        for b in range(20):
            base_hit, other_hit = (b % 4 != 0), (b % 4 == 0 or b % 2 == 1)
            noise = math.exp(rng.gauss(0, 0.01))
            base.append(_sample("base", g, b, 1e5 * noise, preempted=base_hit, growth=0.3))
            other.append(_sample("other", g, b, 1.3e5 * noise, preempted=other_hit, growth=0.3))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.grows
    # so frequent that most unpreempted samples may have started cold: the growth, measured
    # against them, is not trusted as the cost; the interval is widened by the assumed one
    assert check.action is OverloadAction.UNBOUNDED and check.undecided
    assert check.unpreempted is not None and check.unpreempted.n_groups == 0
    assert check.ci_low < estimate.ci_low and check.ci_high > estimate.ci_high
    assert check.ci_low <= 1.3 <= check.ci_high
    assert "a preemption costs, which any sample may carry once" in check.message("base", "other")
    assert "assumes at most +100%" in check.message("base", "other")


def test_uneven_needs_more_than_chance() -> None:
    assert not uneven_preemption(0.30, 0.36, 400)  # within chance and within 10 points
    assert not uneven_preemption(0.30, 0.42, 20)  # 12 points, but 20 samples: chance
    assert uneven_preemption(0.18, 0.63, 400)


def test_cpu_growth_is_within_groups() -> None:
    # generation 1's process is 50% slower, and has all the preempted samples: compared
    # within generations, preemption costs nothing more
    rng = random.Random(8)
    samples = []
    for g in range(4):
        slow = 1.5 if g % 2 else 1.0
        for b in range(10):
            hit = g % 2 == 1 and b % 2 == 0 or g % 2 == 0 and b == 0
            samples.append((g, _sample("a", g, b, 1000 * slow * (1 + rng.gauss(0, 0.001)),
                                       preempted=hit, growth=0.0)))  # fmt: skip
    growth = cpu_growth(samples)
    assert growth is not None and abs(growth) < 0.01


@pytest.mark.slow
def test_coverage_under_unequal_load_holds() -> None:
    """Over many simulated runs with uneven preemption and CPU growth, the widened interval
    holds the truth in at least 95% of them; the corrected one alone does in far fewer."""
    rng = random.Random(9)
    runs, held_before, held_after = 60, 0, 0
    for _ in range(runs):
        p_base = rng.uniform(0.05, 0.3)
        base, other = _run(
            rng,
            ratio=1.3,
            preempted=(p_base, p_base + rng.uniform(0.2, 0.5)),
            growth=(rng.uniform(0.2, 0.6),) * 2,
            generations=10,
            blocks=12,
            process_sd=0.02,
        )
        estimate = _corrected(base, other)
        check = overload_check(base, other, estimate)
        assert check is not None
        held_before += estimate.ci_low <= 1.3 <= estimate.ci_high
        held_after += check.ci_low <= 1.3 <= check.ci_high
    assert held_after >= 0.95 * runs
    assert held_before < 0.5 * runs


# --- a bound proportional to the evidence (issue 41) ---


def test_rare_preemption_leaves_the_unpreempted_pairs_answer() -> None:
    # the A/A at load 1.6: 1.8% of samples preempted, preempted samples using 53% and 66% more
    # CPU time; the unpreempted pairs are equivalent, and so is the verdict
    base, other = _run(
        random.Random(11),
        ratio=1.0,
        preempted=(0.018, 0.018),
        growth=(0.53, 0.66),
        blocks=73,
        process_sd=0.005,
    )
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.grows
    assert check.action is OverloadAction.FROM_UNPREEMPTED and not check.undecided
    clean = check.unpreempted
    assert clean is not None
    width = math.log(check.ci_high / check.ci_low)
    assert width <= 1.5 * math.log(clean.ci_high / clean.ci_low)
    assert check.ci_low <= 1.0 <= check.ci_high
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.EQUIVALENT
    message = check.message("base", "other")
    assert f"{clean.ratio:.3f} [{clean.ci_low:.3f}, {clean.ci_high:.3f}]" in message
    assert "any sample may carry once" not in message


def test_a_small_difference_is_found_under_rare_preemption() -> None:
    # a 3% difference with 0.9% of samples preempted: `slower`, the interval holding 1.03
    base, other = _run(
        random.Random(12), ratio=1.03, preempted=(0.009, 0.009), growth=(0.5, 0.5), blocks=46
    )
    check = overload_check(base, other, _corrected(base, other))
    assert check is not None and check.seen
    assert check.ci_low <= 1.03 <= check.ci_high
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.SLOWER


def test_even_preemption_widens_by_little_whatever_the_share() -> None:
    # cold starts that hit both variants alike move no ratio: rare or frequent, the interval
    # stays near the unpreempted pairs'
    for share in (0.01, 0.05, 0.15, 0.3):
        base, other = _run(
            random.Random(13), ratio=1.0, preempted=(share, share), growth=(0.3, 0.3)
        )
        check = overload_check(base, other, _corrected(base, other))
        assert check is not None and check.action is OverloadAction.FROM_UNPREEMPTED
        assert check.widened_low + check.widened_high < 0.01
        assert not check.undecided


def test_one_variant_preempted_more_widens_up_to_the_cost() -> None:
    widened = []
    for share in (0.02, 0.1, 0.2):
        base, other = _run(
            random.Random(13), ratio=1.0, preempted=(0.01, 0.01 + share), growth=(0.3, 0.3)
        )
        check = overload_check(base, other, _corrected(base, other))
        assert check is not None and check.action is OverloadAction.FROM_UNPREEMPTED
        widened.append(check.widened_low + check.widened_high)
    assert widened == sorted(widened)
    assert widened[-1] > 0.01
    assert widened[-1] <= 2 * math.log1p(0.35)  # never more than a preemption costs


def test_frequent_even_preemption_keeps_the_unpreempted_answer() -> None:
    # 30% of both variants' samples preempted: the growth may be measured against cold samples,
    # so its cost is assumed; but no variant starts cold more often than the other, so the
    # assumed cost bounds nothing and the unpreempted pairs decide
    base, other = _run(random.Random(13), ratio=1.6, preempted=(0.3, 0.3), growth=(0.3, 0.3))
    check = overload_check(base, other, _corrected(base, other))
    assert (
        check is not None
        and check.action is OverloadAction.FROM_UNPREEMPTED
        and not check.undecided
    )
    assert check.ci_low <= 1.6 <= check.ci_high
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.SLOWER


def _timed(samples: list[Sample], *, gap_ns: int) -> list[Sample]:
    """The samples stamped as measured one after another, `gap_ns` between them."""
    stamped, at = [], 0
    for sample in samples:
        at += int(sample.value) + gap_ns
        stamped.append(replace(sample, at_ns=at))
    return stamped


def test_cold_starts_are_counted_after_preempted_samples_in_measured_order() -> None:
    def one(variant: str, block: int, preempted: bool) -> Sample:
        return _sample(variant, 0, block, 1000.0, preempted=preempted, growth=0.0)

    # measured: b0 o0(P) b1 o1 b2(P) o2 -> base's b1 ran right after a preempted sample, and
    # other's o2; neither counts the preempted samples themselves
    order = [
        one("base", 0, False),
        one("other", 0, True),
        one("base", 1, False),
        one("other", 1, False),
        one("base", 2, True),
        one("other", 2, False),
    ]
    stamped = _timed(order, gap_ns=2_500)  # a sample is 10,000 ns: the wait a quarter of it
    base = [s for s in stamped if s.variant == "base"]
    other = [s for s in stamped if s.variant == "other"]
    cold = ColdStarts.of(base, other)
    assert (cold.after_baseline, cold.after_variant) == (0.5, 0.5)
    assert cold.gap_to_sample == pytest.approx(0.25, rel=0.4)
    # preempted shares 1/3 each, the seen shares alike: no excess beyond chance's
    assert cold.chance > 0
    assert cold.excess((1 / 3, 1 / 3)) == (CHANCE_SE * cold.chance,) * 2
    # one variant preempted more: the wait may hold as many more cold starts, scaled to it
    up, down = ColdStarts(0.1, 0.3, 0.25).excess((0.05, 0.45))
    assert down == pytest.approx(0.2 + 0.1) and up == pytest.approx(0.1)
    # unstamped samples (older stores): the wait is taken as long as a sample
    assert ColdStarts.of(order[:2], order[2:]).gap_to_sample == 1.0


def test_a_group_left_few_unpreempted_pairs_does_not_weigh_as_a_whole_one() -> None:
    # one generation nearly all preempted: its one or two clean pairs would make a unit as
    # noisy as they are; the interval comes from the groups that kept enough of them
    rng = random.Random(21)
    base, other = _run(rng, ratio=1.0, preempted=(0.02, 0.02), growth=(0.3, 0.3))
    hit = [
        replace(s, run_queue_ns=int(s.value), value=2 * s.value, cpu_ns=int(1.3 * s.value))
        if s.generation == 0 and s.block >= 2
        else s
        for s in base
    ]
    check = overload_check(hit, other, _corrected(hit, other))
    assert check is not None and check.unpreempted is not None
    assert check.unpreempted.n_groups == 11  # generation 0 kept 2 clean pairs: left out


def test_a_side_never_preempted_borrows_the_others_cost() -> None:
    # the baseline is never preempted, but can start cold after the variant's preemptions
    base, other = _run(random.Random(22), ratio=1.0, preempted=(0.0, 0.25), growth=(0.0, 0.4))
    check = overload_check(base, other, _corrected(base, other))
    assert check is not None and check.seen
    assert check.widened_high > 0  # the baseline's cold starts can lower the ratio


def test_median_shift_is_the_rank_bound() -> None:
    values = [float(v) for v in range(1, 10)]  # median 5
    assert median_shift(values, 0, upward=True) == 0.0
    assert median_shift(values, 2, upward=True) == 2.0  # the median becomes 7
    assert median_shift(values, 2, upward=False) == 2.0  # or 3
    assert median_shift(values, 5, upward=True) == math.inf  # half of them: anything
    assert median_shift([1.0, 2.0, 3.0, 10.0], 1, upward=True) == 4.0  # (3 + 10) / 2 - 2.5


def test_cold_share_adds_both_variants_shares() -> None:
    assert cold_share(0.02, 0.3) == 0.32
    assert cold_share(0.6, 0.7) == 1.0


def test_no_interval_is_unbounded_and_the_verdict_stays_inconclusive() -> None:
    # every sample of the variant preempted: no clean pair, its growth unmeasurable; the
    # interval is finite (an assumed cost) and the verdict inconclusive even if it excluded 1
    base, other = _run(random.Random(6), ratio=1.6, preempted=(0.1, 1.0), growth=(0.5, 0.0))
    estimate = _corrected(base, other)
    check = overload_check(base, other, estimate)
    assert check is not None and check.action is OverloadAction.UNBOUNDED and check.undecided
    assert 0 < check.ci_low and math.isfinite(check.ci_high)
    assert check.ci_low <= 1.6 <= check.ci_high
    assert "assumes at most +100%" in check.message("base", "other")
    assert check.to_json()["undecided"] is True
    # nothing ran undisturbed: measuring longer at this load says nothing more
    assert seconds_to_decide_under_load(check, 0.01, 30.0) is None


def test_an_undecided_bound_claims_only_far_beyond_its_ends() -> None:
    # every baseline sample preempted: its cost is assumed, so the verdict is the one a lens of
    # one process per variant gives: a difference only where the whole widened interval lies
    # beyond what processes of the same code differ by, and never equivalent
    base, other = _run(random.Random(6), ratio=2.5, preempted=(1.0, 0.1), growth=(0.0, 0.5))
    (comparison,) = _analysed(base, other).comparisons
    assert comparison.ci_low > 1 + ONE_PROCESS_ALLOWANCE and math.isfinite(comparison.ci_high)
    assert comparison.verdict is Verdict.SLOWER
    assert comparison.to_json()["ci_high"] is not None
    # the same load on a difference the widened interval cannot tell from 1: no claim
    base, other = _run(random.Random(6), ratio=1.3, preempted=(1.0, 0.1), growth=(0.0, 0.5))
    (comparison,) = _analysed(base, other).comparisons
    assert comparison.ci_low < 1 + ONE_PROCESS_ALLOWANCE
    assert comparison.verdict is Verdict.INCONCLUSIVE
    # and identical code is never called equivalent on an assumed bound
    base, other = _run(random.Random(6), ratio=1.0, preempted=(1.0, 0.1), growth=(0.0, 0.5))
    (comparison,) = _analysed(base, other).comparisons
    assert comparison.verdict is Verdict.INCONCLUSIVE


def test_too_few_clean_units_say_how_long_to_decide() -> None:
    # two perflab runs on one CPU, stopped after two generations: too few units for the
    # unpreempted pairs' interval and for measuring a growth; the interval is finite, the
    # verdict inconclusive, and it says how much longer would decide
    base, other = _run(
        random.Random(14), ratio=1.6, preempted=(0.05, 0.05), growth=(0.5, 0.5), generations=2
    )
    check = overload_check(base, other, _corrected(base, other), shared_cpu_with=(4242,))
    assert check is not None and check.action is OverloadAction.UNBOUNDED and check.undecided
    assert check.unpreempted is not None and check.unpreempted.n_groups == 2
    assert 0 < check.ci_low and math.isfinite(check.ci_high)
    extra = seconds_to_decide_under_load(check, 0.01, 10.0)
    assert extra is not None and extra >= 10.0 * (3 / 2 - 1)  # the third unit at least

    shared = Artifact(
        benchmark="b",
        variant="base",
        metric=Metric.TIME,
        kind=KIND_SHARED_CPU,
        content=json.dumps({"cpu": 0, "pids": [4242]}),
    )
    (comparison,) = _analysed(base, other, (shared,)).comparisons
    assert comparison.verdict is Verdict.INCONCLUSIVE
    assert math.isfinite(comparison.ci_high)
    reported = comparison.to_json()
    assert reported["extra_seconds_to_decide"] is not None
    # the JSON holds the plain string it always held, not the enum
    assert type(reported["overload"]["action"]) is str
    assert reported["overload"]["action"] == "unbounded"
    cell = verdict_cell(comparison, cross_run=False)
    assert cell.text.startswith("inconclusive (~") and cell.text.endswith(" more)")
    assert "∞" not in format_ratio(comparison.ratio, comparison.ci_low, comparison.ci_high)


def test_rare_preemption_inconclusive_says_how_long_to_decide() -> None:
    # noisy units, rare preemption: the unpreempted pairs' interval straddles the band, and
    # the widening is small enough that measuring longer decides
    base, other = _run(
        random.Random(15),
        ratio=1.0,
        preempted=(0.02, 0.02),
        growth=(0.5, 0.5),
        generations=4,
        process_sd=0.02,
    )
    check = overload_check(base, other, _corrected(base, other))
    assert check is not None and check.action is OverloadAction.FROM_UNPREEMPTED
    assert verdict_for(check.ci_low, check.ci_high, 0.01) is Verdict.INCONCLUSIVE
    extra = seconds_to_decide_under_load(check, 0.01, 10.0)
    assert extra is not None and extra > 0


@pytest.mark.slow
def test_coverage_and_width_under_rare_preemption() -> None:
    """Over simulated runs with 2% of samples preempted at a +50% cost, the interval holds the
    truth as a 95% interval does, and is at most 1.5x as wide as the unpreempted pairs'."""
    rng = random.Random(16)
    runs, held, widths = 40, 0, []
    for _ in range(runs):
        base, other = _run(rng, ratio=1.03, preempted=(0.02, 0.02), growth=(0.5, 0.5))
        check = overload_check(base, other, _corrected(base, other))
        assert check is not None
        held += check.ci_low <= 1.03 <= check.ci_high
        clean = estimate_ratio(pair_samples(base, other, preemption=Preemption.EXCLUDE))
        widths.append(
            math.log(check.ci_high / check.ci_low) / math.log(clean.ci_high / clean.ci_low)
        )
    assert held >= 0.95 * runs
    assert sorted(widths)[runs // 2] <= 1.5


def _analysed(  # type: ignore[no-untyped-def]
    base: list[Sample], other: list[Sample], artifacts: tuple[Artifact, ...] = ()
):
    return analyse_time(
        Benchmark(name="b", stmt="pass"),
        ["base", "other"],
        BenchmarkData(samples=tuple(base + other), artifacts=artifacts),
        Settings(preempted="correct", equivalence_band=0.01),
    )
