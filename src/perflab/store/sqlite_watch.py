"""A run's watch on the store's file: a file deleted or replaced while the run writes (a
benchmark that removes `.perflab`) stops the run, and every run the old file held is copied to a
new file beside it."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

from perflab.records.errors import StoreLostError
from perflab.records.kinds import RunStatus
from perflab.store.dialect import SQLITE
from perflab.store.sqlite_file import device_inode, store_errors
from perflab.store.tables import FINISH_RUN, now


class FileWatch:
    """After each write of a run: is the file at the store's path still the one being written?
    A benchmark that deletes or replaces it (`shutil.rmtree('.perflab')`) would otherwise have
    the run written into a file nobody can open again. Once lost, every later write is refused."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        run_id: int,
        path: Path | None,
        identity: tuple[int, int] | None,
    ) -> None:
        self.connection = connection
        self.run_id = run_id
        self.path = path
        self.identity = identity
        self._lost: StoreLostError | None = None

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """A write: refused once the file was lost; SQLite's failures as StoreError."""
        if self._lost is not None:
            raise self._lost
        with store_errors(self.path):
            yield

    def written(self) -> None:
        if self.path is None or self.identity is None:
            return
        if device_inode(self.path) == self.identity:
            return
        what = "removed" if not self.path.exists() else "replaced by another file"
        ended = (str(RunStatus.INCOMPLETE), now(), f"the store file was {what}", self.run_id)
        with contextlib.suppress(sqlite3.Error):  # a file moved away, not removed, still takes it
            self.connection.execute(FINISH_RUN.format(p=SQLITE.placeholder), ended)
        # the connection still holds the old file open: copy it, every run in it, to safety;
        # the run is ended in the copy (SQLite refuses writes to a file that was removed)
        recovery = _recovery_path(self.path, self.run_id)
        saved = False
        if recovery is not None:
            try:
                target = sqlite3.connect(recovery)
                try:
                    self.connection.backup(target)
                    target.execute(FINISH_RUN.format(p=SQLITE.placeholder), ended)
                    target.commit()
                finally:
                    target.close()
                saved = True
            except sqlite3.Error:
                saved = False
                recovery.unlink(missing_ok=True)  # the empty file made for it
        self._lost = StoreLostError(
            f"the store {str(self.path)!r} was {what} while run {self.run_id} was being written "
            "(did the benchmark delete it?); the run is stopped"
            + (
                f"; run {self.run_id} and every run the file held are saved in {recovery}"
                if saved
                else "; they could not be saved (no writable folder)"
            ),
            hint=f"perflab show {self.run_id} --store {recovery}; keep the store out of the "
            "benchmark's reach (--store PATH)"
            if saved
            else "keep the store out of the benchmark's reach (--store PATH)",
        )
        raise self._lost


def _recovery_path(store_path: Path, run_id: int) -> Path | None:
    """A new empty file next to the lost store, else in the working directory, else in /tmp:
    created exclusively, so nothing planted under its name (a link, even a dangling one, or
    one planted after a check) is opened."""
    for folder in (store_path.parent, Path.cwd(), Path(tempfile.gettempdir())):
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            continue
        for attempt in range(1, 100):
            suffix = "" if attempt == 1 else f"-{attempt}"
            candidate = folder / f"perflab-recovered-run{run_id}{suffix}.db"
            try:
                os.close(
                    os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
                )
            except FileExistsError:
                continue
            except OSError:
                break  # not writable after all: the next folder
            return candidate
    return None
