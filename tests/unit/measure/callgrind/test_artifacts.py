"""How a callgrind run's results are stored and read back (measure/callgrind/artifacts.py): its
dumps' parts in order, and valgrind's words when it could not run a variant's code."""

from __future__ import annotations

import json

from perflab.measure.callgrind.artifacts import (
    KIND_COMMAND,
    KIND_UNAVAILABLE,
    parts_of,
    unexecutable_reason,
)
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, BenchmarkData

DUMP = "version: 1\npart: {part}\nevents: Ir\nfn=(1) main\n10 {ir}\ntotals: {ir}\n"


def artifact(kind: str, content: str, variant: str = "A") -> Artifact:
    return Artifact("b", variant, Metric.INSTRUCTIONS, kind, content)


def test_the_parts_of_every_dump_in_order() -> None:
    parts = parts_of(
        [
            artifact(KIND_COMMAND, DUMP.format(part=1, ir=100)),
            artifact(KIND_COMMAND, DUMP.format(part=1, ir=7) + DUMP.format(part=2, ir=5)),
        ]
    )
    assert [(p.number, p.total("Ir")) for p in parts] == [(1, 100.0), (1, 7.0), (2, 5.0)]
    assert parts_of([]) == []


def test_valgrinds_words_where_it_could_not_run_the_variant() -> None:
    said = {"valgrind": "vex amd64->IR: unhandled instruction bytes: 0x62"}
    data = BenchmarkData(
        artifacts=(
            artifact(KIND_UNAVAILABLE, json.dumps(said), variant="avx"),
            artifact(KIND_UNAVAILABLE, json.dumps({}), variant="odd"),
        )
    )
    assert unexecutable_reason(data, "avx") == said["valgrind"]
    assert unexecutable_reason(data, "odd") == "valgrind could not run it"
    assert unexecutable_reason(data, "sse") is None
