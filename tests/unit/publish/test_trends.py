"""A published site's trends (`perflab.publish.trends`) read from a store written here: a
step confirmed by its direct comparison, a flat series with none, a series measured on two
machines read per machine, the commits ordered by what the runs say, and one name measured
with two settings kept as two trends."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from perflab.publish.trends import commit_line, read_site
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import Benchmark, Experiment, Sample, Variant
from perflab.records.run_facts import MachineInfo, VariantInfo
from perflab.records.settings import Settings
from perflab.store import SqliteStore

SUBJECT = "perflab.publish.trends"

COMMITS = [f"{i:x}" * 40 for i in range(1, 6)]
BENCH = Benchmark("parse", stmt="pass")


def write(
    store: SqliteStore,
    levels: dict[str, float],
    *,
    machine: str = "ci-1",
    reference_ns: float | None = None,
    names: list[str] | None = None,
    settings: Settings | None = None,
    seed: int = 1,
) -> int:
    """A time run whose variants are the commits of `levels` (in order), each at its level."""
    commits = list(levels)
    names = names or [f"c{c[:8]}" for c in commits]
    experiment = Experiment(
        benchmarks=(BENCH,),
        variants=tuple(Variant(n, git=c) for n, c in zip(names, commits, strict=True)),
        settings=settings or Settings(metrics=(Metric.TIME,)),
    )
    facts: dict[str, object] = {"hostname": machine}
    if reference_ns is not None:  # the reference loop this machine timed
        facts["reference_ns"] = reference_ns
    writer = store.begin_run(experiment, MachineInfo.from_json(facts), "0")
    for name, commit in zip(names, commits, strict=True):
        provenance = {"commit": commit, "subject": f"s {commit[:4]}", "tree": "t", "changes": []}
        writer.add_variant_info(name, VariantInfo.from_json({"provenance": provenance}))
    rng = random.Random(seed)
    for generation in range(4):
        for block in range(2):
            for position, (name, commit) in enumerate(zip(names, commits, strict=True)):
                writer.add_sample(
                    Sample(BENCH.name, name, Metric.TIME, "wall_ns",
                           levels[commit] * rng.uniform(0.998, 1.002), loops=1000,
                           generation=generation, block=block, position=position,
                           at_ns=(generation * 2 + block) * 10**7)
                )  # fmt: skip
    writer.finish(RunStatus.COMPLETE)
    return writer.run_id


def stored(tmp_path: Path, *runs: dict[str, Any]) -> Path:
    path = tmp_path / "p.db"
    store = SqliteStore.open(path)
    try:
        for run in runs:
            write(store, **run)
    finally:
        store.close()
    return path


def test_a_step_is_one_change_point_confirmed_by_the_direct_comparison(tmp_path: Path) -> None:
    levels = {c: (1.0e6 if i < 3 else 1.3e6) for i, c in enumerate(COMMITS)}
    pair = {COMMITS[2]: 1.0e6, COMMITS[3]: 1.3e6}
    path = stored(tmp_path, {"levels": levels}, {"levels": pair, "names": ["before", "after"]})
    site = read_site(path)
    [trend] = site.trends
    assert trend.benchmark == "parse" and trend.metric is Metric.TIME
    assert [p.commit for p in trend.history.points] == COMMITS
    [change] = trend.history.changes
    assert (change.before.commit, change.after.commit) == (COMMITS[2], COMMITS[3])
    assert change.confirmed and change.run_id == 2
    assert change.ratio is not None and 1.25 < change.ratio < 1.35
    assert [s.change for s in site.recent] == [change] and site.unconfirmed == 0
    assert trend.machines == ("ci-1",)
    assert trend.key.startswith("parse-time-")


def test_a_step_no_run_compared_directly_is_found_but_not_confirmed(tmp_path: Path) -> None:
    levels = {c: (1.0e6 if i < 3 else 1.3e6) for i, c in enumerate(COMMITS)}
    site = read_site(stored(tmp_path, {"levels": levels}))
    [change] = site.trends[0].history.changes
    assert not change.confirmed and change.run_id is None
    assert site.recent == () and site.unconfirmed == 1


def test_a_flat_series_has_no_change_point(tmp_path: Path) -> None:
    site = read_site(stored(tmp_path, {"levels": dict.fromkeys(COMMITS, 1.0e6)}))
    [trend] = site.trends
    assert len(trend.history.points) == len(COMMITS)
    assert trend.history.changes == () and site.recent == () and site.unconfirmed == 0


def test_a_series_measured_on_two_machines_is_read_per_machine(tmp_path: Path) -> None:
    # the same code, the second machine twice as slow: with the reference loop each timed,
    # the move to it is no change of the code
    first = {"levels": dict.fromkeys(COMMITS[:3], 1.0e6), "machine": "fast", "reference_ns": 50.0}
    second = {
        "levels": dict.fromkeys(COMMITS[2:], 2.0e6), "machine": "slow", "reference_ns": 100.0,
        "seed": 2,
    }  # fmt: skip
    site = read_site(stored(tmp_path, first, second))
    [trend] = site.trends
    assert trend.machines == ("fast", "slow")
    assert [p.node for p in trend.history.points] == ["fast", "fast", "slow", "slow", "slow"]
    assert trend.history.changes == ()
    assert "normalised to the newest point's node (slow)" in trend.history.notes[0]


def test_two_machines_without_a_reference_keep_their_level_change_unconfirmed(
    tmp_path: Path,
) -> None:
    first = {"levels": dict.fromkeys(COMMITS[:3], 1.0e6), "machine": "fast"}
    second = {"levels": dict.fromkeys(COMMITS[2:], 2.0e6), "machine": "slow", "seed": 2}
    site = read_site(stored(tmp_path, first, second))
    [trend] = site.trends
    assert (
        "a level change between points of different nodes may be the machine"
        in (trend.history.notes[0])
    )
    # the step lies where the machine changed; no run compared its two commits on one machine
    [change] = trend.history.changes
    assert change.after.node == "slow" and change.before.node == "fast"
    assert not change.confirmed and site.unconfirmed == 1


def test_one_benchmark_under_two_settings_is_two_trends_named_apart(tmp_path: Path) -> None:
    levels = dict.fromkeys(COMMITS[:2], 1.0e6)
    other = Settings(metrics=(Metric.TIME,), confidence=0.99)
    site = read_site(stored(tmp_path, {"levels": levels}, {"levels": levels, "settings": other}))
    assert sorted(t.benchmark for t in site.trends) == ["parse", "parse (settings 2)"]
    assert len({t.key for t in site.trends}) == 2


def test_commits_follow_each_run_s_order_and_a_cycle_goes_to_the_first_measured(
    tmp_path: Path,
) -> None:
    a, b, c = COMMITS[:3]
    path = stored(
        tmp_path,
        {"levels": {a: 1.0, c: 1.0}},
        {"levels": {b: 1.0, c: 1.0}, "seed": 2},
        {"levels": {a: 1.0, b: 1.0}, "seed": 3},
        {"levels": {c: 1.0, a: 1.0}, "seed": 4},  # says c comes before a
    )
    store = SqliteStore.open(path)
    try:
        runs = store.runs_of_code()
    finally:
        store.close()
    by_id = sorted(runs, key=lambda r: r.run_id)
    # c was seen before b, but a run says b comes before c
    assert [x.commit for x in commit_line(by_id[:3])] == [a, b, c]
    # runs that contradict each other: the commit the store measured first goes first
    assert [x.commit for x in commit_line([by_id[0], by_id[3]])] == [a, c]
    assert [x.commit for x in commit_line([by_id[3], by_id[0]])] == [c, a]
    assert [x.commit for x in commit_line(by_id)] == [a, b, c]


def test_a_threshold_must_be_above_zero(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="threshold"):
        read_site(tmp_path / "unused.db", threshold=0)


def test_two_runs_of_one_machine_are_levelled_through_the_commit_they_share(
    tmp_path: Path,
) -> None:
    # the second run (at a higher load: 8% slower) measured the first's last commit again,
    # and the code of its last commit is 5% slower
    first = {"levels": dict.fromkeys(COMMITS[:3], 1.0e6)}
    later = {COMMITS[2]: 1.08e6, COMMITS[3]: 1.08e6, COMMITS[4]: 1.08e6 * 1.05}
    site = read_site(stored(tmp_path, first, {"levels": later, "seed": 2}))
    [trend] = site.trends
    [change] = trend.history.changes
    assert change.after.commit == COMMITS[4]
    [scale] = trend.history.run_scales
    assert (scale.run_id, scale.against_run, scale.shared_commit) == (2, 1, COMMITS[2])
    assert 0.92 < scale.scale < 0.93
    assert any("through the commits consecutive runs share" in n for n in trend.history.notes)
