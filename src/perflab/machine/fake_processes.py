"""In-memory fakes of the process seam, for tests that start no process.

:class:`FakeRunner` (a :class:`perflab.machine.proc.ProcessRunner`) answers each command from
rules per argv pattern and spawns :class:`FakeProcess` objects, their replies scripted line by
line. They live in the package, not in tests/, because users' own tests of code that takes `runner=`
(docs/python-api.md) use them too."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from perflab.machine.proc import Completed, LaunchSpec

Replies = Callable[[str], Iterable[str]]  # a request line -> the lines the process answers


@dataclass
class FakeProcess:
    """A `LiveProcess` whose replies are scripted: `replies(line)` answers each line written."""

    spec: LaunchSpec
    replies: Replies
    pid: int = 4242
    greeting: Sequence[str] = ()  # lines it writes as it starts
    stderr: str = ""
    returncode: int | None = None
    exit_on: Callable[[str], int | None] = lambda line: None  # a request it exits on, and how
    written: list[str] = field(default_factory=list)
    _outbox: deque[str] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self._outbox.extend(_lines(self.greeting))

    def write_line(self, line: str) -> None:
        if self.returncode is not None:
            raise BrokenPipeError(f"{self.spec.argv[0]} has exited")
        self.written.append(line)
        self._outbox.extend(_lines(self.replies(line)))
        status = self.exit_on(line)
        if status is not None:
            self.returncode = status

    def read_line(self, timeout_s: float) -> str | None:
        if self._outbox:
            return self._outbox.popleft()
        return "" if self.returncode is not None else None

    def stderr_lines(self) -> Iterator[str]:
        yield from self.stderr.splitlines(keepends=True)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout_s: float | None = None) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            self.returncode = -9

    def stop_leftovers(self) -> int:
        return 0

    def close(self) -> None:
        pass


def _lines(lines: Iterable[str]) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in lines]


RunReply = Completed | Callable[[LaunchSpec, str | None], Completed]
SpawnScript = Callable[[LaunchSpec], FakeProcess]


class FakeRunner:
    """A `ProcessRunner` answering from a script, per argv pattern (a regex searched in the
    argv joined by spaces; the first matching rule wins). Unscripted processes fail the test.

        runner = FakeRunner()
        runner.on_run(r"^valgrind --version", stdout="valgrind-3.19.0\n")
        runner.on_spawn(r"statement_worker", lambda spec: FakeProcess(spec, answer))
    """

    def __init__(self, *, tools: Mapping[str, str] | Iterable[str] = ()) -> None:
        """`tools`: the installed tools, each name to its path (a bare name: /usr/bin/NAME);
        `which` finds no other."""
        self.tools = (
            dict(tools) if isinstance(tools, Mapping) else {t: f"/usr/bin/{t}" for t in tools}
        )
        self._runs: list[tuple[re.Pattern[str], RunReply]] = []
        self._spawns: list[tuple[re.Pattern[str], SpawnScript]] = []
        self.calls: list[tuple[LaunchSpec, str | None]] = []  # run(): spec, stdin
        self.spawned: list[FakeProcess] = []

    def on_run(
        self,
        pattern: str,
        reply: RunReply | None = None,
        *,
        returncode: int = 0,
        stdout: str = "",
        stderr: str = "",
    ) -> FakeRunner:
        if reply is None:
            reply = Completed((), returncode, stdout, stderr, 1)
        self._runs.append((re.compile(pattern), reply))
        return self

    def on_spawn(self, pattern: str, script: SpawnScript) -> FakeRunner:
        self._spawns.append((re.compile(pattern), script))
        return self

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        self.calls.append((spec, stdin_text))
        command = " ".join(spec.argv)
        for pattern, reply in self._runs:
            if pattern.search(command):
                if isinstance(reply, Completed):
                    return Completed(
                        spec.argv,
                        reply.returncode,
                        reply.stdout,
                        reply.stderr,
                        reply.wall_ns,
                        reply.timed_out,
                    )
                return reply(spec, stdin_text)
        raise AssertionError(f"FakeRunner: no script runs {command!r}")

    def which(self, tool: str) -> str | None:
        return self.tools.get(tool)

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> FakeProcess:
        command = " ".join(spec.argv)
        for pattern, script in self._spawns:
            if pattern.search(command):
                process = script(spec)
                self.spawned.append(process)
                return process
        raise AssertionError(f"FakeRunner: no script spawns {command!r}")
