"""How the time lens prices its generations: forked from servers when imports dominate, fresh
workers started ahead on a CPU beside the measuring one where the probe found one."""

from __future__ import annotations

import dataclasses

from perflab.lenses.time.cost import MAX_FORKS_PER_ROUND, server_rounds, time_cost
from perflab.records.settings import Settings
from tests.support.cost_probes import QUICK, TORCH


def test_server_rounds_fork_more_generations_when_imports_dominate() -> None:
    settings = Settings(budget_s=1000)
    slow = dataclasses.replace(TORCH, startup_s=20.0, import_s=19.0)
    quick, heavy = server_rounds(TORCH, settings), server_rounds(slow, settings)
    assert quick is not None and heavy is not None
    assert heavy.forks_per_round > quick.forks_per_round
    assert heavy.forks_per_round <= MAX_FORKS_PER_ROUND
    huge_import = dataclasses.replace(TORCH, startup_s=1e4, import_s=1e4)
    huge = server_rounds(huge_import, Settings(budget_s=1e6))
    assert huge is not None and huge.forks_per_round == MAX_FORKS_PER_ROUND
    # the minimum generations are spread over at least 3 rounds, and --min-generations 2
    # asks for 2 rounds
    assert heavy.min_rounds == 3
    few = server_rounds(TORCH, Settings(min_generations=2))
    assert few is not None and few.min_rounds == 2
    # a budget too small for the minimum rounds with many forks gets fewer (at least 2)
    tight = server_rounds(slow, Settings(budget_s=20))
    assert tight is not None and tight.forks_per_round == 2


def test_fresh_workers_start_ahead_only_where_the_probe_found_a_cpu_beside() -> None:
    settings = Settings(pin=True)
    beside = time_cost(dataclasses.replace(QUICK, startup_s=1.0, cpu_beside=True), settings)
    alone = time_cost(dataclasses.replace(QUICK, startup_s=1.0, cpu_beside=False), settings)
    # alone, each generation pays its workers' start-up before it samples
    assert alone.minimum_s > beside.minimum_s
    assert alone.overshoot_s > beside.overshoot_s
    # unpinned, no CPU is kept for measuring: the start-up is paid either way
    unpinned = Settings(pin=False)
    assert time_cost(dataclasses.replace(QUICK, cpu_beside=True), unpinned) == time_cost(
        dataclasses.replace(QUICK, cpu_beside=False), unpinned
    )
