"""`perflab.plan.bisect_search.Direction`, the path the Python API's docs once gave, still
imports the one `Direction` bisect takes."""

from __future__ import annotations

from perflab.plan.bisect_search import Direction as documented_before
from perflab.records.bisect import Direction

SUBJECT = "perflab.plan.bisect_search"


def test_the_old_documented_path_names_the_same_direction() -> None:
    assert documented_before is Direction
    assert documented_before("faster") is Direction.FASTER
