"""What a test left running. Every process perflab starts inherits its parent's environment, so
a tag set there marks them all (perflab, its workers, the benchmark's own children, reparented
orphans alike); a process that drops its environment is found by a marker in its command line.

Tags nest: the fault tests' conftest tags each test, and each perflab a test starts gets
`TEST_TAG/RUN_TAG`, so a test's tag finds every run of the test and a run's tag that run alone."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.support.cli_commands import flat, start_perflab
from tests.support.store_rows import runs, wait_for_run

# named in docs/reliability.md, which bench/reliability_table.py writes from the fault tests
TAG_VARIABLE = "PERFLAB_FAULT_TAG"
# exits are asynchronous: a process signalled a moment ago may still be in /proc
GRACE_S = 3.0
_SET = f"{TAG_VARIABLE}=".encode()


@dataclass
class Fault:
    """What a fault test tells its record beyond pass/fail."""

    tag: str
    samples_kept: int | None = None


@dataclass
class TaggedPerflab:
    """One perflab process started by a test, under a tag of its own."""

    process: subprocess.Popen[str]
    tag: str
    cwd: Path

    def finish(self, timeout_s: float = 240) -> tuple[int, str, str]:
        """Its status and its stdout and stderr flattened; killed (and the test failed) when it
        runs past `timeout_s`."""
        try:
            out, err = self.process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            out, err = self.process.communicate()
            raise AssertionError(f"perflab did not finish within {timeout_s} s: {err}") from None
        return self.process.returncode, flat(out), flat(err)


def run_tag() -> str:
    """A new tag for one perflab process, under the test's tag when the test has one."""
    own = uuid.uuid4().hex
    test_tag = os.environ.get(TAG_VARIABLE)
    return f"{test_tag}/{own}" if test_tag else own


def start(*args: str, cwd: Path) -> TaggedPerflab:
    tag = run_tag()
    process = start_perflab(
        *args,
        cwd=cwd,
        env=dict(os.environ, **{TAG_VARIABLE: tag}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a signal the test sends reaches perflab alone
    )
    return TaggedPerflab(process, tag, cwd)


def run(*args: str, cwd: Path, timeout_s: float = 240) -> tuple[int, str, str, TaggedPerflab]:
    perflab = start(*args, cwd=cwd)
    code, out, err = perflab.finish(timeout_s)
    return code, out, err, perflab


def processes_left(tag: str, marker: str | None = None, grace_s: float = GRACE_S) -> list[str]:
    """Live processes carrying `tag` or a tag under it (or `marker` in their command line),
    other than the test itself, as "PID COMMAND LINE"; each is killed after it was counted, so
    no test disturbs the next."""
    deadline = time.monotonic() + grace_s
    while True:
        found = _tagged(tag, marker)
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for entry in found:
        try:
            os.kill(int(entry.split()[0]), signal.SIGKILL)
        except OSError:
            pass
    return found


def _carries(variables: list[bytes], tag: str) -> bool:
    values = [v[len(_SET) :].decode() for v in variables if v.startswith(_SET)]
    return any(value == tag or value.startswith(tag + "/") for value in values)


def _tagged(tag: str, marker: str | None) -> list[str]:
    """The processes carrying `tag`, or `marker` in their command line unless they carry
    another run's tag: two test sessions (or workers) run the same commands at once."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if _is_zombie(entry):
                continue
            cmdline = (entry / "cmdline").read_bytes()
            variables = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = _carries(variables, tag)
        another_runs = not ours and any(v.startswith(_SET) for v in variables)
        if ours or (marker is not None and marker.encode() in cmdline and not another_runs):
            words = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name} {words}")
    return found


def _is_zombie(entry: Path) -> bool:
    stat = entry.joinpath("stat").read_text()
    return stat[stat.rfind(")") + 2 :].startswith("Z")


def contained_by_this_process() -> list[int]:
    """Live processes perflab started from this (test) process and left running, found by the
    container token the real runner gives everything it starts."""
    needle = f"PERFLAB_CONTAINER={os.getpid():07d}-".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if _is_zombie(entry):
                continue
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(item.startswith(needle) for item in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


PROMPT_S = 3.0  # < 1 s on an idle machine (measured); generous for a loaded one


def interrupt_during_command(tmp_path: Path, signals: list[signal.Signals]) -> None:
    """Send `signals` to a --cmd run while its command runs: perflab stops promptly with 130,
    keeps the run as incomplete and leaves no process behind."""
    perflab = start(
        "run", "--cmd", "sleep 103", "-v", "A", "-v", "B", "--budget", "3", cwd=tmp_path
    )  # fmt: skip
    wait_for_run(tmp_path)
    time.sleep(1.0)  # the first `sleep 103` is running
    sent_at = time.monotonic()
    for number in signals:
        perflab.process.send_signal(number)
        time.sleep(0.05)
    code, _, err = perflab.finish()
    assert time.monotonic() - sent_at < PROMPT_S, err
    assert code == 130, err
    ((run_id, status),) = runs(tmp_path)
    assert f"kept as run {run_id}: perflab show {run_id}" in err
    assert status == "incomplete"
    assert processes_left(perflab.tag, marker="sleep 103") == []
