"""The store survives what a machine does to it: read-only filesystems, empty, truncated and
corrupt files, a benchmark that deletes or replaces it mid-run, SIGKILL, a full disk, a closed
pipe. Each against a real store written by real runs."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perflab import api
from perflab.store.migrations import SCHEMA_VERSION
from perflab.store.sqlite import SqliteStore
from tests.support.cli_commands import COMMAND, FAST, perflab, start_perflab
from tests.support.store_rows import STORE
from tests.support.tagged_processes import Fault, processes_left

pytestmark = pytest.mark.integration

MARK = "PERFLABFAULTMARK"


def _run(cwd: Path, *extra: str, stmt: str = "sum(range(50))") -> subprocess.CompletedProcess[str]:
    return perflab(
        "run", "--stmt", stmt, "-v", "A", "-v", "B env.X=1", "-q", *FAST, *extra, cwd=cwd
    )


@pytest.fixture(scope="session")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with three complete runs; run 2's experiment is large (its setup holds a long
    string), so its row spills into overflow pages that a test can damage alone."""
    folder = tmp_path_factory.mktemp("seeded")
    assert _run(folder).returncode == 0
    big = _run(folder, "--setup", f"x = '{MARK * 600}'", stmt="len(x)")
    assert big.returncode == 0, big.stderr
    assert _run(folder).returncode == 0
    return folder / STORE


