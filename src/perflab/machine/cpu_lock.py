"""Advisory per-CPU locks, so two perflab runs on one machine do not measure on the same CPU
without knowing it (they would take turns on it, and each would read the other as drift).

A run pinned to a CPU holds an exclusive `flock` on that CPU's file in the lock directory
(`$PERFLAB_CPU_LOCK_DIR`, else `$XDG_RUNTIME_DIR/perflab-cpu-locks`, else
`/tmp/perflab-cpu-locks-$UID`) while it measures.
The kernel releases it when the file is closed or the process ends however it ends (Ctrl-C,
SIGKILL included), so a stale lock cannot block anyone. The file holds the holder's pid, for
messages only.

The directory must be this user's own and private (0700), and lock files are opened without
following links and never truncated: perflab often runs as root, and a directory another user
could write to would let them point a lock file at any file on the machine.
A run that shares a held CPU leaves `cpu<N>.joined.<pid>` there, so the holder learns it too.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from perflab.records.errors import ConfigError

WAIT_S = 30.0  # how long a run waits for a free CPU before it shares one
# how often a run waiting for a free CPU tries the locks again: short against WAIT_S, and a try is
# one flock
POLL_S = 0.25


# the hint of every note on a CPU shared with, or waited for from, another perflab run: `-q`
# still prints those notes (a run that waited should say so however quiet)
SHARED_CPU_HINT = (
    "run one at a time, or give each its own CPU (--cpu N); without --cpu a run picks a CPU no "
    "other run holds"
)

LOCK_DIR_VARIABLE = "PERFLAB_CPU_LOCK_DIR"  # another directory (tests keep theirs apart)


def lock_directory() -> Path:
    chosen = os.environ.get(LOCK_DIR_VARIABLE)
    if chosen:
        return Path(chosen)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and os.access(runtime, os.W_OK):
        return Path(runtime) / "perflab-cpu-locks"
    return Path(f"/tmp/perflab-cpu-locks-{os.getuid()}")


@dataclass
class CpuLock:
    """An exclusive claim on one CPU; `close()` (or the process ending) releases it."""

    cpu: int
    fd: int | None
    since_s: float = field(default_factory=time.time)  # when it was locked (time.time())

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the flock
            self.fd = None


@dataclass(frozen=True)
class CpuClaim:
    """The measuring CPU a run got: locked for it, or shared with the runs in `shared_with`."""

    cpu: int
    lock: CpuLock | None
    shared_with: tuple[int, ...] = ()  # pids of the other perflab runs on `cpu` (0: unknown)
    waited_s: float = 0.0
    # pids of the perflab runs that held the CPUs while this one waited (0: unknown)
    waited_for: tuple[int, ...] = ()

    def release(self) -> None:
        if self.lock is not None:
            self.lock.close()


def _path(directory: Path, cpu: int) -> Path:
    return directory / f"cpu{cpu}.lock"


def private_directory(directory: Path) -> Path:
    """The lock directory, made 0700 when missing; refused unless it is a real directory
    (not a link) owned by this user and closed to others."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = os.lstat(directory)
    except OSError as error:
        raise ConfigError(
            f"cannot make the CPU lock directory {directory}: {error}",
            hint=f"set {LOCK_DIR_VARIABLE} to a private directory of yours",
        ) from error
    problem = None
    if not stat.S_ISDIR(found.st_mode):
        problem = "it is not a directory (a symbolic link?)"
    elif found.st_uid != os.geteuid():
        problem = f"it belongs to uid {found.st_uid}, not to you (uid {os.geteuid()})"
    elif found.st_mode & 0o077:
        problem = f"others can use it (mode {stat.S_IMODE(found.st_mode):o}, not 700)"
    if problem is not None:
        raise ConfigError(
            f"the CPU lock directory {directory} is not private: {problem}; another user "
            "could turn perflab's lock files against files of yours",
            hint=f"remove it (perflab makes it again, 0700), or set {LOCK_DIR_VARIABLE} to a "
            "private directory of yours",
        )
    return directory


