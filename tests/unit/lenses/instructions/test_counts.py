"""What one variant's stored callgrind artifacts say once read back (lenses/instructions/counts.py):
dumps that differ only in the process that wrote them, and the same inline frames, read once
per analysis."""

from __future__ import annotations

import json

from perflab.lenses.instructions.counts import DumpsRead
from perflab.measure.callgrind.artifacts import KIND_EMPTY, KIND_INLINE_FRAMES, KIND_STATEMENT
from perflab.records.kinds import Metric
from perflab.records.model import Artifact

SUBJECT = "perflab.lenses.instructions.counts"


def _dump(pid: int, instructions: int) -> str:
    return (
        f"# callgrind format\nversion: 1\ncreator: t\npid: {pid}\ncmd: python -u worker.py\n"
        "positions: line\nevents: Ir\n"
        f"ob=(1) /usr/lib/libpython3.11.so\nfl=(1) a.c\nfn=(1) work\n1 {instructions}\n"
        f"totals: {instructions}\n"
    )


def _artifact(variant: str, kind: str, content: str) -> Artifact:
    return Artifact("b", variant, Metric.INSTRUCTIONS, kind, content)


def test_dumps_that_differ_only_in_their_process_are_read_once() -> None:
    read = DumpsRead()
    a = read.statement(
        [_artifact("A", KIND_STATEMENT, _dump(101, 700))],
        [_artifact("A", KIND_EMPTY, _dump(101, 100))],
    )
    b = read.statement(
        [_artifact("B", KIND_STATEMENT, _dump(202, 700))],
        [_artifact("B", KIND_EMPTY, _dump(202, 100))],
    )
    assert b is a  # another process of the same code: the same parts, parsed once
    costs, _ = a
    (work,) = costs.functions.values()
    assert work.self_cost == (600.0,)  # the statement's loop less the empty loop's
    other = read.statement(
        [_artifact("B", KIND_STATEMENT, _dump(202, 900))],
        [_artifact("B", KIND_EMPTY, _dump(202, 100))],
    )
    assert other is not a and next(iter(other[0].functions.values())).self_cost == (800.0,)


def test_the_same_inline_frames_are_read_once() -> None:
    frames = json.dumps({"/usr/lib/libpython3.11.so": {"0x10": [["inlined", "a.c", 3]]}})
    read = DumpsRead()
    first = read.frames(_artifact("A", KIND_INLINE_FRAMES, frames).content)
    assert read.frames(frames) is first
    assert (
        list(first) == ["/usr/lib/libpython3.11.so"] and 0x10 in first["/usr/lib/libpython3.11.so"]
    )
