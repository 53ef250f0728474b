"""What the callgrind counter's processes hand back (measure/callgrind/workers.py), valgrind
played by `FakeRunner`: a statement's dumps found by their triggers, repeat by repeat; a
command's repeats, and what a run that failed or wrote nothing becomes; a fork server's children
read while the next one counts, from two servers where the first started quickly, else one. The
workers' own switching is tests/unit/measure/callgrind/test_switching.py's."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from perflab.budget.costs import FORK_SERVERS, TWO_SERVERS_MAX_START_S
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.parallel import LiveSet
from perflab.machine.proc import Completed, LaunchSpec
from perflab.measure.callgrind.count_options import CountOptions, CountRun
from perflab.measure.callgrind.switching import StatementPlan
from perflab.measure.callgrind.workers import (
    CountingParts,
    CountJob,
    StatementCounts,
    count_command,
    count_statements,
    digest_statement,
    resolve_program,
    server_groups,
)
from perflab.measure.worker_client import WorkerInfo
from perflab.records.errors import BenchmarkFailedError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Variant
from tests.support.fast_settings import FAST
from tests.support.lens_contexts import BENCH, lens_context

INFO = WorkerInfo(7, "3.11.2", "CPython", "/usr/bin/python3")
NO_FRAMES = CountOptions(Metric.INSTRUCTIONS, inline_frames=False, analysis_cache=False)


def _dump(trigger: str, instructions: int) -> str:
    return (
        "version: 1\ncreator: t\npositions: line\nevents: Ir\n"
        f"desc: Trigger: Client Request: {trigger}\n"
        f"ob=(1) /nonexistent/prog\nfl=(1) a.c\nfn=(1) work\n1 {instructions}\n"
        f"totals: {instructions}\n"
    )


def _run(benchmark: Benchmark = BENCH, runner: FakeRunner | None = None) -> CountRun:
    context, _ = lens_context(runner or FakeRunner(), FAST)
    return CountRun(benchmark, Variant("A"), context, {"PATH": "/nonexistent"}, Metric.INSTRUCTIONS)


def test_a_statement_s_repeats_are_found_by_their_triggers_in_any_order() -> None:
    dumps = {
        "callgrind.out.7.4": _dump("perflab-stmt-1", 700),
        "callgrind.out.7.1": _dump("perflab-empty-0", 100),
        "callgrind.out.7.2": _dump("perflab-stmt-0", 600),
        "callgrind.out.7.3": _dump("perflab-empty-1", 100),
    }
    plan = StatementPlan(loops=10, repeats=2)
    counts = digest_statement(NO_FRAMES, _run(), INFO, plan, dumps)
    assert [(stmt["instructions"], empty["instructions"]) for stmt, empty in counts.totals] == [
        (600.0, 100.0),
        (700.0, 100.0),
    ]
    assert counts.per_iteration_by_repeat() == (50.0, 60.0)
    assert counts.identities == {"/nonexistent/prog": None}  # read in the first process
    later = digest_statement(NO_FRAMES, _run(), INFO, plan, dumps, objects=False)
    assert later.identities == {} and later.totals == counts.totals


def test_a_repeat_callgrind_wrote_no_dump_for_fails_the_variant() -> None:
    dumps = {"callgrind.out.7.1": _dump("perflab-empty-0", 100)}
    with pytest.raises(BenchmarkFailedError, match="callgrind wrote no dump for perflab-stmt-0"):
        digest_statement(NO_FRAMES, _run(), INFO, StatementPlan(loops=10, repeats=1), dumps)


def test_a_dump_that_cannot_be_read_fails_the_variant() -> None:
    dumps = {
        "callgrind.out.7.1": _dump("perflab-empty-0", 100),
        "callgrind.out.7.2": _dump("perflab-stmt-0", 600).replace("1 600", "1 x"),
    }
    with pytest.raises(BenchmarkFailedError, match="cannot read callgrind's output"):
        digest_statement(NO_FRAMES, _run(), INFO, StatementPlan(loops=10, repeats=1), dumps)


def _valgrind(returncode: int = 0, writes: bool = True) -> FakeRunner:
    """valgrind running a command: writes its profile where --callgrind-out-file says."""

    def run(spec: LaunchSpec, _stdin: str | None) -> Completed:
        out = next(a for a in spec.argv if a.startswith("--callgrind-out-file="))
        if writes:
            path = re.sub(r"%p$", "99", out.partition("=")[2])
            Path(path).write_text(_dump("Program termination", 1_000))
        return Completed(spec.argv, returncode, "", "valgrind: the command said no\n", 1)

    return FakeRunner().on_run(r"^valgrind ", run)


def test_a_command_is_counted_once_per_repeat_under_callgrind() -> None:
    runner = _valgrind()
    run = _run(Benchmark("c", cmd="./prog --fast"), runner)
    counts = count_command(
        CountOptions(Metric.INSTRUCTIONS, repeats=3, inline_frames=False), run, cpu=2
    )
    assert len(counts.repeats) == 3 and counts.loops == () and counts.inline is False
    assert all(name == "callgrind.out.99" for ((name, _),) in counts.repeats)
    spec, _ = runner.calls[0]
    assert spec.argv[-2:] == ("./prog", "--fast") and spec.cpu == 2 and spec.disable_aslr


def test_a_command_that_fails_under_callgrind_fails_the_variant() -> None:
    run = _run(Benchmark("c", cmd="./prog"), _valgrind(returncode=1))
    with pytest.raises(BenchmarkFailedError, match="under callgrind") as error:
        count_command(CountOptions(Metric.INSTRUCTIONS, inline_frames=False), run, cpu=None)
    assert error.value.detail is not None and "the command said no" in error.value.detail


def test_a_command_that_left_no_profile_is_no_count_not_zero() -> None:
    run = _run(Benchmark("c", cmd="./prog"), _valgrind(writes=False))
    with pytest.raises(BenchmarkFailedError, match="callgrind wrote no profile"):
        count_command(CountOptions(Metric.INSTRUCTIONS, inline_frames=False), run, cpu=None)


def test_a_program_is_found_by_its_path_or_on_path(tmp_path: Path) -> None:
    program = tmp_path / "prog"
    program.write_text("#!/bin/sh\n")
    os.chmod(program, 0o755)
    assert resolve_program("./prog", str(tmp_path), {}) == os.path.join(tmp_path, "./prog")
    assert resolve_program("prog", None, {"PATH": str(tmp_path)}) == str(program)
    assert resolve_program("prog", None, {"PATH": "/nonexistent"}) is None


class _Child:
    """A fork server's child as the counter holds it (a `StatementWorker`)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.info = WorkerInfo(pid, "3.11.2", "CPython", "/usr/bin/python3")

    def __enter__(self) -> _Child:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def kill(self) -> None:
        pass


