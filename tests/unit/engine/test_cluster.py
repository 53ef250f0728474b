"""A cluster run's cells: one benchmark with every variant each, and the name an abandoned
attempt is stored under."""

from __future__ import annotations

from perflab.api import make_experiment
from perflab.engine.cluster import abandoned_name, cells_of


def test_cells_are_benchmarks_with_every_variant() -> None:
    experiment = make_experiment(
        stmt="sum(range($n))", params={"n": ["1", "2"]}, variants=["A", "B"]
    )
    cells = cells_of(experiment)
    assert [c.benchmark for c in cells] == [b.name for b in experiment.benchmarks]
    assert all(c.experiment.variants == experiment.variants for c in cells)
    assert all(len(c.experiment.benchmarks) == 1 for c in cells)
    assert (
        abandoned_name("b", 1, "0123456789abcdef")
        == "b (abandoned: attempt 1 on node 0123456789ab)"
    )