def _store_in(tmp_path: Path, seeded: Path) -> Path:
    target = tmp_path / STORE
    target.parent.mkdir()
    shutil.copy(seeded, target)
    return target


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _samples(path: Path) -> int:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(connection.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
    finally:
        connection.close()


def _quick_check(path: Path) -> str:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(connection.execute("PRAGMA quick_check").fetchone()[0])
    finally:
        connection.close()


def _damage_run_2(path: Path) -> None:
    """Break the overflow chain of run 2's row (its experiment, thousands of bytes): each
    overflow page holding the marker that points to a next one gets an out-of-range 'next
    page' number. Leaf pages (flag byte 0x0d, shared with runs 1 and 3) are not touched."""
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    damaged = 0
    for start in range(page_size, len(data), page_size):
        page = data[start : start + page_size]
        if MARK.encode() in page and page[0] == 0 and int.from_bytes(page[:4], "big") != 0:
            data[start : start + 4] = (0x7FFFFFF0).to_bytes(4, "big")
            damaged += 1
    assert damaged > 0
    path.write_bytes(bytes(data))


def _flat(text: str) -> str:
    """Messages without the line breaks rich adds to fit 80 columns."""
    return "".join(text.split())


def _list_json(cwd: Path, *args: str) -> list[dict[str, object]]:
    done = perflab("list", "--json", "-", *args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


# ---- reading never changes a store


def test_reading_commands_never_change_the_store(tmp_path: Path, seeded: Path) -> None:
    """list, show, compare and doctor --store leave the store's file byte for byte unchanged"""
    store = _store_in(tmp_path, seeded)
    before = _digest(store)
    for args in (["list"], ["show", "1"], ["compare", "1", "3"], ["doctor", "--store"]):
        done = perflab(*args, cwd=tmp_path)
        assert done.returncode == 0, (args, done.stderr)
    assert _digest(store) == before


def test_an_empty_file_is_an_empty_store_and_stays_empty(tmp_path: Path) -> None:
    """a 0-byte store file: list says it holds no runs, show says it is empty; nothing is
    written into it"""
    empty = tmp_path / "empty.db"
    empty.touch()
    listed = perflab("list", "--store", "empty.db", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "holds no runs" in listed.stdout
    shown = perflab("show", "--store", "empty.db", cwd=tmp_path)
    assert shown.returncode == 2 and "the store is empty" in shown.stderr
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_a_missing_store_is_not_created_by_reading(tmp_path: Path) -> None:
    """list on a store that does not exist: status 2, and no file or folder appears"""
    done = perflab("list", cwd=tmp_path)
    assert done.returncode == 2 and _flat("there is no perflab store") in _flat(done.stderr)
    assert list(tmp_path.iterdir()) == []


def _read_only_mount_works(folder: Path) -> bool:
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount --bind {folder} {folder}"],
        capture_output=True,
    )
    return probe.returncode == 0


def _in_read_only(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """perflab with `folder` mounted read-only (a user and mount namespace: no root needed)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && cd "$0" && exec "$@"'
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, str(folder)] + [*COMMAND, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_store_on_a_read_only_filesystem_is_read_and_says_runs_cannot_be_written(
    tmp_path: Path, seeded: Path
) -> None:
    """store on a read-only filesystem: list and show work; run says a run cannot be written
    there (status 2)"""
    if shutil.which("unshare") is None or not _read_only_mount_works(tmp_path):
        pytest.skip("cannot mount read-only here (no user namespaces)")
    store = _store_in(tmp_path, seeded)
    before = _digest(store)
    listed = _in_read_only(tmp_path, "list", "--json", "-")
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [3, 2, 1]
    shown = _in_read_only(tmp_path, "show", "2", "--json", "-", "-q")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["run_id"] == 2
    doctor = _in_read_only(tmp_path, "doctor", "--store")
    assert doctor.returncode == 0 and "read-only filesystem" in doctor.stdout
    run = _in_read_only(tmp_path, "run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST)
    assert run.returncode == 2
    assert _flat("a run cannot be written") in _flat(run.stderr)
    assert _flat("read-only filesystem") in _flat(run.stderr)
    assert _digest(store) == before


# ---- damage is detected, named, and not made worse


def test_a_corrupt_page_is_reported_with_the_readable_runs(
    tmp_path: Path, seeded: Path, fault: Fault
) -> None:
    """a corrupt page: list and show warn and name the readable runs; show of the damaged run
    fails with status 2; doctor --store exits 2; the file is not changed"""
    store = _store_in(tmp_path, seeded)
    _damage_run_2(store)
    before = _digest(store)
    listed = perflab("list", "--json", "-", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "is damaged" in listed.stderr
    assert _flat("readable runs: 1, 3, unreadable: 2") in _flat(listed.stderr)
    readable = json.loads(listed.stdout)
    assert [r["run_id"] for r in readable] == [3, 1]
    fault.samples_kept = sum(int(r["n_samples"]) for r in readable)
    good = perflab("show", "3", "--json", "-", "-q", cwd=tmp_path)
    assert good.returncode == 0 and json.loads(good.stdout)["run_id"] == 3
    assert "is damaged" in good.stderr
    bad = perflab("show", "2", cwd=tmp_path)
    assert bad.returncode == 2 and _flat("run 2 cannot be read") in _flat(bad.stderr)
    doctor = perflab("doctor", "--store", "--json", "-", cwd=tmp_path)
    assert doctor.returncode == 2
    health = json.loads(doctor.stdout)
    assert health["damaged"] and health["readable_runs"] == [1, 3]
    assert health["unreadable_runs"] == [2]
    assert _digest(store) == before


def test_no_run_is_written_into_a_damaged_store(tmp_path: Path, seeded: Path) -> None:
    """perflab run into a damaged store: refused before measuring (status 2), file unchanged"""
    store = _store_in(tmp_path, seeded)
    _damage_run_2(store)
    before = _digest(store)
    done = _run(tmp_path)
    assert done.returncode == 2
    assert _flat("is damaged") in _flat(done.stderr)
    assert _flat("no run is written into it") in _flat(done.stderr)
    assert _digest(store) == before


def test_a_truncated_store_is_damaged_not_foreign(tmp_path: Path, seeded: Path) -> None:
    """a store cut in half: called damaged (not 'not a perflab store'), status 2, unchanged"""
    store = _store_in(tmp_path, seeded)
    store.write_bytes(store.read_bytes()[: store.stat().st_size // 2])
    before = _digest(store)
    for args in (["list"], ["show", "1"], ["doctor", "--store"]):
        done = perflab(*args, cwd=tmp_path)
        assert done.returncode == 2, args
        assert "damaged" in done.stdout + done.stderr, args
        assert "not a perflab store" not in done.stderr
    assert _digest(store) == before


def test_a_file_that_is_not_sqlite_is_named_so(tmp_path: Path) -> None:
    """--store pointing at a text file: 'not a perflab store', status 2, the file untouched"""
    other = tmp_path / "notes.txt"
    other.write_text("my notes\n" * 100)
    for args in (["list", "--store", "notes.txt"], ["run", "--store", "notes.txt"]):
        extra = [] if args[0] == "list" else ["--stmt", "pass", "-v", "A", "-v", "B", *FAST]
        done = perflab(*args, *extra, cwd=tmp_path)
        assert done.returncode == 2 and _flat("not a perflab store") in _flat(done.stderr)
    assert other.read_text() == "my notes\n" * 100


def test_a_directory_as_store_is_named_so(tmp_path: Path) -> None:
    """--store pointing at a directory: run and list say so (status 2), nothing is created"""
    (tmp_path / "dir").mkdir()
    run = _run(tmp_path, "--store", "dir")
    assert run.returncode == 2 and _flat("it is a directory") in _flat(run.stderr)
    listed = perflab("list", "--store", "dir", cwd=tmp_path)
    assert listed.returncode == 2 and _flat("it is a directory") in _flat(listed.stderr)
    assert list((tmp_path / "dir").iterdir()) == []


def test_an_older_schema_is_read_without_migrating_and_migrated_by_a_run(
    tmp_path: Path, seeded: Path
) -> None:
    """a store of schema 1 (before runs recorded their process): read as it is; the next run
    migrates it and all runs stay readable"""
    store = _store_in(tmp_path, seeded)
    connection = sqlite3.connect(store)
    for column in ("owner_pid", "owner_start_ticks", "owner_boot_id", "owner_host"):
        connection.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    for column in ("run_queue_ns", "cpu_ns", "involuntary_switches"):  # schema 3's
        connection.execute(f"ALTER TABLE samples DROP COLUMN {column}")
    connection.execute("PRAGMA user_version = 1")
    connection.close()
    before = _digest(store)
    assert [r["status"] for r in _list_json(tmp_path)] == ["complete"] * 3
    assert _digest(store) == before
    assert _run(tmp_path).returncode == 0
    assert [r["run_id"] for r in _list_json(tmp_path)] == [4, 3, 2, 1]
    connection = sqlite3.connect(store)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    connection.close()


# ---- the store pulled from under a run


def test_a_benchmark_that_deletes_the_store_fails_the_run_and_the_runs_are_recovered(
    tmp_path: Path, seeded: Path, fault: Fault
) -> None:
    """the statement runs shutil.rmtree('.perflab') mid-run: status 2 naming the deletion,
    every earlier run and this one saved to a recovery file, no process left"""
    _store_in(tmp_path, seeded)
    done = _run(
        tmp_path,
        "--setup",
        "import shutil",
        stmt="shutil.rmtree('.perflab', ignore_errors=True)",
    )
    assert done.returncode == 2, done.stderr
    message = _flat(done.stderr)
    assert _flat("was removed while run 4 was being written") in message
    recovery = tmp_path / "perflab-recovered-run4.db"
    assert _flat(f"saved in {recovery}") in message
    assert not (tmp_path / STORE).exists()
    runs = _list_json(tmp_path, "--store", str(recovery))
    assert [(r["run_id"], r["status"]) for r in runs] == [
        (4, "incomplete"),
        (3, "complete"),
        (2, "complete"),
        (1, "complete"),
    ]
    assert _quick_check(recovery) == "ok"
    fault.samples_kept = _samples(recovery)
    assert processes_left(fault.tag) == []


def test_a_store_replaced_under_a_run_is_detected_and_the_new_file_left_alone(
    tmp_path: Path, seeded: Path, fault: Fault
) -> None:
    """the statement renames another file over the store mid-run: status 2, the run saved to
    a recovery file, the file now at the path untouched"""
    _store_in(tmp_path, seeded)
    other = tmp_path / "other.db"
    shutil.copy(seeded, other)
    expected = _digest(other)
    done = _run(
        tmp_path,
        "--setup",
        "import os",
        stmt="os.path.exists('other.db') and os.replace('other.db', '.perflab/perflab.db')",
    )
    assert done.returncode == 2, done.stderr
    assert _flat("replaced by another file") in _flat(done.stderr)
    assert _digest(tmp_path / STORE) == expected
    recovery = tmp_path / ".perflab" / "perflab-recovered-run4.db"
    assert [r["run_id"] for r in _list_json(tmp_path, "--store", str(recovery))][0] == 4
    fault.samples_kept = _samples(recovery)
    assert processes_left(fault.tag) == []


# ---- runs whose process died


def _wait_for_samples(store: Path, run_id: int, timeout_s: float = 120) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            try:
                count = connection.execute(
                    "SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
            finally:
                connection.close()
            if count > 0:
                return int(count)
        except sqlite3.Error:
            pass
        time.sleep(0.2)
    raise AssertionError("the run stored no sample")


def test_a_run_killed_with_sigkill_reads_as_interrupted(
    tmp_path: Path, seeded: Path, fault: Fault
) -> None:
    """SIGKILL of perflab mid-run: the run reads as `interrupted` (not `running` forever), its
    samples are kept and shown, the store is intact, no process left"""
    store = _store_in(tmp_path, seeded)
    process = start_perflab(
        "run", "--stmt", "sum(range(1000))", "-v", "A", "-v", "B", "-q", "--budget", "60",
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for_samples(store, 4)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert processes_left(fault.tag) == []
    (latest, *_) = _list_json(tmp_path)
    assert (latest["run_id"], latest["status"]) == (4, "interrupted")
    assert isinstance(latest["n_samples"], int) and latest["n_samples"] > 0
    fault.samples_kept = latest["n_samples"]
    shown = perflab("show", "4", "--json", "-", "-q", cwd=tmp_path)
    assert shown.returncode == 0 and json.loads(shown.stdout)["status"] == "interrupted"
    assert _quick_check(store) == "ok"


def test_a_run_alive_in_another_process_reads_as_running(tmp_path: Path, fault: Fault) -> None:
    """while a run measures, a reader beside it sees `running` (its process is alive), and
    the run completes"""
    process = start_perflab(
        "run", "--stmt", "sum(range(1000))", "-v", "A", "-v", "B", "-q", "--budget", "6",
        "--min-generations", "4", cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_for_samples(tmp_path / STORE, 1)
        # read in this (other) process at once: starting `perflab list` took longer than the
        # rest of the run on a loaded machine, so the reader saw it complete
        statuses = {r.status.value for r in api.list_runs(tmp_path / STORE)}
    finally:
        _, stderr = process.communicate(timeout=300)
    assert statuses == {"running"}
    assert process.returncode == 0, stderr
    assert [r["status"] for r in _list_json(tmp_path)] == ["complete"]
    assert processes_left(fault.tag) == []


def test_a_full_disk_fails_the_run_with_a_message_and_keeps_the_store(
    tmp_path: Path, seeded: Path, fault: Fault
) -> None:
    """the disk fills mid-run (a file-size limit): status 2 naming the store, the run not left
    `running`, what was written kept, the store intact, no process left"""
    store = _store_in(tmp_path, seeded)
    limit = store.stat().st_size + 24 * 1024

    def limit_file_size() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--stmt", "sum(range(100))",
         "-v", "A", "-v", "B", "-q", "--budget", "10"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=limit_file_size,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert _flat("cannot write to the store") in _flat(done.stderr)
    (latest, *_) = _list_json(tmp_path)
    assert latest["run_id"] == 4 and latest["status"] in ("incomplete", "interrupted")
    fault.samples_kept = int(latest["n_samples"])  # type: ignore[call-overload]
    assert _quick_check(store) == "ok"
    assert processes_left(fault.tag) == []


# ---- the reader goes away


@pytest.mark.parametrize("args", [["show", "1"], ["show", "1", "--json", "-"], ["list"]], ids=str)
def test_a_closed_pipe_exits_141_quietly(tmp_path: Path, seeded: Path, args: list[str]) -> None:
    """`perflab show 1 | head`: the reader goes away; status 141, no traceback"""
    _store_in(tmp_path, seeded)
    process = start_perflab(*args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before perflab writes a byte
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 141, stderr
    assert "Traceback" not in stderr and stderr == ""


def test_readers_loop_beside_a_running_run(tmp_path: Path, fault: Fault) -> None:
    """list and show in a loop while a run writes: every read succeeds, the run completes and
    nothing is lost"""
    process = start_perflab(
        "run", "--stmt", "sum(range(1000))", "-v", "A", "-v", "B", "-q", "--budget", "3",
        "--min-generations", "2", cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    reads = 0
    try:
        _wait_for_samples(tmp_path / STORE, 1)
        while process.poll() is None and reads < 20:
            for args in (["list"], ["show", "1", "--json", "-", "-q"]):
                done = perflab(*args, cwd=tmp_path)
                assert done.returncode == 0, (args, done.stderr)
                assert "damaged" not in done.stderr
                reads += 1
    finally:
        _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert reads > 0
    assert _quick_check(tmp_path / STORE) == "ok"
    assert processes_left(fault.tag) == []


def test_concurrent_runs_on_one_store_keep_every_sample(tmp_path: Path, fault: Fault) -> None:
    """two runs writing one store at once, a reader beside them: both complete, each run's
    samples are its own, the store is intact"""
    processes = [
        start_perflab(
            "run",
            "--stmt",
            stmt,
            "-v",
            "A",
            "-v",
            "B",
            "-q",
            "--budget",
            "2",
            "--min-generations",
            "2",
            "--json",
            f"run{index}.json",
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for index, stmt in enumerate(("sum(range(100))", "sorted(range(100))"))
    ]
    try:
        _wait_for_samples(tmp_path / STORE, 1)
        while any(p.poll() is None for p in processes):
            assert perflab("list", "-q", cwd=tmp_path).returncode == 0
    finally:
        errors = [p.communicate(timeout=300)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0], errors
    ids = {json.loads((tmp_path / f"run{i}.json").read_text())["run_id"] for i in (0, 1)}
    assert ids == {1, 2}
    runs = {r["run_id"]: r for r in _list_json(tmp_path)}
    assert {r["status"] for r in runs.values()} == {"complete"}
    assert {tuple(r["benchmarks"]) for r in runs.values()} == {
        ("sum(range(100))",),
        ("sorted(range(100))",),
    }
    assert _quick_check(tmp_path / STORE) == "ok"
    assert processes_left(fault.tag) == []


def _open_at_once(path: str, start: multiprocessing.synchronize.Barrier) -> None:
    start.wait()
    SqliteStore.open(Path(path)).close()


@pytest.mark.parametrize("exists", [False, True], ids=["no-file", "empty-file"])
def test_processes_opening_a_new_store_at_once_all_open_it(tmp_path: Path, exists: bool) -> None:
    """Three processes open one new store at the same moment, 25 times: each opens it. Without
    waiting out the switch to WAL, SQLite told one of them "database is locked" in about 4 of
    10 rounds here (two `perflab run`s started together in CI failed so)."""
    context = multiprocessing.get_context("fork")
    for round_number in range(25):
        path = tmp_path / str(round_number) / "perflab.db"
        if exists:
            path.parent.mkdir()
            path.touch()
        start = context.Barrier(3)
        processes = [
            context.Process(target=_open_at_once, args=(str(path), start)) for _ in range(3)
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
        assert [p.exitcode for p in processes] == [0, 0, 0], f"round {round_number}"
        store = SqliteStore.open(path, create=False)
        assert store.list_runs() == []
        store.close()


# ---- only perflab's own stores are written


def _foreign_database(path: Path, version: int = 7) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE contacts (name TEXT)")
    connection.execute("INSERT INTO contacts VALUES ('someone')")
    connection.execute(f"PRAGMA user_version = {version}")
    connection.commit()
    connection.close()


def test_another_programs_sqlite_file_is_refused_untouched(tmp_path: Path) -> None:
    """--store on another program's SQLite database: `run` refuses it before writing anything
    (no perflab tables, no switch to WAL, user_version and every byte unchanged), status 2"""
    other = tmp_path / "other.sqlite"
    _foreign_database(other)
    before = _digest(other)
    done = _run(tmp_path, "--store", str(other))
    assert done.returncode == 2, done.stderr
    assert _flat("is not a perflab store") in _flat(done.stderr)
    assert "contacts" in done.stderr
    assert _digest(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


def test_a_device_or_a_link_to_one_is_refused(tmp_path: Path) -> None:
    """--store /dev/null, or a symbolic link to it: refused before anything is written (no
    /dev/null-journal, no -wal beside the link), status 2, saying it is a device"""
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    link = tmp_path / "perflab.db"
    link.symlink_to("/dev/null")
    for store in (str(link), "/dev/null"):
        done = _run(tmp_path, "--store", store)
        assert done.returncode == 2, done.stderr
        assert _flat("is a device") in _flat(done.stderr)
    assert journal.exists() == existed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["perflab.db"]


def test_a_store_with_a_negative_user_version_is_named_so(tmp_path: Path) -> None:
    """a store whose user_version is -1 (set by another program): run, list and show say its
    schema version is -1 (status 2), never 'duplicate column name'; the file is unchanged"""
    store = tmp_path / STORE
    store.parent.mkdir()
    connection = sqlite3.connect(store)
    connection.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY)")
    connection.execute("PRAGMA user_version = -1")
    connection.commit()
    connection.close()
    before = _digest(store)
    for done in (_run(tmp_path), perflab("list", cwd=tmp_path), perflab("show", "1", cwd=tmp_path)):
        assert done.returncode == 2, done.stderr
        assert _flat("schema version -1") in _flat(done.stderr), done.stderr
        assert "duplicate column" not in done.stderr
        assert "Traceback" not in done.stderr
    assert _digest(store) == before


def test_a_read_only_store_with_writes_in_its_wal_shows_them(tmp_path: Path, seeded: Path) -> None:
    """a store whose last run is still in its WAL (no -shm file), on a read-only filesystem:
    list and show read the WAL too (every run and sample), and the files are unchanged"""
    if shutil.which("unshare") is None or not _read_only_mount_works(tmp_path):
        pytest.skip("cannot mount read-only here (no user namespaces)")
    store = _store_in(tmp_path, seeded)
    # a writer that ended without checkpointing: run 4 (a copy of run 3) lives in the WAL
    script = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')\n"
        "cols = ', '.join(r[1] for r in c.execute('PRAGMA table_info(runs)') if r[1] != 'id')\n"
        "scols = ', '.join(r[1] for r in c.execute('PRAGMA table_info(samples)')"
        " if r[1] != 'run_id')\n"
        "c.execute('BEGIN')\n"
        "c.execute(f'INSERT INTO runs (id, {cols}) SELECT 4, {cols} FROM runs WHERE id = 3')\n"
        "c.execute(f'INSERT INTO samples (run_id, {scols}) SELECT 4, {scols} FROM samples"
        " WHERE run_id = 3')\n"
        "c.execute('COMMIT')\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(store)], check=True)
    wal = Path(f"{store}-wal")
    assert wal.stat().st_size > 0
    expected = _samples(store)  # read with the WAL, on a writable filesystem
    # copied without its shared-memory file (as a backup or an rsync does): SQLite cannot
    # make it on a read-only filesystem
    Path(f"{store}-shm").unlink(missing_ok=True)
    before = (_digest(store), _digest(wal))
    listed = _in_read_only(tmp_path, "list", "--json", "-")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert [r["run_id"] for r in runs] == [4, 3, 2, 1]
    assert sum(int(r["n_samples"]) for r in runs) == expected
    shown = _in_read_only(tmp_path, "show", "4", "--json", "-", "-q")
    assert shown.returncode == 0, shown.stderr
    assert (_digest(store), _digest(wal)) == before


def test_doctor_on_a_full_disk_says_new_runs_cannot_be_written(
    tmp_path: Path, seeded: Path
) -> None:
    """doctor --store on a full filesystem says a new run cannot be written (not 'ok'), and
    `run` refuses before measuring, naming the full disk (status 2)"""
    if shutil.which("unshare") is None or not _read_only_mount_works(tmp_path):
        pytest.skip("cannot mount a filesystem here (no user namespaces)")
    size_kib = seeded.stat().st_size // 1024 + 64
    script = (
        'mount -t tmpfs -o size="$1"k tmpfs "$0" && mkdir "$0/.perflab" && cp "$2" "$0/.perflab/"'
        ' && (cat /dev/zero > "$0/filler" 2>/dev/null; true) && cd "$0" && shift 2 && exec "$@"'
    )

    def on_full_disk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["unshare", "-rm", "sh", "-c", script, str(tmp_path), str(size_kib), str(seeded)]
            + [*COMMAND, *args],
            capture_output=True,
            text=True,
            timeout=300,
        )

    doctor = on_full_disk("doctor", "--store")
    assert _flat("filesystem is full") in _flat(doctor.stdout), doctor.stdout + doctor.stderr
    run = on_full_disk("run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST)
    assert run.returncode == 2, run.stderr
    assert _flat("filesystem is full") in _flat(run.stderr)
