"""A lens session's generations of workers, started under a wrap and released after closing."""

from __future__ import annotations

import pytest

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.session import LensSession, WorkerWrap
from perflab.records.errors import ConfigError
from tests.support.clocks import FakeClock
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context, loop_ns
from tests.support.scripted_worker import ScriptedWorker

SUBJECT = "perflab.measure.session"


def test_a_session_starts_every_worker_under_its_wrap_and_releases_it_after_closing() -> None:
    worker = ScriptedWorker(loop_ns)
    runner = FakeRunner().on_spawn("statement_worker", worker)
    context, _ = lens_context(runner, FAST)
    session = LensSession(BENCH, context, FakeClock(), schedule="counters")
    events: list[str] = []

    def wrap(index: int) -> WorkerWrap:
        events.append(f"wrap {index}")
        return WorkerWrap(
            argv_prefix=("perf", "stat", f"-o{index}", "--"),
            pass_fds=(100 + index,),
            after_spawn=lambda: events.append(f"spawned {index}"),
            release=lambda: events.append(f"release {index}"),
        )

    with session.generation(wrap=wrap) as workers:
        assert [w.process.spec.argv[:4] for w in workers] == [
            ("perf", "stat", "-o0", "--"),
            ("perf", "stat", "-o1", "--"),
        ]
        assert not any(e.startswith("release") for e in events)
    assert all(p.returncode == 0 for p in runner.spawned)  # closed, then released
    launched = [int(e.split()[1]) for e in events if e.startswith("wrap")]
    assert sorted(launched) == [0, 1]
    assert events[:4] == [f"{what} {i}" for i in launched for what in ("wrap", "spawned")]
    assert sorted(events[4:]) == ["release 0", "release 1"]


def test_a_session_kills_and_releases_every_wrapped_worker_when_one_cannot_start() -> None:
    def missing(spec: LaunchSpec) -> FakeProcess:
        raise FileNotFoundError(spec.argv[0])

    runner = FakeRunner().on_spawn("^/no/such/tool", missing)
    runner.on_spawn("statement_worker", ScriptedWorker(loop_ns))
    context, _ = lens_context(runner, FAST)
    session = LensSession(BENCH, context, FakeClock())
    wrapped: list[int] = []
    released: list[int] = []

    def wrap(index: int) -> WorkerWrap:
        wrapped.append(index)
        prefix = ("/no/such/tool",) if len(wrapped) == 2 else ()  # the second launch fails
        return WorkerWrap(prefix, release=lambda: released.append(index))

    with pytest.raises(ConfigError):
        with session.generation(wrap=wrap):
            pass
    assert len(runner.spawned) == 1 and runner.spawned[0].returncode is not None  # killed
    assert sorted(released) == [0, 1]
