"""The lock files that let several perflab runs share one build cache.

`<cache>/<name>.lock` is held shared by each run that uses the entry (until the run ends) and
exclusive while it is checked out or built, so two runs never build in one place and `prune`
skips entries in use.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from perflab.git.repo import GitError

# how often a run waiting for a cache entry in use tries its lock again (flock has no timeout): a
# build holds it far longer
LOCK_POLL_S = 0.2


class EntryLocks:
    """The cache's lock files this run holds, by name, each shared or exclusive."""

    def __init__(
        self,
        root: Path,
        *,
        on_wait: Callable[[str], None] | None = None,
        wait_s: float = 3600.0,
    ) -> None:
        self.root = root
        self.on_wait = on_wait  # told once when another run holds an entry this one needs
        self.wait_s = wait_s
        self._held: dict[str, tuple[int, bool]] = {}  # name -> (fd, exclusive)

    def hold(self, name: str, *, exclusive: bool, wait: bool = True) -> bool:
        """Hold `<root>/<name>.lock` shared or exclusive until release/close. False when not
        waiting and another run holds it. Waiting is bounded by wait_s."""
        held = self._held.get(name)
        if held is not None and held[1] == exclusive:
            return True
        if held is not None and not exclusive:  # exclusive -> shared never waits
            fcntl.flock(held[0], fcntl.LOCK_SH)
            self._held[name] = (held[0], False)
            return True
        if held is not None:  # shared -> exclusive: flock drops the shared lock to convert
            self.release(name)
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / f"{name}.lock"
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        deadline = time.monotonic() + self.wait_s
        told = False
        while (fd := try_flock(path, mode)) is None:
            if not wait:
                return False
            if time.monotonic() > deadline:
                raise GitError(
                    f"the cached checkout {self.root / name} is in use by another perflab "
                    f"run: waited {self.wait_s:g} s for it",
                    hint="let the other run finish, or pass --cache-dir DIR to use another cache",
                )
            if not told and self.on_wait is not None:
                self.on_wait(
                    f"waiting for another perflab run using the cached checkout {self.root / name}"
                )
                told = True
            time.sleep(LOCK_POLL_S)
        self._held[name] = (fd, exclusive)
        return True

    def release(self, name: str) -> None:
        held = self._held.pop(name, None)
        if held is not None:
            os.close(held[0])

    def close(self) -> None:
        """Release every lock this run holds (the process ending does it too)."""
        for name in list(self._held):
            self.release(name)


def try_flock(path: Path, mode: int) -> int | None:
    """The lock file at `path` opened and locked with `mode`, or None while another run
    holds it."""
    while True:
        # never follow a link, never truncate: the file's content is never used
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        # prune may have removed the file while this run waited on it: lock the one there
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False))
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)
