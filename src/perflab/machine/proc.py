"""The one seam through which perflab starts processes.

Collectors never call :mod:`subprocess` directly: they take a :class:`ProcessRunner`, so unit tests
swap in `fake_processes.FakeRunner` and integration tests use the real tools.
"""

from __future__ import annotations

import codecs
import ctypes
import io
import itertools
import os
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Protocol, cast

from perflab.worker import process_tree
from perflab.worker.process_tree import CONTAINER_VARIABLE


@dataclass(frozen=True)
class Completed:
    """A finished process. `timed_out` processes were killed; their returncode is then None."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    wall_ns: int
    timed_out: bool = False
    left: int = 0  # processes it left running, stopped when it ended

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe_failure(self) -> str:
        """One line saying how the process ended, for error messages."""
        if self.timed_out:
            return "timed out and was killed"
        assert self.returncode is not None
        if self.returncode < 0:
            return f"was killed by signal {-self.returncode}"
        return f"exited with status {self.returncode}"


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one process."""

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = None  # the complete environment; None inherits perflab's
    cwd: str | None = None
    cpu: int | None = None  # pin the process (and its children) to this CPU
    disable_aslr: bool = False  # fixed address-space layout (as `setarch -R`), inherited


class LiveProcess(Protocol):
    """A long-lived process perflab talks to in lines of text: a worker, the command launcher,
    a tool wrapping a worker. Its stdin takes requests, its stdout gives replies; stderr is kept
    apart (for error messages)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None:
        """None while it runs; negative: killed by that signal."""
        ...

    def write_line(self, line: str) -> None:
        """Send one line (a newline is added). Raises BrokenPipeError once it has exited."""
        ...

    def read_line(self, timeout_s: float) -> str | None:
        """The next line of its stdout (with its newline); "" at the end of its output (it
        exited or closed stdout); None when nothing came within `timeout_s`."""
        ...

    def stderr_lines(self) -> Iterator[str]:
        """Its stderr, line by line (a long line in pieces of at most STDERR_LINE_CHARS),
        until it closes or, once the process exited, until what it wrote has been read: a
        child that outlives it may hold the pipe open (blocks: read it from a thread)."""
        ...

    def poll(self) -> int | None: ...

    def wait(self, timeout_s: float | None = None) -> int | None:
        """Wait for it to exit; its returncode, or None when it still runs after `timeout_s`."""
        ...

    def kill(self) -> None:
        """Kill it and everything it started (its process group, and what `stop_leftovers`
        finds), and reap it."""
        ...

    def stop_leftovers(self) -> int:
        """Stop whatever it started that still runs (call it once it exited, or it is killed);
        how many processes, also counted in the tally of `counting_stopped` it was started
        (or is stopped) in."""
        ...

    def close(self) -> None:
        """Close the pipes (after it exited or was killed)."""
        ...


class ProcessRunner(Protocol):
    """The one seam every process perflab starts goes through (the real one, or a fake in tests)."""

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed: ...

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> LiveProcess:
        """Start a long-lived process with text pipes on stdin/stdout/stderr. Raises OSError
        (FileNotFoundError, PermissionError ...) when it cannot be started."""
        ...

    def which(self, tool: str) -> str | None:
        """The path of `tool` on PATH, or None: where this runner's processes would find it
        (a lens's preflight asks here, so a fake runner says which tools are installed)."""
        ...


STDERR_LINE_CHARS = 8192  # the longest piece of a live process's stderr read at once
# Once a process exited, everything it wrote is in its stderr pipe; a child it left may hold the
# pipe open for ever. Its stderr is read until the pipe stays empty this long, and at most
# _EXITED_DRAIN_S more (a child that keeps writing), not until the end of file.
_EXITED_QUIET_S = 0.05
_EXITED_DRAIN_S = 1.0
_ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag, as used by `setarch -R`


def _child_setup(spec: LaunchSpec):  # type: ignore[no-untyped-def]
    """What runs in the child between fork and exec: pinning and layout, inherited by the
    program and everything it starts."""
    if spec.cpu is None and not spec.disable_aslr:
        return None
    personality = ctypes.CDLL(None, use_errno=True).personality if spec.disable_aslr else None

    def setup() -> None:
        if spec.cpu is not None:
            os.sched_setaffinity(0, {spec.cpu})
        if personality is not None:
            personality(_ADDR_NO_RANDOMIZE)

    return setup


# Containment. Every process the real runner starts leads its own session and carries a token
# in its environment, CONTAINER_VARIABLE=<perflab pid>-<n> (fixed width, so every variant's
# environment has the same size); what it starts inherits both. When the process is done,
# `PopenProcess.stop_leftovers` stops whatever is left of it (perflab/worker/process_tree.py
# finds it). The counter describes real OS processes of this perflab process: module-level.
_counter = itertools.count(1)
# The orphan sweep after a build spares every process perflab launched itself and has not yet
# reaped: a child in the middle of an exec shows an empty environment (no token), so another
# thread's launch (a bisect builds one commit while it measures another) would look orphaned.
# Launching and sweeping take turns on the lock, so no launch is mid-exec while a sweep looks.
# Module-level: the PIDs are this OS process's children, whichever runner launched them.
_launch_lock = threading.Lock()
_launched: set[int] = set()


def _launch(argv: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
    """Popen, its pid recorded before any sweep can look (Popen returns after the exec)."""
    with _launch_lock:
        popen: subprocess.Popen[Any] = subprocess.Popen(argv, **options)
        _launched.add(popen.pid)
        return popen


def _reaped(pid: int) -> None:
    with _launch_lock:
        _launched.discard(pid)


def _perflab_token() -> str:
    return f"{os.getpid():07d}"


def _new_token() -> str:
    return f"{_perflab_token()}-{next(_counter):06d}"


def _contained_env(env: Mapping[str, str] | None, token: str) -> dict[str, str]:
    contained = dict(os.environ if env is None else env)
    contained[CONTAINER_VARIABLE] = token
    return contained


class StoppedTally:
    """How many leftover processes were stopped on behalf of one measuring lens."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        with self._lock:
            self._count += n

    @property
    def count(self) -> int:
        return self._count


# The tally a thread counts into while it measures (`counting_stopped`). Per thread: a bisect
# builds one commit on another thread while it measures another, and what the build left is
# no sign of the benchmark leaving anything.
_counting = threading.local()


@contextmanager
def counting_stopped() -> Iterator[StoppedTally]:
    """Tally the leftovers stopped, inside the block, of the processes this thread starts (even
    when another thread stops them) or stops itself (a worker's, or the command launcher's,
    report of what it stopped)."""
    tally = StoppedTally()
    outer = getattr(_counting, "tally", None)
    _counting.tally = tally
    try:
        yield tally
    finally:
        _counting.tally = outer


def _current_tally() -> StoppedTally | None:
    tally: StoppedTally | None = getattr(_counting, "tally", None)
    return tally


def _stopped(n: int, started_in: StoppedTally | None = None) -> None:
    """`n` processes stopped: counted for the tally of the lens that started them, else of the
    one stopping them."""
    tally = started_in or _current_tally()
    if tally is not None and n:
        tally.add(n)


def count_stopped(n: int) -> None:
    """Processes stopped elsewhere on perflab's behalf (the command launcher's reports)."""
    _stopped(n)


def stop_all_contained() -> int:
    """When perflab ends: stop every process any of its containers left, and the orphans
    re-parented to it as a child subreaper (see `become_subreaper`)."""
    stopped = process_tree.Container(
        None,
        _perflab_token(),
        adopted_by=_adopted_by(),
        since_ticks=process_tree.start_ticks(os.getpid()),
    ).stop()
    _stopped(stopped)
    return stopped


_subreaper = False


def become_subreaper() -> None:
    """Make perflab the child subreaper of everything it starts, once: orphans then re-parent
    to perflab rather than init, and `stop_all_contained` finds them."""
    global _subreaper
    if not _subreaper:
        _subreaper = process_tree.become_subreaper()


def _adopted_by() -> int | None:
    return os.getpid() if _subreaper else None


def _not_started(spec: LaunchSpec, error: OSError, start_ns: int) -> Completed:
    """A program that cannot start ends as a shell says: 127 not found, 126 not executable."""
    status = 127 if isinstance(error, FileNotFoundError) else 126
    return Completed(spec.argv, status, "", str(error), time.perf_counter_ns() - start_ns)


class SubprocessRunner:
    """The real runner: every process it starts is contained (above)."""

    def run(
        self, spec: LaunchSpec, *, timeout_s: float | None = None, stdin_text: str | None = None
    ) -> Completed:
        start_ns = time.perf_counter_ns()
        token = _new_token()
        try:
            proc = _launch(
                spec.argv,
                env=_contained_env(spec.env, token),
                cwd=spec.cwd,
                stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=_child_setup(spec),
                start_new_session=True,
            )
        except (FileNotFoundError, PermissionError) as error:
            return _not_started(spec, error, start_ns)
        # its pipes are read here, as bytes: PopenProcess only stops it and what it left
        process = PopenProcess(cast("subprocess.Popen[str]", proc), token)
        streams = _Streams(proc, stdin_text)
        try:
            if process.wait(timeout_s) is None:  # still running after timeout_s
                process.kill()
                stdout, stderr = streams.finish()
                return Completed(
                    spec.argv,
                    None,
                    stdout,
                    stderr,
                    time.perf_counter_ns() - start_ns,
                    timed_out=True,
                )
        except BaseException:
            process.kill()
            streams.finish()
            raise
        # what it left running (a daemon, a build's background job) is stopped now, not
        # waited for: it would hold the pipes open until the timeout
        left = process.stop_leftovers(orphans=True)
        stdout, stderr = streams.finish()
        return Completed(
            spec.argv,
            proc.returncode,
            stdout,
            stderr,
            time.perf_counter_ns() - start_ns,
            left=left,
        )

    def which(self, tool: str) -> str | None:
        return shutil.which(tool)

    def spawn(self, spec: LaunchSpec, *, pass_fds: Sequence[int] = ()) -> LiveProcess:
        token = _new_token()
        popen = _launch(
            spec.argv,
            env=_contained_env(spec.env, token),
            cwd=spec.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            bufsize=1,
            preexec_fn=_child_setup(spec),
            pass_fds=tuple(pass_fds),
            start_new_session=True,
        )
        return PopenProcess(popen, token, exit_fd=exit_descriptor(popen.pid))


def exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when the child `pid` exits (a pidfd, Linux 5.3+),
    opened before anything reaps it; None where the system has none."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


class _Streams:
    """A process's stdin written and its stdout/stderr read, each in a thread; `finish`
    returns them once they end, or shortly after the process ended when something that
    escaped containment still holds them open."""

    def __init__(self, proc: subprocess.Popen[bytes], stdin_text: str | None) -> None:
        self._stop = False
        self._streams = (proc.stdout, proc.stderr)
        self._chunks: dict[int, list[bytes]] = {}
        self._threads = []
        for stream in self._streams:
            assert stream is not None
            self._chunks[stream.fileno()] = []
            self._threads.append(threading.Thread(target=self._read, args=(stream,), daemon=True))
        if proc.stdin is not None:
            self._threads.append(
                threading.Thread(target=self._write, args=(proc.stdin, stdin_text), daemon=True)
            )
        for thread in self._threads:
            thread.start()

    @staticmethod
    def _write(stream: IO[bytes], text: str | None) -> None:
        try:
            stream.write((text or "").encode())
            stream.close()
        except OSError:
            pass  # it exited without reading: nothing to tell

    def _read(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        while not self._stop:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self._chunks[fd].append(chunk)

    def finish(self, grace_s: float = 2.0) -> tuple[str, str]:
        deadline = time.monotonic() + grace_s
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._stop = True
        for thread in self._threads:
            thread.join()
        texts = []
        for stream in self._streams:
            assert stream is not None
            texts.append(b"".join(self._chunks[stream.fileno()]).decode(errors="replace"))
            stream.close()
        return texts[0], texts[1]


class PopenProcess:
    """The real `LiveProcess`: a child in its own session, with text pipes, contained: `token`
    is the CONTAINER_VARIABLE its environment (and its descendants') carries."""

    def __init__(
        self, popen: subprocess.Popen[str], token: str, *, exit_fd: int | None = None
    ) -> None:
        self.popen = popen
        self.token = token
        self.since_ticks = process_tree.start_ticks(popen.pid)
        self._reading_stderr = False
        self._closing = False
        self._close_lock = threading.Lock()
        self._pending = bytearray()  # read from stdout, not yet returned as a line
        # readable once it exited (`exit_descriptor`); without it, the stderr reader looks
        # every 0.1 s; closed with the pipes
        self._exit_fd = exit_fd
        self._tally = _current_tally()  # the lens that started it counts what it leaves

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def write_line(self, line: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def read_line(self, timeout_s: float) -> str | None:
        # Lines are cut from perflab's own buffer of what os.read returned: a buffered reader
        # may hold a second line that arrived with the first, and select() on the pipe would
        # then wait for data that has already been read.
        stdout = self.popen.stdout
        assert stdout is not None
        fd = stdout.fileno()
        deadline = time.monotonic() + max(timeout_s, 0.0)
        while b"\n" not in self._pending:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0.0))
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:  # the end of its output: what is left, then ""
                line, self._pending = bytes(self._pending), bytearray()
                return line.decode(errors="replace")
            self._pending += chunk
        end = self._pending.index(b"\n") + 1
        line = bytes(self._pending[:end])
        del self._pending[:end]
        return line.decode(errors="replace")

    def stderr_lines(self) -> Iterator[str]:
        stderr = self.popen.stderr
        if stderr is None:
            return
        self._reading_stderr = True
        lines = StderrLines(getattr(stderr, "encoding", None) or "utf-8")
        exited_at: float | None = None
        try:
            # read from the descriptor, never through the text stream's buffer: select() must
            # see every byte not yet returned
            fd = stderr.fileno()
            while not self._closing:
                if exited_at is None:
                    exit_fd = self._exit_fd
                    # asleep until it writes or exits: no periodic wake-up beside a measurement
                    watched, wake_s = ([fd], 0.1) if exit_fd is None else ([fd, exit_fd], None)
                    ready, _, _ = select.select(watched, [], [], wake_s)
                    if exit_fd in ready or (exit_fd is None and self.poll() is not None):
                        exited_at = time.monotonic()
                    if fd not in ready:
                        continue
                elif time.monotonic() - exited_at > _EXITED_DRAIN_S:
                    break
                elif not select.select([fd], [], [], _EXITED_QUIET_S)[0]:
                    break  # it exited and what it wrote has been read
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                yield from lines.add(chunk)
            yield from lines.end()
        except (ValueError, OSError):
            return  # closed under us: the process is being closed
        finally:
            self._reading_stderr = False
            if self._closing:
                self._close_stderr()

    def poll(self) -> int | None:
        return self._ended(self.popen.poll())

    def wait(self, timeout_s: float | None = None) -> int | None:
        if (
            timeout_s is not None
            and self.popen.returncode is None
            and not self._exited_within(timeout_s)
        ):
            return None
        try:
            return self._ended(self.popen.wait(timeout=timeout_s))
        except subprocess.TimeoutExpired:
            return None

    def _exited_within(self, timeout_s: float) -> bool:
        """Whether it exits within `timeout_s`, woken by its pidfd the moment it does
        (subprocess's own wait with a timeout sleeps up to 50 ms a turn between looks); True
        where there is no pidfd, for subprocess's wait to tell."""
        # a pidfd of its own: the process's (`_exit_fd`) may be closed under it by `close`
        exit_fd = exit_descriptor(self.popen.pid)
        if exit_fd is None:
            return True
        try:
            ready, _, _ = select.select([exit_fd], [], [], max(0.0, timeout_s))
        finally:
            os.close(exit_fd)
        return bool(ready)

    def kill(self) -> None:
        if self.popen.poll() is None:
            _kill_group(self.popen)
            self.popen.wait()
        self._ended(self.popen.returncode)
        self.stop_leftovers()

    def _ended(self, returncode: int | None) -> int | None:
        if returncode is not None:
            _reaped(self.popen.pid)
        return returncode

    def stop_leftovers(self, *, orphans: bool = False) -> int:
        """Stop what it left running; `orphans`: also the orphans re-parented to perflab since
        it started that carry no container's token (a daemon that left the session and
        cleared its environment: `setsid -f env -i CMD`), for a run nothing else starts
        processes beside (a build)."""
        with _launch_lock:
            stopped = process_tree.Container(
                self.popen.pid,
                self.token,
                since_ticks=self.since_ticks,
                orphans_of=_adopted_by() if orphans else None,
                launched=tuple(_launched),
            ).stop()
        _stopped(stopped, self._tally)
        return stopped

    def close(self) -> None:
        self._closing = True
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass  # a broken pipe on flush: it is gone anyway
        # a stderr another thread still reads is closed by that thread as it stops: closed
        # here, its descriptor could be reused under the read
        if not self._reading_stderr:
            self._close_stderr()

    def _close_stderr(self) -> None:
        with self._close_lock:
            if self.popen.stderr is not None:
                self.popen.stderr.close()
            if self._exit_fd is not None:
                os.close(self._exit_fd)
                self._exit_fd = None


class StderrLines:
    """Bytes of a stream in, its text out in lines of at most STDERR_LINE_CHARS (a stream
    without newlines, a progress bar redrawn with \\r, never grows perflab's memory)."""

    def __init__(self, encoding: str) -> None:
        # universal newlines, as a text stream reads them: a \r redraw ends a line
        self._decoder = io.IncrementalNewlineDecoder(
            codecs.getincrementaldecoder(encoding)(errors="replace"), translate=True
        )
        self._text = ""

    def add(self, chunk: bytes) -> list[str]:
        """The lines `chunk` completes."""
        self._text += self._decoder.decode(chunk)
        lines: list[str] = []
        while True:
            newline = self._text.find("\n", 0, STDERR_LINE_CHARS)
            if newline >= 0:
                cut = newline + 1
            elif len(self._text) >= STDERR_LINE_CHARS:
                cut = STDERR_LINE_CHARS
            else:
                return lines
            lines.append(self._text[:cut])
            self._text = self._text[cut:]

    def end(self) -> list[str]:
        """What is left: a last line without its newline."""
        rest = self._text + self._decoder.decode(b"", final=True)
        self._text = ""
        return [rest] if rest else []


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the process and everything it started (a shell's children included)."""
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def which(tool: str) -> str | None:
    """The path of `tool` on this machine's PATH, for code that starts no process through a
    runner (doctor's host facts, the CLI's shorthand); code with a runner asks
    `ProcessRunner.which`."""
    return shutil.which(tool)
