"""How the time lens forks its generations from servers when imports dominate."""

from __future__ import annotations

import dataclasses

from perflab.lenses.time.cost import MAX_FORKS_PER_ROUND, server_rounds
from perflab.records.settings import Settings
from tests.support.cost_probes import TORCH


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
