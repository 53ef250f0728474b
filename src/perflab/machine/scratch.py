"""perflab's folders in the temporary directory: private, named after the process that made
them, and removed by the next run when that process was killed before it could remove them.

A folder is `perflab-KIND-PID-RANDOM`, made by `tempfile.mkdtemp` (mode 0700: the user's
uncommitted diff or a profile is nobody else's). A run killed with SIGKILL (or a power cut)
never removes its own; the next run removes every such folder that is a real directory owned
by this user whose PID is no longer running. Nothing else is touched.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# perflab-KIND-PID-RANDOM, KIND a word of letters (check, caches, callgrind ...)
_NAME = re.compile(r"^perflab-([a-z]+(?:-[a-z]+)*)-([0-9]+)-[^/]+$")
# the parents this OS process swept: module-level, as the sweep is once per process (the
# orphans are there when it starts; later ones are the next process's to remove)
_swept: set[str] = set()


def remove_orphans(parent: Path) -> None:
    """Remove the folders perflab processes that are gone left in `parent` (once a process)."""
    key = str(parent)
    if key in _swept:
        return
    _swept.add(key)
    try:
        found = list(parent.glob("perflab-*-*-*"))
    except OSError:
        return
    for folder in found:
        named = _NAME.match(folder.name)
        if named is None or int(named.group(2)) == os.getpid():
            continue
        try:
            status = folder.lstat()
        except OSError:
            continue
        mine = stat.S_ISDIR(status.st_mode) and status.st_uid == os.geteuid()
        if mine and not _running(int(named.group(2))):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or no such pid here: not provably gone
    return True


def make_private_folder(kind: str, parent: str | None = None) -> Path:
    """A new private folder `perflab-KIND-PID-RANDOM` (in $TMPDIR unless `parent`), after the
    folders of killed runs there are removed. The caller removes it."""
    where = parent or tempfile.gettempdir()
    remove_orphans(Path(where))
    return Path(tempfile.mkdtemp(prefix=f"perflab-{kind}-{os.getpid()}-", dir=where))


@contextmanager
def private_folder(kind: str, parent: str | None = None) -> Iterator[str]:
    """`make_private_folder`, removed at the end (TemporaryDirectory's use, with perflab's
    name and clean-up of killed runs' folders)."""
    folder = make_private_folder(kind, parent)
    try:
        yield str(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
