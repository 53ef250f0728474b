"""A new user's hostile inputs, run through the command line: planted links, foreign files,
password-bearing store URLs, odd names and odd stores that tests/faults does not already try.

    PYTHONPATH=src .venv/bin/python bench/hostile_inputs.py [--markdown PATH]

Each case makes its inputs in a fresh folder, runs `perflab ...` there and checks four things:
no traceback; the exit status expected (a refusal: non-zero, with a message naming its cause);
the secret in no output (stdout, stderr, any file written); every foreign file byte for byte as
it was; and no raw ESC byte printed (a terminal would run it). Prints one line per case and
exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import platform
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SECRET = "Hostil3S3cretPw"
CLOSED = "127.0.0.1:55999"  # nothing answers there
FAST = ("--budget", "0.3", "--min-generations", "2")
RUN = ("run", "--cmd", "true", "-q", *FAST)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    # makes the inputs in the folder; returns the command's arguments
    setup: Callable[[Path], list[str]]
    # a refusal: non-zero, and each of these words in its message; None: exit 0 expected
    refused: tuple[str, ...] | None
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    # a file or folder under the case's folder (or absolute) that must not change
    foreign: tuple[str, ...] = ("outside",)


@dataclasses.dataclass(frozen=True)
class Outcome:
    case: str
    status: int
    problems: tuple[str, ...]
    said: str


def _outside(folder: Path) -> Path:
    """Another user's folder, with a file perflab must never touch."""
    outside = folder / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "private.txt").write_text("not perflab's\n")
    return outside


def _shared(folder: Path) -> Path:
    shared = folder / "shared"
    shared.mkdir(exist_ok=True)
    shared.chmod(0o1777)
    return shared


def _foreign_sqlite(path: Path, sql: str) -> Path:
    with sqlite3.connect(path) as connection:
        connection.executescript(sql)
    connection.close()
    return path


# ---- the cases


def dangling_csv(folder: Path) -> list[str]:
    _outside(folder)
    (_shared(folder) / "r.csv").symlink_to(folder / "outside" / "new.csv")
    return [*RUN, "--store", "p.db", "--export-csv", "shared/r.csv"]


def linked_html_folder_file(folder: Path) -> list[str]:
    _outside(folder)
    (_shared(folder) / "r.html").symlink_to(folder / "outside" / "private.txt")
    return [*RUN, "--store", "p.db", "--html", "shared/r.html"]


def fifo_report(folder: Path) -> list[str]:
    _outside(folder)
    os.mkfifo(_shared(folder) / "r.md")
    return [*RUN, "--store", "p.db", "--markdown", "shared/r.md"]


def full_device_json(folder: Path) -> list[str]:
    _outside(folder)
    return [*RUN, "--store", "p.db", "--json", "/dev/full"]


def planted_wal(folder: Path) -> list[str]:
    _outside(folder)
    (_shared(folder) / "s.db-wal").symlink_to(folder / "outside" / "private.txt")
    return [*RUN, "--store", "shared/s.db"]


def planted_journal(folder: Path) -> list[str]:
    _outside(folder)
    (_shared(folder) / "s.db-journal").symlink_to(folder / "outside" / "private.txt")
    return [*RUN, "--store", "shared/s.db"]


def planted_shm(folder: Path) -> list[str]:
    _outside(folder)
    (_shared(folder) / "s.db-shm").symlink_to(folder / "outside" / "private.txt")
    return [*RUN, "--store", "shared/s.db"]


def foreign_application_id(folder: Path) -> list[str]:
    outside = _outside(folder)
    _foreign_sqlite(outside / "app.db", "PRAGMA application_id = 1179209038;")
    return [*RUN, "--store", "outside/app.db"]


def foreign_wal_database(folder: Path) -> list[str]:
    outside = _outside(folder)
    _foreign_sqlite(
        outside / "app.db",
        "PRAGMA journal_mode = WAL; CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
        "INSERT INTO notes (body) VALUES ('theirs');",
    )
    return ["doctor", "--store", "outside/app.db"]


def link_to_foreign_sqlite(folder: Path) -> list[str]:
    outside = _outside(folder)
    _foreign_sqlite(outside / "app.db", "CREATE TABLE samples (x INTEGER);")
    (folder / "p.db").symlink_to(outside / "app.db")
    return [*RUN, "--store", "p.db"]


def cache_entry_key_dotdot(folder: Path) -> list[str]:
    _outside(folder)
    cache = folder / "outside" / "cache"
    cache.mkdir()
    entry = {"key": "..", "path": str(folder / "outside"), "repository": str(folder)}
    (cache / "0123456789abcdef0123.json").write_text(json.dumps(entry))
    return ["cache", "prune", "--cache-dir", "outside/cache"]


