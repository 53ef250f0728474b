"""The parent's side of the statement worker protocol (measure/worker_client.py), against
workers in memory: the requests it sends and in what order, what each reply becomes, and what a
worker that fails, falls silent, dies or is no worker at all becomes (an error, the worker
killed or asked to quit)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import LaunchSpec
from perflab.measure.worker_client import (
    StatementWorker,
    WorkerLaunch,
    WorkerOps,
    check_interpreter,
    check_variant_paths,
    count_stopped_at_quit,
    ops_name,
    variant_environment,
)
from perflab.records.errors import BenchmarkFailedError, ConfigError
from perflab.records.model import Benchmark, Variant
from perflab.worker import STATEMENT_WORKER_PATH
from tests.support.scripted_worker import ScriptedWorker

BENCH = Benchmark(name="b", stmt="f()", setup="import m")
VARIANT = Variant("B", env={"FAST": "1"})
LAUNCH = WorkerLaunch("/usr/bin/python3", cpu=3, timeout_s=5.0)
HELLO = json.dumps({"hello": "perflab-worker", "protocol": 1})


def _started(worker: ScriptedWorker, launch: WorkerLaunch = LAUNCH) -> StatementWorker:
    runner = FakeRunner().on_spawn("statement_worker", worker)
    return StatementWorker.start(runner, BENCH, VARIANT, launch)


def _ops(worker: ScriptedWorker) -> list[str]:
    return [str(request["op"]) for _, request in worker.requests]


def _process(replies: dict[str, list[str]], greeting: tuple[str, ...] = (HELLO,)) -> FakeProcess:
    """A worker answering each op with its scripted lines (nothing for an op not listed)."""

    def answer(line: str) -> Iterator[str]:
        yield from replies.get(str(json.loads(line).get("op")), [])

    return FakeProcess(LaunchSpec(argv=("python",)), answer, greeting=greeting)


def _ok_setup() -> dict[str, list[str]]:
    setup = {"ok": True, "pid": 7, "python": "3.12.1", "implementation": "CPython",
             "executable": "/usr/bin/python3"}  # fmt: skip
    return {"setup": [json.dumps(setup)], "check": [json.dumps({"ok": True})]}


def test_a_worker_starts_under_its_launch_and_is_set_up_before_it_samples() -> None:
    worker = ScriptedWorker(ns_per_loop=lambda spec: 100.0, python="3.12.1")
    launch = WorkerLaunch(sys.executable, cpu=3, timeout_s=5.0, prefix=("perf", "stat", "--"),
                          extra_env={"PYTHONHASHSEED": "0"})  # fmt: skip
    runner = FakeRunner().on_spawn("statement_worker", worker)
    with StatementWorker.start(runner, BENCH, VARIANT, launch) as started:
        assert started.info.python_version == "3.12.1" and started.pid == 1001
        assert started.info.device_synchronised is None
    (process,) = runner.spawned
    worker_script = str(STATEMENT_WORKER_PATH)
    assert process.spec.argv == ("perf", "stat", "--", sys.executable, "-u", worker_script)
    assert process.spec.env["FAST"] == "1" and process.spec.env["PYTHONHASHSEED"] == "0"
    assert process.spec.cpu == 3
    assert _ops(worker) == ["setup", "check", "quit"]
    setup = worker.requests[0][1]
    assert (setup["stmt"], setup["setup"], setup["scope"]) == ("f()", "import m", "function")


def test_a_sample_reports_its_time_cpu_and_interruptions() -> None:
    worker = ScriptedWorker(ns_per_loop=lambda spec: 100.0, cpu=2, lost_share=0.25)
    with _started(worker) as started:
        assert started.calibrate(10_000) == 100
        sample = started.sample(40)
    assert (sample.wall_ns, sample.cpu, sample.involuntary_switches) == (4000, 2, 0)
    assert (sample.run_queue_ns, sample.cpu_ns) == (1000, 3000)


def test_the_region_callbacks_run_around_the_loop_between_ready_and_done() -> None:
    worker = ScriptedWorker(ns_per_loop=lambda spec: 100.0)
    events: list[str] = []
    with _started(worker) as started:
        sample = started.sample(
            10,
            on_region_start=lambda: events.append(f"start after {_ops(worker)[-1]}"),
            on_region_end=lambda: events.append(f"end after {_ops(worker)[-1]}"),
        )
    assert events == ["start after sample", "end after go"]
    assert _ops(worker)[2:5] == ["sample", "go", "end"] and sample.wall_ns == 1000
    assert worker.requests[2][1]["handshake"] is True


def test_an_untimed_sample_asks_the_worker_to_read_no_clock() -> None:
    worker = ScriptedWorker(ns_per_loop=lambda spec: 100.0)
    with _started(worker) as started:
        started.sample(10)
        started.sample(10, timed=False)
    timed, untimed = (r for _, r in worker.requests if r["op"] == "sample")
    assert "timed" not in timed and untimed["timed"] is False


def test_a_failed_setup_is_the_benchmarks_error_and_the_idle_worker_is_asked_to_quit() -> None:
    worker = ScriptedWorker(ns_per_loop=lambda spec: 100.0, fail_setup="ImportError: m")
    runner = FakeRunner().on_spawn("statement_worker", worker)
    with pytest.raises(BenchmarkFailedError, match="the setup raised") as failed:
        StatementWorker.start(runner, BENCH, VARIANT, LAUNCH)
    assert failed.value.detail == "ImportError: m"
    assert _ops(worker) == ["setup", "quit"]  # not killed: it stops what its set-up started
    assert runner.spawned[0].returncode == 0


def test_a_process_that_greets_otherwise_is_no_worker_and_is_killed() -> None:
    process = _process({}, greeting=(json.dumps({"hello": "someone else"}),))
    with pytest.raises(ConfigError, match="did not start perflab's worker"):
        StatementWorker(process, BENCH, VARIANT, LAUNCH)
    assert process.returncode == -9 and process.written == []


def test_a_line_outside_the_protocol_kills_the_worker() -> None:
    process = _process({**_ok_setup(), "sample": ["Segmentation fault? no: a print"]})
    worker = StatementWorker(process, BENCH, VARIANT, LAUNCH)
    with pytest.raises(BenchmarkFailedError, match="something other than perflab's protocol"):
        worker.sample(10)
    assert process.returncode == -9


def test_a_worker_silent_past_its_timeout_is_killed() -> None:
    process = _process(_ok_setup())  # never answers a sample
    worker = StatementWorker(process, BENCH, VARIANT, WorkerLaunch("py", None, timeout_s=0.05))
    with pytest.raises(BenchmarkFailedError, match=r"did not answer within 0\.05 s"):
        worker.sample(10)
    assert process.returncode == -9


def test_a_worker_that_exits_mid_request_says_how_it_ended() -> None:
    process = _process(_ok_setup())
    worker = StatementWorker(process, BENCH, VARIANT, LAUNCH)
    process.returncode = -11  # the statement crashed the interpreter
    with pytest.raises(BenchmarkFailedError, match=r"killed by signal 11 \(SIGSEGV\)"):
        worker.call({"op": "sample", "loops": 1})


def test_a_failed_reply_names_the_phase_that_failed() -> None:
    failed = json.dumps({"ok": False, "phase": "stmt", "error": "ZeroDivisionError\n"})
    process = _process({**_ok_setup(), "sample": [failed]})
    worker = StatementWorker(process, BENCH, VARIANT, LAUNCH)
    with pytest.raises(BenchmarkFailedError, match="the statement raised") as raised:
        worker.sample(1)
    assert raised.value.detail == "ZeroDivisionError"


def test_ops_are_named_by_their_lens_or_what_a_shared_module_measures() -> None:
    assert ops_name("perflab.lenses.torch.worker_ops") == "torch"
    # the two modules several lenses share are not both "worker"
    assert ops_name("perflab.worker.peak_memory_ops") == "peak_memory"
    assert ops_name("perflab.worker.callgrind_ops") == "callgrind"
    assert WorkerOps.from_module("perflab.worker.callgrind_ops").name == "callgrind"


def test_a_lens_whose_ops_do_not_run_in_the_interpreter_fails_the_start() -> None:
    refused = json.dumps({"ok": False, "error": "SyntaxError: f-string\n"})
    process = _process({"register": [refused], **_ok_setup()})
    ops = WorkerOps(name="torch", source="OPS = {}")
    with pytest.raises(BenchmarkFailedError, match="the torch worker ops do not run"):
        StatementWorker(process, BENCH, VARIANT, LAUNCH, ops=(ops,))
    registered = json.loads(process.written[0])
    assert (registered["op"], registered["name"], registered["source"]) == (
        "register", "torch", "OPS = {}",
    )  # fmt: skip


def test_close_counts_what_the_benchmark_left_and_happens_once() -> None:
    quit_reply = json.dumps({"ok": True, "left": 2})
    process = _process({**_ok_setup(), "quit": ["not json", quit_reply]})
    process.exit_on = lambda line: 0 if json.loads(line)["op"] == "quit" else None
    worker = StatementWorker(process, BENCH, VARIANT, LAUNCH)
    assert worker.close() == 0
    assert worker.leftover_processes == 2
    assert worker.close() == 0 and process.written.count(json.dumps({"op": "quit"})) == 1


def test_an_interrupt_kills_the_worker_instead_of_waiting_for_it() -> None:
    process = _process(_ok_setup())
    worker = StatementWorker(process, BENCH, VARIANT, LAUNCH)
    worker.abandon(KeyboardInterrupt())
    assert process.returncode == -9 and json.dumps({"op": "quit"}) not in process.written


def test_an_interpreter_that_cannot_be_started_is_a_configuration_error() -> None:
    def missing(spec: LaunchSpec) -> FakeProcess:
        raise FileNotFoundError(2, "No such file or directory")

    runner = FakeRunner().on_spawn("statement_worker", missing)
    with pytest.raises(ConfigError, match="cannot start 'python9': No such file") as refused:
        StatementWorker.start(runner, BENCH, VARIANT, WorkerLaunch("python9", None, 5.0))
    assert refused.value.variant == "B" and refused.value.benchmark == "b"


def test_the_quit_reply_is_found_among_other_lines() -> None:
    lines = ["noise", json.dumps({"note": 1}), json.dumps({"left": 3})]
    process = _process({"quit": lines}, greeting=())
    process.write_line(json.dumps({"op": "quit"}))
    assert count_stopped_at_quit(process, timeout_s=1.0) == 3


def test_a_variant_runs_in_the_base_environment_plus_its_own() -> None:
    env = variant_environment(VARIANT, base={"PATH": "/bin", "FAST": "0"})
    assert env == {"PATH": "/bin", "FAST": "1"}


def test_a_missing_directory_or_a_non_executable_interpreter_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        check_variant_paths(Variant("A", cwd=str(tmp_path / "gone")), None)
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(ConfigError, match="is not executable"):
        check_variant_paths(Variant("A", cwd=str(tmp_path)), "./python")
    check_variant_paths(Variant("A", cwd=str(tmp_path)), "python3")  # a name: found on PATH


@pytest.mark.parametrize(
    ("stdout", "returncode", "why"),
    [
        ("perflab-python 3.6.9\n", 0, "it is Python 3.6.9, older than 3.7"),
        ("hello\n", 0, "it did not answer as Python does"),
        ("", 127, "asked for its version, it"),
    ],
)
def test_an_interpreter_that_is_not_python_3_7_is_refused_before_the_run(
    stdout: str, returncode: int, why: str
) -> None:
    runner = FakeRunner().on_run(r"perflab-python", stdout=stdout, returncode=returncode)
    with pytest.raises(ConfigError, match=r"not a Python 3\.7\+ interpreter") as refused:
        check_interpreter(runner, VARIANT, "/bin/sh")
    assert why in refused.value.message


def test_a_failed_probe_shows_its_first_lines_and_counts_the_rest() -> None:
    stderr = "".join(f"line {n}\n" for n in range(8))
    runner = FakeRunner().on_run(r"perflab-python", returncode=1, stderr=stderr)
    with pytest.raises(ConfigError) as refused:
        check_interpreter(runner, VARIANT, "/bin/sh")
    assert refused.value.detail == "line 0\nline 1\nline 2\nline 3\nline 4\n... (3 more lines)"


def test_python_3_7_and_later_pass_the_probe() -> None:
    runner = FakeRunner().on_run(r"perflab-python", stdout="perflab-python 3.7.0\n")
    check_interpreter(runner, VARIANT, "/usr/bin/python3")
    ((spec, _),) = runner.calls
    assert spec.argv[0] == "/usr/bin/python3" and spec.env["FAST"] == "1"


def test_a_lens_ops_module_that_is_missing_is_an_incomplete_install() -> None:
    with pytest.raises(ConfigError, match="perflab is incomplete"):
        WorkerOps.from_module("perflab.nothing_here_ops")