class _Servers:
    """A variant's fork servers under callgrind, as `CountingParts.fork_server` starts them: each
    starting in `startup_s` (wall) and `start_cpu_s` (CPU, where the worker says), with no
    threads left by its imports; their children numbered 101, 102 ... across the servers."""

    def __init__(self, startup_s: float = 2.0, start_cpu_s: float | None = None) -> None:
        self.startup_s = startup_s  # valgrind's start and the imports under it: numpy's, say
        self.start_cpu_s = start_cpu_s
        self.started = 0
        self.forked = 0

    def __call__(self, *args: object) -> _Server:
        self.started += 1
        return _Server(self)


class _Server:
    """One fork server (a `ForkServerClient`): client requests reach callgrind, each fork a
    child of its own."""

    import_s = 0.5
    threads = 1

    def __init__(self, servers: _Servers) -> None:
        self.servers = servers
        self.startup_s = servers.startup_s
        self.start_cpu_s = servers.start_cpu_s

    def call(self, ops: object, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"ok": True, "requests": True}

    def worker(self, **kwargs: object) -> _Child:
        self.servers.forked += 1
        return _Child(100 + self.servers.forked)

    def kill(self) -> None:
        pass

    def close(self) -> None:
        pass

    def stderr_tail(self) -> str:
        return ""


def _no_dumps(directory: str, pid: int) -> list[tuple[str, str]]:
    return []


