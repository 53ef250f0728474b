"""A real PostgreSQL server in a temporary directory, for the tests and bench/ of the team store.

It listens on a unix socket only (no TCP port to collide with), trusts local connections, and is
stopped (`pg_ctl stop -m immediate`) and removed at the end. PostgreSQL refuses to run as root:
as root, the server runs as the `postgres` user (Debian's package creates it), else as `nobody`.
"""

from __future__ import annotations

import contextlib
import getpass
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder with initdb and pg_ctl, or None."""
    for folder in BIN_DIRS:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found and shutil.which("pg_ctl") else None


def _server_user() -> str | None:
    """Who runs the server: None (this user) unless this is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and no postgres or nobody user to run PostgreSQL as")


@contextlib.contextmanager
def postgresql_server() -> Iterator[str]:
    """Start a server; yield the URL of its `postgres` database (create others with it)."""
    folder = binaries()
    if folder is None:
        raise RuntimeError("PostgreSQL is not installed (scripts/setup.sh --test installs it)")
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="perflab-pg-"))
    prefix: list[str] = []
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
        prefix = ["runuser", "-u", user, "--"]
    data, socket_dir = root / "data", root
    role = user or getpass.getuser()
    subprocess.run(
        [*prefix, str(folder / "initdb"), "-D", str(data), "-U", role, "--auth=trust",
         "--no-sync", "-E", "UTF8"],
        check=True, capture_output=True, cwd=root,
    )  # fmt: skip
    options = (
        f"-c listen_addresses='' -c unix_socket_directories={socket_dir} -c fsync=off"
        " -c max_connections=100 -c shared_buffers=16MB"
    )
    subprocess.run(
        [*prefix, str(folder / "pg_ctl"), "-D", str(data), "-o", options, "-l",
         str(root / "server.log"), "-w", "-t", "60", "start"],
        check=True, capture_output=True, cwd=root,
    )  # fmt: skip
    try:
        yield f"postgresql://{role}@/postgres?host={socket_dir}"
    finally:
        subprocess.run(
            [*prefix, str(folder / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False, capture_output=True, cwd=root,
        )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


_database_numbers = itertools.count()


def new_database(server_url: str, name: str | None = None) -> str:
    """Create an empty database on the server (named `name`, else one not used before in this
    process); its URL."""
    import psycopg

    name = name or f"perflab_test_{next(_database_numbers)}"
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"'.encode())
    return server_url.replace("/postgres?", f"/{name}?", 1)
