"""The track lens's worker op, run here as the worker runs it: the statement's value as a
number, the set-up's unit, and what is not a number named by its type."""

from __future__ import annotations

from typing import Any

from perflab.lenses.track.worker_ops import OPS, track_value


class _Worker:
    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace

    def traceback(self) -> str:
        return "Traceback: raised"


def test_the_value_and_unit_are_read_from_the_setups_namespace() -> None:
    worker = _Worker({"items": [1, 2, 3], "track_unit": "items"})
    reply = track_value(worker, {"expr": "len(items)"})
    assert reply == {"ok": True, "value": 3.0, "type": "int", "unit": "items"}
    assert OPS == {"track_value": track_value}


def test_a_bool_or_a_text_is_not_a_number() -> None:
    assert track_value(_Worker({}), {"expr": "True"})["value"] is None
    assert track_value(_Worker({}), {"expr": "'x'"})["type"] == "str"


def test_a_statement_that_raises_fails_in_its_phase() -> None:
    reply = track_value(_Worker({}), {"expr": "1 / 0"})
    assert reply == {"ok": False, "phase": "stmt", "error": "Traceback: raised"}
