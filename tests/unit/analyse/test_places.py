"""Where a run's cells were measured (the cluster artifacts), and a history across nodes:
said in a note, normalised per node only where every node timed the reference loop."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from perflab import api
from perflab.analyse.places import (
    CELL_KIND,
    Place,
    normalise_per_node,
    placed_history_points,
    run_places,
)
from perflab.records.kinds import ArtifactScope, Metric
from perflab.records.model import Artifact, Sample
from perflab.records.run_facts import MachineInfo
from perflab.records.workflow_results import HistoryPoint, HistoryResult
from perflab.report.workflow_formats import history_html, render_history
from perflab.store import SqliteStore

FAST_NODE = Place("alpha", "EPYC", node_id="a" * 40, reference_ns=10_000_000.0)
SLOW_NODE = Place("beta", "Xeon", node_id="b" * 40, reference_ns=20_000_000.0)
UNTIMED = Place("gamma", "Xeon")


def test_one_node_is_left_alone_and_says_nothing() -> None:
    placed = normalise_per_node([1.0, 2.0, None], [FAST_NODE, FAST_NODE, None], times=True)
    assert placed.values == (1.0, 2.0, None) and not placed.normalised and placed.note is None


def test_times_of_nodes_that_timed_the_reference_are_scaled_to_the_newest_points_node() -> None:
    placed = normalise_per_node(
        [40.0, 44.0, 10.0, None], [SLOW_NODE, SLOW_NODE, FAST_NODE, None], times=True
    )
    assert placed.normalised
    # the slow node is twice the fast one's reference: its times halve, their ratio is kept
    assert placed.values == (20.0, 22.0, 10.0, None)
    assert placed.note is not None
    assert "3 points were measured on 2 nodes of 2 machine(s)" in placed.note
    assert "normalised to the newest point's node (alpha node aaaaaaaa)" in placed.note


def test_without_a_reference_on_every_node_values_are_shown_as_measured() -> None:
    placed = normalise_per_node([40.0, 10.0], [UNTIMED, FAST_NODE], times=True)
    assert placed.values == (40.0, 10.0) and not placed.normalised
    assert placed.note is not None and "shown as measured" in placed.note
    counted = normalise_per_node([40.0, 10.0], [SLOW_NODE, FAST_NODE], times=False)
    assert counted.values == (40.0, 10.0) and not counted.normalised
    assert counted.note is not None and "counts do not depend on a node's speed" in counted.note


def _stored_run(store: SqliteStore, benchmark_node: dict[str, Place | None]) -> int:
    """A run whose benchmarks' cells were measured where `benchmark_node` says (None: no
    cluster artifact, the run's own machine), as the cluster driver stores them."""
    names = list(benchmark_node)
    experiment = api.make_experiment(
        stmt="sum(range($n))", params={"n": [name for name in names]}, variants=["A", "B"]
    )
    writer = store.begin_run(experiment, MachineInfo(hostname="driver", cpu_model="Ryzen"), "test")
    for benchmark, place in zip(experiment.benchmarks, benchmark_node.values(), strict=True):
        if place is None:
            continue
        content = {
            "node_id": place.node_id,
            "hostname": place.hostname,
            "cpu_model": place.cpu_model,
            "reference_ns": place.reference_ns,
        }
        writer.add_artifact(
            Artifact(benchmark.name, "A", ArtifactScope.CLUSTER, CELL_KIND, json.dumps(content), 1)
        )
    return writer.run_id


def test_a_runs_cells_are_placed_by_their_cluster_artifacts(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    run_id = _stored_run(store, {"1": FAST_NODE, "2": SLOW_NODE, "3": None})
    places = list(run_places(store.load_run(run_id)).values())
    assert [p.label for p in places] == ["alpha node aaaaaaaa", "beta node bbbbbbbb", "driver"]
    assert places[1].reference_ns == SLOW_NODE.reference_ns and places[2].reference_ns is None
    store.close()


def test_a_history_across_nodes_names_them_and_compares_normalised_times(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    slow = _stored_run(store, {"1": SLOW_NODE})
    fast = _stored_run(store, {"1": FAST_NODE})
    store.close()
    points = [
        HistoryPoint("c1", "one", "t1", 400.0, "ns", slow, reused=True),
        HistoryPoint("c2", "two", "t2", 100.0, "ns", fast),
        HistoryPoint("c3", "three", "t3", skipped="build failed"),
    ]
    placed, note = placed_history_points(points, tmp_path / "s.db", Metric.TIME)
    assert note is not None and "2 nodes of 2 machine(s)" in note
    assert [p.node for p in placed] == ["beta node bbbbbbbb", "alpha node aaaaaaaa", ""]
    assert [p.normalised_value for p in placed] == [200.0, 100.0, None]
    assert [p.value for p in placed] == [400.0, 100.0, None]  # as measured, kept
    assert placed[0].to_json()["node"] == "beta node bbbbbbbb"
    assert placed[0].to_json()["normalised_value"] == 200.0
    result = HistoryResult(
        range_text="c1..c3",
        metric=Metric.TIME,
        threshold=0.02,
        points=placed,
        changes=(),
        measured_now=1,
        seconds=1.0,
        notes=(note,),
    )
    console = Console(record=True, width=200)
    render_history(result, console)
    text = console.export_text()
    assert "as measured" in text and "beta node bbbbbbbb" in text and "2 nodes" in text
    assert "2 nodes of 2 machine(s)" in history_html(result, change_links={})


def test_a_history_on_one_node_is_unchanged(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    first = _stored_run(store, {"1": None})
    second = _stored_run(store, {"1": None})
    store.close()
    points = [
        HistoryPoint("c1", "one", "t1", 400.0, "ns", first),
        HistoryPoint("c2", "two", "t2", 100.0, "ns", second),
    ]
    placed, note = placed_history_points(points, tmp_path / "s.db", Metric.TIME)
    assert note is None and tuple(placed) == tuple(points)


def test_a_run_read_for_its_places_leaves_the_other_metrics_out(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    run_id = _stored_run(store, {"1": FAST_NODE})
    run = store.load_run(run_id)
    writer = store.begin_run(run.experiment, run.machine, "test")
    benchmark = run.experiment.benchmarks[0].name
    writer.add_artifact(Artifact(benchmark, "A", Metric.PROFILE, "folded", "a;b 1"))
    writer.add_artifact(Artifact(benchmark, "A", ArtifactScope.CLUSTER, CELL_KIND, "{}"))
    writer.add_sample(Sample(benchmark, "A", Metric.TIME, "wall_ns", 1.0))
    read = store.load_run(writer.run_id, metrics=(ArtifactScope.CLUSTER,))
    assert [a.metric for a in read.artifacts] == [ArtifactScope.CLUSTER] and read.samples == ()
    assert store.load_run(writer.run_id, metrics=()).artifacts == ()
    whole = store.load_run(writer.run_id)
    assert len(whole.artifacts) == 2 and len(whole.samples) == 1
    store.close()
