"""Advisory per-CPU locks, so two perflab runs on one machine do not measure on the same CPU
without knowing it (they would take turns on it, and each would read the other as drift).

A run pinned to a CPU holds an exclusive `flock` on that CPU's file in the lock directory
(`$PERFLAB_CPU_LOCK_DIR`, else `$XDG_RUNTIME_DIR/perflab-cpu-locks`, else
`/tmp/perflab-cpu-locks-$UID`) while it measures.
The kernel releases it when the file is closed or the process ends however it ends (Ctrl-C,
SIGKILL included), so a stale lock cannot block anyone. The file holds the holder's pid, for
messages only.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

WAIT_S = 30.0  # how long a run waits for a free CPU before it shares one
POLL_S = 0.25


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

    def release(self) -> None:
        if self.lock is not None:
            self.lock.close()


def _path(directory: Path, cpu: int) -> Path:
    return directory / f"cpu{cpu}.lock"


def try_lock(cpu: int, directory: Path | None = None) -> CpuLock | None:
    """Lock `cpu` for this process, or None when another process holds it."""
    directory = directory or lock_directory()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(_path(directory, cpu), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return CpuLock(cpu, fd)


def holder(cpu: int, directory: Path | None = None) -> int | None:
    """The pid of the perflab run holding `cpu`, or None when nobody does."""
    directory = directory or lock_directory()
    path = _path(directory, cpu)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
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


def claim_cpu(
    preferred: Sequence[int],
    *,
    forced: bool,
    directory: Path | None = None,
    wait_s: float = WAIT_S,
    on_wait: Callable[[dict[int, int], float], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> CpuClaim:
    """Lock the first free CPU of `preferred`. `forced` (--cpu): only preferred[0], never
    waited for. Otherwise, when all are held, wait up to `wait_s` (calling `on_wait` with who
    holds what and the seconds left), then share preferred[0] with its holder."""
    if not preferred:
        raise ValueError("no CPU to claim")
    candidates = list(preferred[:1] if forced else preferred)
    started = clock()
    while True:
        for cpu in candidates:
            lock = try_lock(cpu, directory)
            if lock is not None:
                return CpuClaim(cpu, lock, waited_s=clock() - started)
        held = held_cpus(candidates, directory)
        left = wait_s - (clock() - started)
        if forced or left <= 0:
            break
        if on_wait is not None:
            on_wait(held, left)
        sleep(min(POLL_S, left))
    cpu = candidates[0]
    return CpuClaim(cpu, None, shared_with=(held.get(cpu, 0),), waited_s=clock() - started)
