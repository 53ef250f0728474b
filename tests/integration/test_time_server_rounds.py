"""The time lens with an expensive set-up: generations forked from rounds of fork servers, the
interval over rounds (docs/statistics.md, "Expensive set-ups"). Real workers; the expensive
import is a module that sleeps, so the test costs little CPU."""

from __future__ import annotations

import collections
import dataclasses
import json
from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.engine import run_experiment
from perflab.lenses.time.analyse import TimeDetails
from perflab.lenses.time.artifacts import KIND_SERVER_ROUND
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.store import SqliteStore
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration


def test_an_expensive_import_is_paid_once_per_server_round(tmp_path: Path) -> None:
    imports = tmp_path / "imports.log"
    (tmp_path / "slow_module.py").write_text(
        f"import os, time\ntime.sleep(0.3)\nwith open({str(imports)!r}, 'a') as log:\n"
        "    log.write(f'{os.getpid()}\\n')\n"
    )
    made = make_experiment(
        stmt="sum(range(200))",
        setup="import slow_module",
        variants=[f"A env.PYTHONPATH={tmp_path}", f"B env.PYTHONPATH={tmp_path}"],
    )
    # the users' sample timeout (60 s): FAST's 20 s can be short for a fork server on busy CI
    settings = dataclasses.replace(FAST, metrics=(Metric.TIME,), sample_timeout_s=60.0)
    store = SqliteStore.open(tmp_path / "s.db")
    result = run_experiment(dataclasses.replace(made, settings=settings), store=store)
    assert result.status is RunStatus.COMPLETE, [str(f) for f in result.failures]
    (comparison,) = [c for c in result.comparisons if c.metric == Metric.TIME]
    details = comparison.details
    assert isinstance(details, TimeDetails) and details.group_name == "server round"
    # FAST asks for 2 generations: at least 2 rounds (the interval needs two units) of a few
    # forks each; a busy machine's noise may ask for another round
    n_rounds = details.n_groups
    assert n_rounds >= 2
    assert details.to_json()["group"] == "server round"
    # each generation says which round's servers its workers were forked from
    run = store.load_run(result.run_id)
    rounds = {
        a.generation: json.loads(a.content) for a in run.artifacts if a.kind == KIND_SERVER_ROUND
    }
    per_round = collections.Counter(r["round"] for r in rounds.values())
    forks = per_round[0]
    assert forks >= 2 and sorted(per_round) == list(range(n_rounds))
    # every round but the last forks as many generations; the stopping rule may cut a round
    # beyond the minimums short (a loaded machine's noise asks for another round)
    assert all(per_round[r] == forks for r in range(n_rounds - 1))
    assert 1 <= per_round[n_rounds - 1] <= forks
    assert sorted(rounds) == list(range(len(rounds)))
    assert [rounds[g]["round"] for g in sorted(rounds)] == sorted(per_round.elements())
    assert set(rounds[0]["servers"]).isdisjoint(rounds[forks]["servers"])  # fresh servers
    (note,) = [n for n in result.notes if "rounds of fork servers" in n.message]
    assert f"{len(rounds)} generations from {n_rounds} rounds" in note.message
    # the import ran in the probe's server and in each round's two servers, where fresh
    # workers would have imported it twice in every generation
    assert len(imports.read_text().split()) == 1 + 2 * n_rounds


def test_an_aa_of_a_torch_statement_in_server_rounds_claims_no_difference() -> None:
    """The known answer: identical variants of torch.add on 1-element tensors. Forked from one
    server per variant for the whole run, such an A/A once ended 'slower' at 3.78x; with the
    interval over rounds it must not claim a difference (short budget: 2 rounds)."""
    pytest.importorskip("torch")
    made = make_experiment(
        stmt="torch.add(x, y)",
        setup="import torch; x = torch.ones(1); y = torch.ones(1)",
        variants=["A", "B"],
    )
    # the users' sample timeout (60 s), not FAST's 20 s: a torch import in a fork server of a
    # busy CI machine can take longer, and this test is about the verdict, not the timeout
    settings = dataclasses.replace(FAST, metrics=(Metric.TIME,), sample_timeout_s=60.0)
    result = run_experiment(dataclasses.replace(made, settings=settings))
    assert result.status is RunStatus.COMPLETE, [str(f) for f in result.failures]
    (comparison,) = [c for c in result.comparisons if c.metric == Metric.TIME]
    assert isinstance(comparison.details, TimeDetails)
    assert comparison.details.group_name == "server round"
    assert comparison.verdict in (Verdict.EQUIVALENT, Verdict.INCONCLUSIVE), comparison
