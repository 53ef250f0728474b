"""The time lens's cost model for the budget's plan, and the generation lengths it samples."""

from __future__ import annotations

import math

from perflab.budget.costs import ANALYSIS_S, CostProbe, LensCost, ServerRounds, analysis_s
from perflab.lenses.fragments import plural
from perflab.lenses.time.metric import TIME
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import Settings

# blocks per generation after warm-up, and the shortest generation the lens samples
TIME_MIN_BLOCKS = 4
TIME_MIN_GENERATION_S = 0.25
# Every generation, besides its workers' start-up and its samples: closing its workers and the
# stopping rule's look at the estimates, per worker on the reference machine (scaled by the
# machine's factor).
TIME_GENERATION_CLOSE_S = 0.025
# The generations: about this many in the lens's budget, each between these lengths. Per-process
# effects dominate the error on a noisy VM (docs/statistics.md), so the budget buys generations
# rather than long ones.
TIME_TARGET_GENERATIONS = 24
TIME_GENERATION_S_RANGE = (0.25, 1.0)
# The lens forks its generations from rounds of fork servers (one fresh process per variant
# per round, paying the set-up's imports once) when the variants' imports would take more than
# this share of a generation; its interval is then over rounds (docs/statistics.md, "Expensive
# set-ups"). Plain Python statements import next to nothing and keep fresh workers.
SERVER_ROUNDS_WHEN_IMPORTS_SHARE = 0.1
MIN_SERVER_ROUNDS = 3  # units of the interval: fewer give t quantiles of 4.3 and more
# generations forked from one round's servers at most, so that fresh rounds (the interval's units)
# keep coming
MAX_FORKS_PER_ROUND = 8


def time_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """The time lens's minimum measurement of one benchmark and what it costs."""
    n = probe.variants
    after_s = analysis_s(probe, ANALYSIS_S)
    if probe.kind is BenchmarkKind.COMMAND:
        blocks = settings.min_command_blocks
        return LensCost(
            TIME,
            minimum_s=blocks * n * probe.sample_s,
            needs=f"{blocks} {plural('block', blocks)} of {n} runs of {probe.sample_s:.2g} s",
            elastic=True,
            weight=3.0,
            overshoot_s=n * probe.sample_s,
            after_s=after_s,
        )
    rounds = server_rounds(probe, settings)
    if rounds is not None:
        return _time_cost_in_rounds(probe, settings, rounds)
    # Fresh workers in every generation when imports are cheap. When start-up dominates, the
    # lens samples each generation at least as long as its workers took to start.
    # Where perflab has a CPU besides the measuring one, each generation's workers start there
    # while the previous generation measures (lenses/time/statements.py): only the first
    # generation's start-up is paid on top.
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    start_s = n * probe.startup_s
    sampling_s = max(TIME_MIN_GENERATION_S, start_s, blocks * n * probe.sample_s)
    started_ahead = settings.pin and probe.cpu_beside
    generation_s = _closing_s(probe) + (sampling_s if started_ahead else start_s + sampling_s)
    calibration_s = 4 * n * probe.sample_s + (start_s if started_ahead else 0.0)
    return LensCost(
        TIME,
        minimum_s=calibration_s + settings.min_generations * generation_s,
        needs=f"{settings.min_generations} generations of {n} fresh workers "
        f"at {probe.startup_s:.2g} s start-up each",
        elastic=True,
        weight=3.0,
        overshoot_s=generation_s,
        after_s=after_s,
    )


def _closing_s(probe: CostProbe) -> float:
    """What a generation costs after its samples: closing its workers, the stopping rule."""
    return probe.variants * TIME_GENERATION_CLOSE_S * probe.speed.factor


def time_generation_s(budget_s: float) -> float:
    """How long the time lens samples a generation, from its budget (before start-up)."""
    low_s, high_s = TIME_GENERATION_S_RANGE
    return min(high_s, max(low_s, budget_s / TIME_TARGET_GENERATIONS))


def server_rounds(probe: CostProbe, settings: Settings) -> ServerRounds | None:
    """The time lens's server rounds for this benchmark, or None for fresh workers in every
    generation: rounds when the variants' imports take more than SERVER_ROUNDS_WHEN_IMPORTS_SHARE of
    a generation at this budget.

    Forks per round: two-stage sampling spends the budget best with about
    sqrt(round start-up / generation cost) generations per round when the per-server and the
    per-generation variances are alike (more forks when the imports dominate), at least 2 so
    that forking saves anything, at most MAX_FORKS_PER_ROUND so that rounds keep coming."""
    if probe.kind is not BenchmarkKind.STATEMENT or probe.failed:
        return None
    if probe.device_runtimes:
        return None  # a GPU runtime does not survive fork: a round's children would be fresh
    n = probe.variants
    generation_s = time_generation_s(settings.budget_s)
    if n * probe.import_s <= SERVER_ROUNDS_WHEN_IMPORTS_SHARE * generation_s:
        return None
    round_start_s = n * probe.startup_s
    generation_cost_s = _forked_generation_s(probe, settings)
    forks = math.sqrt(round_start_s / generation_cost_s)
    forks_per_round = max(2, min(MAX_FORKS_PER_ROUND, round(forks)))

    def min_rounds(forks: int) -> int:
        return max(
            2,
            min(MIN_SERVER_ROUNDS, settings.min_generations),
            math.ceil(settings.min_generations / forks),
        )

    # fewer forks when the minimum rounds would not fit the budget with as many: the rounds
    # (units) are what the minimum is for
    while (
        forks_per_round > 2
        and min_rounds(forks_per_round) * (round_start_s + forks_per_round * generation_cost_s)
        > settings.budget_s
    ):
        forks_per_round -= 1
    return ServerRounds(forks_per_round, min_rounds(forks_per_round), round_start_s)


def _forked_generation_s(probe: CostProbe, settings: Settings) -> float:
    """One forked generation: its workers' fork and set-up, and its samples."""
    n = probe.variants
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    sampled_s = max(time_generation_s(settings.budget_s), blocks * n * probe.sample_s)
    return n * probe.fork_s + sampled_s


def _time_cost_in_rounds(probe: CostProbe, settings: Settings, rounds: ServerRounds) -> LensCost:
    n = probe.variants
    blocks = settings.warmup_blocks + TIME_MIN_BLOCKS
    # the minimum samples each generation only as long as its blocks need
    sampling_s = max(TIME_MIN_GENERATION_S, blocks * n * probe.sample_s)
    generation_s = n * probe.fork_s + sampling_s + _closing_s(probe)
    round_s = rounds.round_start_s + rounds.forks_per_round * generation_s
    calibration_s = 4 * n * probe.sample_s
    return LensCost(
        TIME,
        minimum_s=calibration_s + rounds.min_rounds * round_s,
        needs=f"{rounds.min_rounds} rounds of {n} fork servers at {probe.startup_s:.2g} s "
        f"start-up each, {rounds.forks_per_round} forked generations per round",
        elastic=True,
        weight=3.0,
        overshoot_s=generation_s,
        server_rounds=rounds,
        after_s=analysis_s(probe, ANALYSIS_S),
    )
