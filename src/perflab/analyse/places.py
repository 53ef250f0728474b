"""Where each cell was measured, and what may be compared across places.

A comparison is made within one cell, on one node, so its ratio is honest wherever the cell ran.
Absolute values are not: a history whose points come from different nodes (a cluster's cells,
or a team store's runs from several CI machines) says so, and normalises times per node only
where each node timed the same reference loop (`--ray` cells do, before measuring); otherwise
it shows the values as measured, with the note.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from perflab.lenses.registry import wall_time_metrics
from perflab.records.errors import StoreError
from perflab.records.kinds import ArtifactScope, Metric
from perflab.records.run_facts import MachineInfo
from perflab.records.workflow_results import HistoryPoint
from perflab.store import StoredRun, StoreLocation, open_store

CELL_KIND = "cluster-cell"


@dataclass(frozen=True)
class Place:
    """A node that measured cells: its machine, its Ray node when it was one, and its time for
    the reference loop when it timed one."""

    hostname: str
    cpu_model: str
    node_id: str = ""
    reference_ns: float | None = None

    @property
    def machine(self) -> str:
        return f"{self.hostname} ({self.cpu_model})" if self.cpu_model else self.hostname

    @property
    def node(self) -> tuple[str, str, str]:
        """What tells two nodes apart (a Ray node's id; a machine's name where there is none)."""
        return (self.hostname, self.cpu_model, self.node_id)

    @property
    def label(self) -> str:
        return f"{self.hostname} node {self.node_id[:8]}" if self.node_id else self.hostname


def cell_place(facts: Mapping[str, Any]) -> Place:
    """A place from a cell's facts (the cluster artifact's content: its node and machine)."""
    reference = facts.get("reference_ns")
    return Place(
        hostname=str(facts.get("hostname") or facts.get("node_ip") or "unknown"),
        cpu_model=str(facts.get("cpu_model") or ""),
        node_id=str(facts.get("node_id") or ""),
        reference_ns=float(reference) if isinstance(reference, int | float) else None,
    )


def machine_place(machine: MachineInfo) -> Place:
    """A place from a run's machine facts (no Ray node)."""
    return Place(
        hostname=machine.hostname or "unknown",
        cpu_model=machine.cpu_model or "",
        reference_ns=machine.reference_ns,
    )


def run_places(run: StoredRun) -> dict[str, Place]:
    """Each benchmark of the run -> where it was measured: its cell's last attempt on a
    cluster (an abandoned attempt is filed under another name), else the run's machine."""
    places = {b.name: machine_place(run.machine) for b in run.experiment.benchmarks}
    for artifact in run.artifacts:
        if artifact.metric == ArtifactScope.CLUSTER and artifact.benchmark in places:
            places[artifact.benchmark] = cell_place(json.loads(artifact.content))
    return places


def places_note(places: Sequence[Place], what: str) -> str | None:
    """ "the 4 cells were measured on 2 nodes of 2 machine(s) (...)", or None for one node."""
    nodes = {p.node: p for p in places}
    if len(nodes) < 2:
        return None
    machines = sorted({p.machine for p in nodes.values()})
    return (
        f"the {len(places)} {what} were measured on {len(nodes)} nodes of {len(machines)} "
        f"machine(s) ({'; '.join(machines)})"
    )


@dataclass(frozen=True)
class PlacedValues:
    """A series' values as compared along it: per node normalised by the reference loop where
    every node timed it, else as measured; and the note saying which."""

    values: tuple[float | None, ...]
    normalised: bool
    note: str | None


def normalise_per_node(
    values: Sequence[float | None], places: Sequence[Place | None], *, times: bool
) -> PlacedValues:
    """Values of one node are left alone. Times from several nodes that all timed the
    reference loop are scaled to the speed of the newest point's node (value x reference
    there / reference here, one median reference per node, so points of one node keep their
    ratios); counts (`times` False) and nodes without a reference are shown as measured."""
    valued = [(v, p) for v, p in zip(values, places, strict=True) if v is not None]
    note = places_note([p for _, p in valued if p is not None], "points")
    if note is None:
        return PlacedValues(tuple(values), normalised=False, note=None)
    references = _node_references([p for _, p in valued if p is not None])
    if not times or len(valued) != sum(p is not None for _, p in valued) or references is None:
        why = (
            "counts do not depend on a node's speed, so they are shown as measured (they "
            "differ only where the nodes run different code)"
            if not times
            else "not every node timed the reference loop, so times are shown as measured: "
            "a level change between points of different nodes may be the machine (each change "
            "point is confirmed by a direct comparison on one node)"
        )
        return PlacedValues(tuple(values), normalised=False, note=f"{note}; {why}")
    anchor = valued[-1][1]
    assert anchor is not None
    scaled = tuple(
        None if v is None or p is None else v * references[anchor.node] / references[p.node]
        for v, p in zip(values, places, strict=True)
    )
    labelled = {p.label: references[p.node] for _, p in valued if p is not None}
    factors = ", ".join(
        f"{label} x{references[anchor.node] / reference:.3f}"
        for label, reference in sorted(labelled.items())
    )
    return PlacedValues(
        scaled,
        normalised=True,
        note=f"{note}; times are normalised to the newest point's node ({anchor.label}) by a "
        f"reference loop each node timed ({factors}): an estimate, exact only for work that "
        "scales like that pure-Python loop; the values as measured are kept beside them",
    )


def _node_references(places: Sequence[Place]) -> dict[tuple[str, str, str], float] | None:
    """One reference per node (the median of its cells'), or None where a node has none."""
    timed: dict[tuple[str, str, str], list[float]] = {}
    for place in places:
        if place.reference_ns is None or place.reference_ns <= 0:
            return None
        timed.setdefault(place.node, []).append(place.reference_ns)
    return {node: statistics.median(found) for node, found in timed.items()}


def placed_history_points(
    points: Sequence[HistoryPoint], store: StoreLocation | None, metric: Metric
) -> tuple[tuple[HistoryPoint, ...], str | None]:
    """The history's points with the node each was measured on (read from its run in the
    store) and, across nodes, the normalised value; the note saying so (None: one node)."""
    run_ids = sorted({p.run_id for p in points if p.run_id is not None and p.value is not None})
    if store is None or not run_ids:
        return tuple(points), None
    try:
        opened = open_store(store, create=False)
        try:
            where = {
                run_id: first_place(opened.load_run(run_id, metrics=(ArtifactScope.CLUSTER,)))
                for run_id in run_ids
            }
        finally:
            opened.close()
    except StoreError as error:
        return tuple(points), (
            f"where the points were measured is not known (their runs cannot be read: "
            f"{error.message}): values of different machines may be compared"
        )
    return placed_points(points, where, metric)


def placed_points(
    points: Sequence[HistoryPoint], where: Mapping[int, Place], metric: Metric
) -> tuple[tuple[HistoryPoint, ...], str | None]:
    """As `placed_history_points`, with the place of each run already read (`where`)."""
    places = [where.get(p.run_id) if p.run_id is not None else None for p in points]
    placed = normalise_per_node(
        [p.value for p in points], places, times=metric in wall_time_metrics()
    )
    if placed.note is None:
        return tuple(points), None
    return tuple(
        replace(
            point,
            node=place.label if place is not None and point.value is not None else "",
            normalised_value=value if placed.normalised else None,
        )
        for point, place, value in zip(points, places, placed.values, strict=True)
    ), placed.note


def first_place(run: StoredRun) -> Place:
    """Where a history's run measured its one benchmark."""
    places = run_places(run)
    return next(iter(places.values())) if places else machine_place(run.machine)
