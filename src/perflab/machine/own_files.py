"""Files and folders in perflab's own caches, written and removed without following a link
someone planted there.

A file is written to a new temporary beside its name (created exclusively) and renamed over
it: a rename replaces a planted link, it never writes through one. A folder below a cache's
root is used only when each folder on the way down is a real directory: a link there would
carry writes, and the removal of old entries, into a folder perflab did not create. The root
itself is the user's choice and may be a link (a cache moved to another disk).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path


def replace_file(path: Path, data: bytes) -> None:
    """`data` as the whole content of `path`, through a fresh temporary renamed over it
    (OSError when it cannot be written)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            os.fchmod(stream.fileno(), _plain_mode())  # mkstemp's 0600, as a plain new file
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def own_folder(root: Path, folder: Path) -> Path:
    """`folder`, below `root`, made where missing one level at a time; OSError when a folder
    on the way is a link or not a directory (nothing is made past it)."""
    root.mkdir(parents=True, exist_ok=True)
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(current)
        if not stat.S_ISDIR(os.lstat(current).st_mode):
            raise OSError(
                errno.ENOTDIR, "a link or a file where perflab keeps a folder of its cache", current
            )
    return folder


def remove_tree(path: Path) -> None:
    """The folder at `path` and what it holds; a link there is removed as a link (what it
    points to is not perflab's). Errors are ignored: what is left is removed next time."""
    try:
        found = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(found.st_mode):
        shutil.rmtree(path, ignore_errors=True)  # never follows a link inside it
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _plain_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask
