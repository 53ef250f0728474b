"""A statement's time verdict from fewer than three worker generations: a difference is
claimed only beyond what processes of the same code differ by, and never `equivalent`; from
three on, the t interval over generations decides as before."""

from __future__ import annotations

import math
import random

from perflab.lenses.time.analyse import MIN_GENERATIONS_TO_DECIDE, analyse_time
from perflab.records.kinds import Metric, Verdict
from perflab.records.model import Benchmark, BenchmarkData, Sample
from perflab.records.settings import Settings


def _samples(generations: int, ratio: float, *, seed: int = 1) -> list[Sample]:
    """Two variants, 12 blocks per generation; every generation's variant sits at `ratio`
    (processes that agree closely), with 0.1% noise per sample."""
    rng = random.Random(seed)
    samples = []
    for g in range(generations):
        for b in range(12):
            for name, truth in (("a", 1e5), ("b", 1e5 * ratio)):
                wall = truth * 10 * math.exp(rng.gauss(0, 0.001))
                samples.append(
                    Sample("s", name, Metric.TIME, "wall_ns", wall, loops=10, generation=g,
                           block=b, run_queue_ns=0, cpu_ns=int(wall))
                )  # fmt: skip
    return samples


def _decide(generations: int, ratio: float) -> tuple[Verdict, list[str]]:
    analysis = analyse_time(
        Benchmark("s", stmt="x"), ["a", "b"], BenchmarkData(tuple(_samples(generations, ratio))),
        Settings(),
    )  # fmt: skip
    (comparison,) = analysis.comparisons
    return comparison.verdict, [n.message for n in analysis.notes]


def test_two_generations_that_agree_claim_no_small_difference() -> None:
    verdict, notes = _decide(2, 1.014)
    assert verdict is Verdict.INCONCLUSIVE
    assert any("only 2 worker generations" in n for n in notes)


def test_two_generations_still_find_a_large_difference() -> None:
    verdict, _ = _decide(2, 1.6)
    assert verdict is Verdict.SLOWER


def test_two_identical_generations_are_not_called_equivalent() -> None:
    verdict, _ = _decide(2, 1.0)
    assert verdict is Verdict.INCONCLUSIVE


def test_three_generations_decide_by_their_interval() -> None:
    assert MIN_GENERATIONS_TO_DECIDE == 3
    slower, notes = _decide(3, 1.03)
    assert slower is Verdict.SLOWER
    assert not any("worker generations" in n for n in notes)
    same, _ = _decide(3, 1.0)
    assert same is Verdict.EQUIVALENT
