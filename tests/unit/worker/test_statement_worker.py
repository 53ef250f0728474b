"""The statement worker's replies to an untimed sample: nothing read or encoded depends on time."""

from __future__ import annotations

import io
import json

import pytest

from perflab.worker import statement_cpu, statement_worker


def _worker_replies(
    requests: list[dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, object]]:
    def timing_dependent() -> None:
        raise AssertionError("an untimed sample read something that depends on time")

    monkeypatch.setattr(statement_cpu, "involuntary_switches", timing_dependent)
    monkeypatch.setattr(statement_cpu, "read_run_queue_ns", timing_dependent)
    monkeypatch.setattr(statement_cpu, "read_thread_time_ns", timing_dependent)
    monkeypatch.setattr(statement_cpu, "current_cpu", timing_dependent)
    replies = io.StringIO()
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    worker = statement_worker.Worker(replies, io.StringIO(lines))
    worker.serve()
    return [json.loads(line) for line in replies.getvalue().splitlines()]


def test_an_untimed_sample_reads_and_encodes_nothing_that_depends_on_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Numbers of varying size (wall times, /proc counters) read and encoded between counted
    samples change what the allocators hold, and with it a torch statement's count per
    process: the instructions lens's samples are untimed, their replies always the same."""
    sample = {"op": "sample", "loops": 3, "empty": False, "handshake": True, "timed": False}
    replies = _worker_replies(
        [
            {"op": "setup", "stmt": "x = sum(range(10))", "setup": "pass", "scope": "module"},
            sample,
            {"op": "go"},
            {"op": "end"},
            {**sample, "loops": 5000},
            {"op": "go"},
            {"op": "end"},
        ],
        monkeypatch,
    )
    first, second = replies[1:4], replies[4:7]
    assert first == second == [
        {"ready": True},
        {"done": True},
        {"ok": True, "wall_ns": 0, "cpu": None, "nivcsw": None, "cpu_ns": None,
         "run_queue_ns": None},
    ]  # fmt: skip
