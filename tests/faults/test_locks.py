"""The CPU lock directory cannot be turned against the user (perflab often runs as root): a
directory others can write to, or another user's, or a lock file that is a link, is refused
before any file is opened for writing; and a run that shares a held CPU is named in the
holder's results too."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from perflab.machine.cpu_lock import LOCK_DIR_VARIABLE, holder
from perflab.machine.host import default_measurement_cpu, online_cpus
from tests.support.cli_commands import QUICK
from tests.support.tagged_processes import processes_left, start

pytestmark = pytest.mark.integration

VICTIM_TEXT = "a file of the user's that perflab must never write\n"


def _run(tmp_path: Path, locks: Path) -> tuple[int, str]:
    with pytest.MonkeyPatch.context() as patch:  # the variable only for this perflab
        patch.setenv(LOCK_DIR_VARIABLE, str(locks))
        perflab = start("run", "--stmt", "pass", "-v", "A", "-v", "B", "--budget", "0.3", "-q",
                        *QUICK, cwd=tmp_path)  # fmt: skip
    code, _, err = perflab.finish()
    assert processes_left(perflab.tag) == []
    return code, err


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    return victim


def _link_every_cpu(locks: Path, victim: Path) -> None:
    for cpu in online_cpus():
        (locks / f"cpu{cpu}.lock").symlink_to(victim)


def test_a_lock_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    """a lock directory open to everyone (mode 777) holding links to a user's file: refused
    with status 2 naming the directory and its mode; the linked file is untouched"""
    locks = tmp_path / "locks"
    locks.mkdir()
    locks.chmod(0o777)
    victim = _victim(tmp_path)
    _link_every_cpu(locks, victim)
    code, err = _run(tmp_path, locks)
    assert code == 2, err
    assert "is not private" in " ".join(err.split()) and "777" in err
    assert victim.read_text() == VICTIM_TEXT


def test_another_users_lock_directory_is_refused(tmp_path: Path) -> None:
    """a lock directory owned by another user: refused (status 2), nothing written in it"""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    os.chown(locks, 4242, 4242)
    code, err = _run(tmp_path, locks)
    assert code == 2, err
    assert "belongs to uid 4242" in " ".join(err.split())
    assert list(locks.iterdir()) == []


def test_a_lock_file_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    """a private lock directory whose lock files are links to a user's file: the link is not
    followed (O_NOFOLLOW), the file is neither truncated nor written, status 2 naming it"""
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    victim = _victim(tmp_path)
    _link_every_cpu(locks, victim)
    code, err = _run(tmp_path, locks)
    assert code == 2, err
    assert "is a symbolic link" in " ".join(err.split())
    assert victim.read_text() == VICTIM_TEXT


@pytest.mark.skipif(len(online_cpus()) < 2, reason="needs two CPUs")
@pytest.mark.usefixtures("private_cpu_locks")
def test_the_run_holding_a_cpu_is_told_another_shared_it(tmp_path: Path) -> None:
    """`--cpu N` on a CPU another run holds: the joiner warns that it shares, and the holder's
    results say so too (naming the joiner's pid)"""
    cpu = default_measurement_cpu()
    args = ("run", "--stmt", "sum(range(50))", "-v", "A", "-v", "B", "--quiet", *QUICK,
            "--cpu", str(cpu))  # fmt: skip
    holding = start(*args, "--budget", "6", "--precision", "1e-9",
                    "--json", str(tmp_path / "holder.json"), cwd=tmp_path)  # fmt: skip
    while holder(cpu) != holding.process.pid:
        assert holding.process.poll() is None, holding.finish()
        time.sleep(0.05)
    joining = start(*args, "--budget", "0.3", "--json", str(tmp_path / "joiner.json"),
                    cwd=tmp_path)  # fmt: skip
    assert joining.finish()[0] == 0
    assert holding.finish()[0] == 0
    joiner_notes = json.loads((tmp_path / "joiner.json").read_text())["notes"]
    assert [n for n in joiner_notes if "share CPU" in n["message"]]
    holder_notes = json.loads((tmp_path / "holder.json").read_text())["notes"]
    (note,) = [n for n in holder_notes if "while this run held it" in n["message"]]
    assert f"pid {joining.process.pid}" in note["message"] and note["severity"] == "warning"