def test_a_child_s_dumps_are_read_while_the_next_child_counts() -> None:
    second_counting = threading.Event()
    read_while_counting: list[bool] = []

    class Session:
        def __init__(self, run: object, worker: _Child, *args: object, **kwargs: object):
            self.worker = worker

        def measure(self, loops: object, repeats: int) -> StatementPlan:
            if self.worker.pid == 102:
                second_counting.set()
            return StatementPlan(loops=10, repeats=repeats)

    def digest(options: object, run: object, info: WorkerInfo, *args: object, **kwargs: object):
        if info.pid == 101:  # the first child's: the second counts meanwhile
            read_while_counting.append(second_counting.wait(timeout=10.0))
        return info.pid

    servers = _Servers()
    parts = CountingParts(
        fork_server=servers,  # type: ignore[arg-type]
        session=Session,  # type: ignore[arg-type]
        read_dumps=_no_dumps,
        digest=digest,
    )
    handed: list[tuple[int, StatementCounts]] = []
    job = CountJob(_run(), (0, 1), fork=True, requests=True, parts=parts)
    workers: LiveSet[Any] = LiveSet(lambda worker: worker.kill())
    count_statements(NO_FRAMES, job, None, workers, lambda p, c: handed.append((p, c)))
    assert read_while_counting == [True]
    # every child's counts handed over, in order, once read
    assert handed == [(0, 101), (1, 102)]  # type: ignore[comparison-overlap]
    assert servers.started == 2 and job.run.counted_with.servers == 2


class _Counted:
    """A child's counted loops (a `CallgrindWorkerSession`), at once."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def measure(self, loops: object, repeats: int) -> StatementPlan:
        return StatementPlan(loops=10, repeats=repeats)


def test_a_server_that_started_slowly_under_valgrind_forks_all_the_variant_s_processes() -> None:
    # `import torch` under valgrind: a second server would cost that start again
    servers = _Servers(startup_s=TWO_SERVERS_MAX_START_S + 4.0)
    job, handed = _forked_pair(servers)
    assert handed == [0, 1] and servers.started == 1
    assert job.run.counted_with.servers == 1 and not job.run.counted_with.server_per_process


def test_a_server_slow_by_the_clock_but_cheap_in_cpu_still_has_a_second_server() -> None:
    # a busy machine stretched a cheap start's wall time: its CPU seconds decide
    servers = _Servers(startup_s=TWO_SERVERS_MAX_START_S + 4.0, start_cpu_s=1.5)
    job, handed = _forked_pair(servers)
    assert sorted(handed) == [0, 1] and servers.started == 2
    assert job.run.counted_with.servers == 2


def _forked_pair(servers: _Servers) -> tuple[CountJob, list[int]]:
    """Two processes of one variant counted as forked children of `servers`; the job and the
    processes handed."""
    parts = CountingParts(
        fork_server=servers,  # type: ignore[arg-type]
        session=_Counted,
        read_dumps=_no_dumps,
        digest=lambda *args, **kwargs: 0,  # type: ignore[arg-type]
    )
    job = CountJob(_run(), (0, 1), fork=True, requests=True, parts=parts)
    workers: LiveSet[Any] = LiveSet(lambda worker: worker.kill())
    handed: list[int] = []
    count_statements(NO_FRAMES, job, None, workers, lambda p, c: handed.append(p))
    return job, handed


def test_a_variant_s_two_processes_are_children_of_two_servers() -> None:
    """Children of one server inherit its heap and agree; two servers of the same code can
    settle apart (1.6% in PyWavelets's time_idwt), so the processes' spread must see them."""
    assert FORK_SERVERS == 2
    assert server_groups((0, 1), own_servers=False) == ((0,), (1,))
    # a server that starts slowly (`fork_servers_for`) forks them all
    assert server_groups((0, 1), own_servers=False, servers=1) == ((0, 1),)


def test_more_processes_are_split_in_contiguous_groups_among_two_servers() -> None:
    assert server_groups((0, 1, 2, 3), own_servers=False) == ((0, 1), (2, 3))
    assert server_groups((0, 1, 2), own_servers=False) == ((0, 1), (2,))


def test_one_process_has_one_server_and_a_server_with_threads_one_per_process() -> None:
    assert server_groups((2,), own_servers=False) == ((2,),)
    assert server_groups((0, 1, 2), own_servers=True) == ((0,), (1,), (2,))
    assert server_groups((), own_servers=False) == ()