def analysis_cache_linked(folder: Path) -> list[str]:
    _outside(folder)
    cache = folder / "analysis"
    cache.mkdir()
    (cache / "v1").symlink_to(folder / "outside")
    shutil.copy("/bin/true", folder / "prog")  # the asm lens caches its symbol tables
    return ["run", "--cmd", "./prog", "-v", "A", "-v", "B", "-q", *FAST, "--store", "p.db",
            "--metric", "asm"]  # fmt: skip


def password_in_environment(folder: Path) -> list[str]:
    _outside(folder)
    return ["list"]


def password_in_perflab_toml(folder: Path) -> list[str]:
    _outside(folder)
    (folder / ".git").mkdir()
    (folder / "perflab.toml").write_text(f'store = "postgresql://u:{SECRET}@{CLOSED}/db"\n')
    return [*RUN]


def password_in_pyproject(folder: Path) -> list[str]:
    _outside(folder)
    (folder / ".git").mkdir()
    (folder / "pyproject.toml").write_text(
        f'[tool.perflab]\nstore = "postgresql:///db?host=127.0.0.1&port=55999&password={SECRET}"\n'
    )
    return ["doctor"]


def password_postgres_scheme(folder: Path) -> list[str]:
    _outside(folder)
    return ["show", "latest", "--store", f"postgres://u:{SECRET}@{CLOSED}/db"]


def password_percent_encoded(folder: Path) -> list[str]:
    _outside(folder)
    encoded = SECRET[:6] + "%40" + SECRET[6:]
    return ["list", "--json", "-", "--store", f"postgresql://u:{encoded}@{CLOSED}/db"]


def password_bad_port(folder: Path) -> list[str]:
    _outside(folder)
    return [*RUN, "--store", f"postgresql://u:{SECRET}@127.0.0.1:notaport/db"]


def control_characters_in_store_name(folder: Path) -> list[str]:
    _outside(folder)
    (folder / "d\x1b[31m<b>.db").write_text("not sqlite at all\n")
    return [*RUN, "--store", "d\x1b[31m<b>.db"]


def html_in_report_path(folder: Path) -> list[str]:
    _outside(folder)
    (folder / "<script>x").mkdir()
    return [*RUN, "--store", "p.db", "--json", "<script>x"]


def proc_file_store(folder: Path) -> list[str]:
    _outside(folder)
    return [*RUN, "--store", "/proc/self/status"]


def short_sqlite_header(folder: Path) -> list[str]:
    _outside(folder)
    (folder / "outside" / "cut.db").write_bytes(b"SQLite format 3\x00\x10\x00")
    return [*RUN, "--store", "outside/cut.db"]


def truncated_binary(folder: Path) -> list[str]:
    _outside(folder)
    data = Path("/bin/true").read_bytes()[:300]
    (folder / "prog").write_bytes(data)
    (folder / "prog").chmod(0o755)
    return ["run", "--cmd", "./prog", "-q", *FAST, "--store", "p.db"]


CASES = (
    Case("--export-csv to a dangling link in a shared folder", dangling_csv, ("link",)),
    Case("--html to a link to another file", linked_html_folder_file, ("link",)),
    Case("--markdown to a FIFO nobody reads", fifo_report, ("r.md",)),
    Case("--json to /dev/full", full_device_json, ("/dev/full",)),
    Case("a planted -wal link beside a new store", planted_wal, ("s.db-wal", "link")),
    Case("a planted -journal link beside a new store", planted_journal, ("s.db-journal", "link")),
    Case("a planted -shm link beside a new store", planted_shm, ("s.db-shm", "link")),
    Case("an empty SQLite file of another application", foreign_application_id, ("not a perflab",)),
    Case("doctor on another program's WAL database", foreign_wal_database, ("not a perflab",)),
    Case(
        "--store a link to another program's SQLite file",
        link_to_foreign_sqlite,
        ("not a perflab",),
    ),
    Case("cache prune, an entry whose key is '..'", cache_entry_key_dotdot, None),
    Case(
        "an analysis cache whose folder is a link",
        analysis_cache_linked,
        None,
        env={"PERFLAB_ANALYSIS_CACHE_DIR": "analysis"},
    ),
    Case(
        "PERFLAB_STORE with a password",
        password_in_environment,
        ("55999",),
        env={"PERFLAB_STORE": f"postgresql://u:{SECRET}@{CLOSED}/db"},
    ),
    Case("perflab.toml with a password", password_in_perflab_toml, ("55999",)),
    Case("doctor, pyproject.toml with ?password=", password_in_pyproject, None),
    Case("postgres:// scheme with a password", password_postgres_scheme, ("55999",)),
    Case("a percent-encoded password", password_percent_encoded, ("55999",)),
    Case("a password in a URL with a bad port", password_bad_port, ("port",)),
    Case("a store name with ESC and HTML", control_characters_in_store_name, ("not a perflab",)),
    Case("--json to a directory named <script>", html_in_report_path, ("directory",)),
    Case("--store /proc/self/status", proc_file_store, ("status",), foreign=()),
    Case("a store cut inside its SQLite header", short_sqlite_header, ("cut.db",)),
    Case("a truncated binary as the command", truncated_binary, ("./prog",)),
)


