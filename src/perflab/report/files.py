"""Writing a file the user named (a report, an export, the history index) without following a
link perflab did not make.

The text goes to a new temporary file in the target's folder (created exclusively, so nothing
planted there is opened) and is renamed over the target: a rename replaces a name and never
writes through it. A target that is already a symbolic link is refused rather than replaced
(the user may have meant its destination); so is one owned by another user in a sticky folder
(`/tmp`), where that user can swap it for a link at any moment. A device or pipe (`/dev/null`)
is written in place: renaming over it would replace the device node; a pipe nobody reads is
refused (writing to it would wait forever).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from perflab.records.errors import PerflabError


def write_file(path: Path | str, text: str) -> None:
    """`text` as the whole content of the file at `path` (see the module's docstring)."""
    path = Path(path)
    found = _existing(path)
    if found is not None and (stat.S_ISCHR(found.st_mode) or stat.S_ISFIFO(found.st_mode)):
        _write_in_place(path, text)
        return
    folder = path.parent
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise _cannot(path, error) from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            # mkstemp makes the file 0600: give it the mode a plain new file would have
            os.fchmod(stream.fileno(), found.st_mode & 0o7777 if found else _new_file_mode())
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise _cannot(path, error) from error


def check_target(path: Path | str) -> None:
    """Refuse, before any work, a target write_file would refuse after it."""
    _existing(Path(path))


def _existing(path: Path) -> os.stat_result | None:
    """The target as it is now, refused when writing it would follow or race a link."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _cannot(path, error) from error
    if stat.S_ISLNK(found.st_mode):
        raise PerflabError(
            f"refusing to write {path}: it is a symbolic link (to {os.readlink(path)!r}), and "
            "perflab does not write through a link it did not make",
            hint="remove the link or name another file (- writes to standard output)",
        )
    if stat.S_ISDIR(found.st_mode):
        raise PerflabError(f"cannot write {path}: it is a directory", hint="name a file")
    if found.st_uid != os.geteuid() and _is_sticky(path.parent):
        raise PerflabError(
            f"refusing to write {path}: it belongs to another user (uid {found.st_uid}) in the "
            f"shared folder {path.parent}, who could replace it with a link at any moment",
            hint="name a file in a folder of your own",
        )
    return found


def _is_sticky(folder: Path) -> bool:
    try:
        return bool(os.stat(folder).st_mode & stat.S_ISVTX)
    except OSError:
        return False


def _write_in_place(path: Path, text: str) -> None:
    try:
        # non-blocking: opening a pipe with no reader fails at once instead of waiting
        handle = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise PerflabError(
                f"cannot write {path}: it is a pipe (FIFO) that nobody is reading",
                hint="start its reader first, or name a file",
            ) from error
        raise _cannot(path, error) from error
    try:
        os.set_blocking(handle, True)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
    except OSError as error:
        raise _cannot(path, error) from error


def _new_file_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _cannot(path: Path, error: OSError) -> PerflabError:
    return PerflabError(f"cannot write {path}: {error.strerror or error}", hint="check the path")
