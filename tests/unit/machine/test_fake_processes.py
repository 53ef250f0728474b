"""The in-memory fakes of the process seam (machine/fake_processes.py), which users' tests use
too: a runner answers by the first rule whose pattern the command holds, fails on anything
unscripted, and a fake process answers each line written with its script."""

from __future__ import annotations

import pytest

from perflab.machine.fake_processes import FakeProcess, FakeRunner
from perflab.machine.proc import Completed, LaunchSpec


def spec(*argv: str) -> LaunchSpec:
    return LaunchSpec(argv=argv)


def test_the_first_rule_whose_pattern_the_command_holds_answers() -> None:
    runner = (
        FakeRunner()
        .on_run(r"^perf stat", stdout="counted\n")
        .on_run(r"^perf ", returncode=1, stderr="no such subcommand")
    )
    done = runner.run(spec("perf", "stat", "-e", "cycles", "true"), timeout_s=5)
    assert (done.argv, done.returncode, done.stdout) == (
        ("perf", "stat", "-e", "cycles", "true"),  # the command's own argv, not the rule's
        0,
        "counted\n",
    )
    assert not runner.run(spec("perf", "trace")).ok
    assert [s.argv[1] for s, _ in runner.calls] == ["stat", "trace"]


def test_a_reply_may_be_a_function_of_the_command_and_its_input() -> None:
    def echo(launched: LaunchSpec, stdin: str | None) -> Completed:
        return Completed(launched.argv, 0, (stdin or "").upper(), "", 1)

    runner = FakeRunner().on_run(r"^cat$", echo)
    assert runner.run(spec("cat"), stdin_text="hello").stdout == "HELLO"
    assert runner.calls[0][1] == "hello"


def test_an_unscripted_command_fails_the_test() -> None:
    with pytest.raises(AssertionError, match="no script runs 'valgrind --version'"):
        FakeRunner().run(spec("valgrind", "--version"))
    with pytest.raises(AssertionError, match="no script spawns 'python3 worker.py'"):
        FakeRunner().spawn(spec("python3", "worker.py"))


def test_a_spawned_process_answers_each_line_with_its_script() -> None:
    def worker(launched: LaunchSpec) -> FakeProcess:
        return FakeProcess(
            launched,
            lambda line: [f"ok {line.strip()}"],
            greeting=["ready"],
            exit_on=lambda line: 0 if line.startswith("quit") else None,
        )

    runner = FakeRunner().on_spawn(r"worker", worker)
    process = runner.spawn(spec("python3", "worker.py"))
    assert runner.spawned == [process]
    assert process.read_line(1.0) == "ready\n"
    assert process.read_line(1.0) is None  # nothing written yet: nothing to read
    process.write_line('{"op": "sample"}\n')
    assert process.read_line(1.0) == 'ok {"op": "sample"}\n'
    process.write_line("quit\n")
    assert process.read_line(1.0) == "ok quit\n" and process.poll() == 0
    assert process.read_line(1.0) == ""  # exited: end of file
    with pytest.raises(BrokenPipeError):
        process.write_line("more\n")
    assert process.written == ['{"op": "sample"}\n', "quit\n"]


def test_a_killed_process_reads_as_killed_and_its_stderr_by_line() -> None:
    process = FakeProcess(spec("prog"), lambda line: [], stderr="one\ntwo\n")
    process.kill()
    assert process.wait() == -9 and process.stop_leftovers() == 0
    assert list(process.stderr_lines()) == ["one\n", "two\n"]
    process.kill()  # a second kill changes nothing
    assert process.poll() == -9