# ---- running and checking


def snapshot(paths: list[Path]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for root in paths:
        for path in [root, *sorted(root.rglob("*"))] if root.is_dir() else [root]:
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(mode):
                found[str(path)] = b"link:" + os.readlink(path).encode()
            elif stat.S_ISREG(mode):
                found[str(path)] = path.read_bytes()
            else:
                found[str(path)] = b"<not a file>"
    return found


def written_text(folder: Path, before: set[str]) -> str:
    """Every regular file under the folder that the case did not make itself."""
    text = []
    for path in folder.rglob("*"):
        if str(path) in before or path.is_symlink() or not path.is_file():
            continue
        text.append(path.read_bytes().decode("utf-8", "replace"))
    return "".join(text)


def run_case(case: Case, python: str, source: str) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="perflab-hostile-") as name:
        folder = Path(name)
        args = case.setup(folder)
        foreign = [Path(p) if os.path.isabs(p) else folder / p for p in case.foreign]
        before = snapshot(foreign)
        made = {str(p) for p in folder.rglob("*")}
        env = {**os.environ, "PYTHONPATH": source, **case.env}
        env.setdefault("PERFLAB_CACHE_DIR", str(folder / "builds"))
        env.setdefault("PERFLAB_ANALYSIS_CACHE_DIR", str(folder / "analysis"))
        try:
            done = subprocess.run(
                [python, "-m", "perflab.cli.main", *args],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                stdin=subprocess.DEVNULL,
            )
            status, said = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            status = -1
            said = f"(no answer in {expired.timeout:g} s)"
        problems = []
        if status == -1:
            problems.append("hung")
        if "Traceback" in said:
            problems.append("traceback")
        if "\x1b" in said:
            problems.append("a raw ESC byte printed")
        if case.refused is None and status != 0:
            problems.append(f"exit {status}, expected 0")
        if case.refused is not None:
            if status == 0:
                problems.append("exit 0, expected a refusal")
            missing = [w for w in case.refused if w not in said]
            if missing:
                problems.append(f"message lacks {missing}")
        every_output = said + written_text(folder, made)
        if SECRET in every_output or SECRET[:6] in every_output:
            problems.append("secret printed")
        if snapshot(foreign) != before:
            problems.append("foreign file changed")
        return Outcome(case.name, status, tuple(problems), " ".join(said.split())[:160])


def markdown(outcomes: list[Outcome], elapsed_s: float, command: str) -> str:
    failed = sum(1 for o in outcomes if o.problems)
    lines = [
        f"# Hostile inputs, {dt.date.today().isoformat()}",
        "",
        f"Machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}), as uid {os.geteuid()}.",
        f"Command: `{command}` ({elapsed_s:.0f} s).",
        "",
        f"{len(outcomes)} cases, {failed} with a problem. Checked for each: no traceback, no "
        "raw ESC byte; the expected exit status (a refusal: non-zero, its message naming the "
        "cause); the password in no output or written file; the foreign files byte for byte.",
        "",
        "| case | exit | problems | what perflab said (start) |",
        "|---|---|---|---|",
    ]
    for o in outcomes:
        said = o.said.replace("|", "\\|").replace("\x1b", "\\x1b").replace("<", "&lt;")
        lines.append(f"| {o.case} | {o.status} | {', '.join(o.problems) or 'none'} | {said} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", type=Path, help="write the result there")
    parser.add_argument("-k", help="only the cases whose name holds this")
    options = parser.parse_args()
    source = str(Path(__file__).resolve().parent.parent / "src")
    started = time.monotonic()
    outcomes = []
    for case in CASES:
        if options.k and options.k not in case.name:
            continue
        outcome = run_case(case, sys.executable, source)
        outcomes.append(outcome)
        verdict = "ok  " if not outcome.problems else "FAIL"
        print(f"{verdict} {case.name}: exit {outcome.status} {'; '.join(outcome.problems)}")
        if outcome.problems:
            print(f"     said: {outcome.said}")
    elapsed_s = time.monotonic() - started
    if options.markdown:
        command = "PYTHONPATH=src .venv/bin/python bench/hostile_inputs.py"
        options.markdown.write_text(markdown(outcomes, elapsed_s, command))
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