def _open_lock_file(path: Path) -> int:
    """The lock file, created 0600 when missing: never through a link, never truncated."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        raise ConfigError(
            f"cannot open the CPU lock file {path}: "
            + ("it is a symbolic link" if os.path.islink(path) else str(error)),
            hint=f"remove it, or set {LOCK_DIR_VARIABLE} to a private directory of yours",
        ) from error
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid():
            raise ConfigError(
                f"the CPU lock file {path} is not a file of yours",
                hint=f"remove it, or set {LOCK_DIR_VARIABLE} to a private directory of yours",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


PID_WIDTH = 20  # the pid, padded: written over the last holder's without truncating


def try_lock(cpu: int, directory: Path | None = None) -> CpuLock | None:
    """Lock `cpu` for this process, or None when another process holds it."""
    directory = private_directory(directory or lock_directory())
    fd = _open_lock_file(_path(directory, cpu))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    os.pwrite(fd, f"{os.getpid():<{PID_WIDTH}}\n".encode(), 0)
    return CpuLock(cpu, fd)


def _joined_prefix(cpu: int) -> str:
    return f"cpu{cpu}.joined."


def announce_join(cpu: int, directory: Path | None = None) -> None:
    """Tell the holder of `cpu` that this run measures on it too (it reads it at its end)."""
    directory = private_directory(directory or lock_directory())
    path = directory / f"{_joined_prefix(cpu)}{os.getpid()}"
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    except OSError:
        pass  # only a message is lost


def joined(
    cpu: int, since_s: float, directory: Path | None = None, *, remove_ended: bool = True
) -> tuple[int, ...]:
    """Pids of the runs that shared `cpu` after `since_s` (time.time()) or still run on it;
    the marks of runs that have ended are removed (unless `remove_ended` is false: a look
    while measuring leaves them for the holder's note at its end)."""
    directory = directory or lock_directory()
    found = []
    try:
        names = [n for n in os.listdir(directory) if n.startswith(_joined_prefix(cpu))]
    except OSError:
        return ()
    for name in names:
        pid_text = name[len(_joined_prefix(cpu)) :]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        path = directory / name
        alive = Path(f"/proc/{pid_text}").exists()
        try:
            recent = os.lstat(path).st_mtime >= since_s
        except OSError:
            continue
        if alive or recent:
            found.append(int(pid_text))
        if not alive and remove_ended:
            try:
                os.unlink(path)
            except OSError:
                pass
    return tuple(sorted(found))


def holder(cpu: int, directory: Path | None = None) -> int | None:
    """The pid of the perflab run holding `cpu`, or None when nobody does."""
    directory = directory or lock_directory()
    path = _path(directory, cpu)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def held_cpus(cpus: Sequence[int], directory: Path | None = None) -> dict[int, int]:
    """CPU -> pid of the other perflab runs holding it (0 when the pid is unknown)."""
    held = {cpu: holder(cpu, directory) for cpu in cpus}
    return {cpu: pid for cpu, pid in held.items() if pid is not None}


@dataclass(frozen=True)
class Waiting:
    """How a claim waits when every CPU it may take is held: up to `seconds`, calling
    `on_wait` with who holds what and the seconds left; `clock` and `sleep` for tests."""

    seconds: float = WAIT_S
    on_wait: Callable[[dict[int, int], float], None] | None = None
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


def claim_cpu(
    preferred: Sequence[int],
    *,
    forced: bool,
    directory: Path | None = None,
    waiting: Waiting = Waiting(),
) -> CpuClaim:
    """Lock the first free CPU of `preferred`. `forced` (--cpu): only preferred[0], never
    waited for. Otherwise, when all are held, wait as `waiting` says, then share preferred[0]
    with its holder."""
    if not preferred:
        raise ValueError("no CPU to claim")
    wait_s, on_wait, clock, sleep = waiting.seconds, waiting.on_wait, waiting.clock, waiting.sleep
    candidates = list(preferred[:1] if forced else preferred)
    started = clock()
    holders: list[int] = []
    while True:
        for cpu in candidates:
            lock = try_lock(cpu, directory)
            if lock is not None:
                return CpuClaim(cpu, lock, waited_s=clock() - started, waited_for=tuple(holders))
        held = held_cpus(candidates, directory)
        holders += sorted(set(held.values()) - set(holders))
        left = wait_s - (clock() - started)
        if forced or left <= 0:
            break
        if on_wait is not None:
            on_wait(held, left)
        sleep(min(POLL_S, left))
    cpu = candidates[0]
    announce_join(cpu, directory)
    return CpuClaim(
        cpu,
        None,
        shared_with=(held.get(cpu, 0),),
        waited_s=clock() - started,
        waited_for=tuple(holders),
    )


# Turns. Runs that measure on one CPU take turns on it, one sample block at a time: each
# holds `cpu<N>.turn` (an exclusive flock) while it samples a block, so no sample of one run
# is taken while the other samples. A run that finds the turn taken leaves `cpu<N>.waiting.<pid>`
# while it waits; the run whose block ends, seeing that, lets it take the turn before trying again
# (a released flock would otherwise go back to the run that held it, which is already running).
HANDOFF_S = 0.5  # how long a run that ended its block waits for a waiting run to take the turn
# how often a run whose block ended checks whether the waiting run took the turn: it stops waiting
# as soon as the turn is taken
_HANDOFF_POLL_S = 0.001


def _waiting_prefix(cpu: int) -> str:
    return f"cpu{cpu}.waiting."


def _taker_prefix(cpu: int) -> str:
    return f"cpu{cpu}.turns."


class CpuTurns:
    """This run's turns on `cpu`: `take()` before a sample block, `give()` after it. Records
    how long the run waited for its turns and with which runs it took them."""

    def __init__(
        self,
        cpu: int,
        directory: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cpu = cpu
        self.directory = private_directory(directory or lock_directory())
        self.clock = clock
        self.sleep = sleep
        self.fd: int | None = _open_lock_file(self.directory / f"cpu{cpu}.turn")
        # says to the other runs on `cpu` that this one samples only in its turns
        self.mark = self.directory / f"{_taker_prefix(cpu)}{os.getpid()}"
        try:
            os.close(
                os.open(self.mark, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            )
        except OSError:
            pass  # the others then count this run as sharing the CPU unannounced
        self.held = False
        self.turns = 0
        self.waited_turns = 0  # turns this run had to wait for
        self.waited_s = 0.0
        self.partners: set[int] = set()  # pids of the runs it took turns with

    def take(self) -> None:
        if self.fd is None or self.held:
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._wait_for_turn()
        os.pwrite(self.fd, f"{os.getpid():<{PID_WIDTH}}\n".encode(), 0)
        self.held = True
        self.turns += 1

    def _wait_for_turn(self) -> None:
        assert self.fd is not None
        text = os.pread(self.fd, 32, 0).decode(errors="replace").strip()
        # the holder writes its pid just after it took the turn: this may still be the last one's
        if text.isdigit() and int(text) != os.getpid():
            self.partners.add(int(text))
        mark = self.directory / f"{_waiting_prefix(self.cpu)}{os.getpid()}"
        started = self.clock()
        try:
            os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
        except OSError:
            pass  # the other run only hands over less promptly
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        finally:
            try:
                os.unlink(mark)
            except OSError:
                pass
        self.waited_s += self.clock() - started
        self.waited_turns += 1

    def give(self) -> None:
        """End this run's turn; a run waiting for it takes it before this one can again."""
        if self.fd is None or not self.held:
            return
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        self.held = False
        waiting = self.waiting()
        if not waiting:
            return
        self.partners.update(waiting)
        deadline = self.clock() + HANDOFF_S
        while self.waiting() and self.clock() < deadline:
            self.sleep(_HANDOFF_POLL_S)

    def waiting(self) -> tuple[int, ...]:
        """Pids of the other live runs waiting for a turn on this CPU."""
        return self._marked(_waiting_prefix(self.cpu))

    def takers(self) -> tuple[int, ...]:
        """Pids of the other live runs on this CPU that sample only in their turns."""
        return self._marked(_taker_prefix(self.cpu))

    def _marked(self, prefix: str) -> tuple[int, ...]:
        """Pids of the other live runs that left a mark with `prefix` (those of runs that
        ended are removed)."""
        try:
            names = [n for n in os.listdir(self.directory) if n.startswith(prefix)]
        except OSError:
            return ()
        found = []
        for name in names:
            pid = name[len(prefix) :]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            if Path(f"/proc/{pid}").exists():
                found.append(int(pid))
            else:  # a run that ended without removing it
                try:
                    os.unlink(self.directory / name)
                except OSError:
                    pass
        return tuple(found)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            self.held = False
            try:
                os.unlink(self.mark)
            except OSError:
                pass
