"""A store of a history's runs of five commits (as history and bisect store them: git= variants,
their provenance recorded), written through perflab's store API, for the tests of `publish`
(tests/unit/publish, tests/cli, tests/integration)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Experiment, Sample, Variant
from perflab.records.results import RunResult
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.records.settings import Settings
from perflab.store import SqliteStore, StoredRun

HOSTILE = '<script>alert("x")</script> & <b>bold</b>'
BENCHMARKS = (Benchmark("parse", stmt="pass"), Benchmark(HOSTILE, stmt="pass"))
# five commits; the fourth makes `parse` 30% slower and the other benchmark 30% faster
COMMITS = [(f"{i:x}" * 40, f"commit {i}") for i in range(1, 6)]
COMMITS[3] = (COMMITS[3][0], f"slow down {HOSTILE}")
SLOW_FROM = 3


def level(benchmark: str, commit: str) -> float:
    index = [c for c, _ in COMMITS].index(commit)
    if index < SLOW_FROM:
        return 1.0e6
    return 1.3e6 if benchmark == "parse" else 0.7e6


def write_run(
    store: SqliteStore,
    commits: list[tuple[str, str]],
    names: list[str],
    seed: int,
    machine: dict[str, str] | None = None,
) -> int:
    """A run of the time lens whose variants `names` are `commits`, 8 generations x 4 blocks."""
    experiment = Experiment(
        benchmarks=BENCHMARKS,
        variants=tuple(
            Variant(name, git=commit) for name, (commit, _) in zip(names, commits, strict=True)
        ),
        settings=Settings(metrics=(Metric.TIME,)),
    )
    writer = store.begin_run(
        experiment, MachineInfo.from_json(machine or {"cpu_model": "test"}), "0"
    )
    rng = random.Random(seed)
    for name, (commit, subject) in zip(names, commits, strict=True):
        provenance = {"commit": commit, "subject": subject, "tree": "t" + commit[1:], "changes": []}
        writer.add_variant_info(name, VariantInfo.from_json({"provenance": provenance}))
    for benchmark in BENCHMARKS:
        for generation in range(8):
            for block in range(4):
                for position, (name, (commit, _)) in enumerate(zip(names, commits, strict=True)):
                    value = level(benchmark.name, commit) * rng.uniform(0.995, 1.005)
                    writer.add_sample(
                        Sample(benchmark.name, name, Metric.TIME, "wall_ns", value, loops=1000,
                               generation=generation, block=block, position=position,
                               at_ns=(generation * 4 + block) * 10**7)
                    )  # fmt: skip
    writer.finish(RunStatus.COMPLETE)
    return writer.run_id


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A history's run of the five commits, then the direct comparison of the change point."""
    path = tmp_path / "p.db"
    opened = SqliteStore.open(path)
    try:
        write_run(opened, COMMITS, [f"c{c[:10]}" for c, _ in COMMITS], seed=1)
        write_run(opened, COMMITS[SLOW_FROM - 1 : SLOW_FROM + 1], ["before", "after"], seed=2)
    finally:
        opened.close()
    return path


class CountingAnalyse:
    """The seam `publish` analyses each stored run through, counting the runs."""

    def __init__(self) -> None:
        self.runs: list[int] = []

    def __call__(self, run: StoredRun) -> RunResult:
        self.runs.append(run.run_id)
        return analyse_run(run)
