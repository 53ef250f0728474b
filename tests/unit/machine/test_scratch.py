"""perflab's private folders in the temporary directory (machine/scratch.py): named after their
process, private, removed at the end, and those of killed runs removed by the next one; nothing
else touched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from perflab.machine.scratch import make_private_folder, private_folder

GONE_PID = 2**31 - 1  # above any pid the kernel hands out: no process has it


def test_a_private_folder_is_named_after_its_process_and_removed_at_the_end(
    tmp_path: Path,
) -> None:
    with private_folder("check", str(tmp_path)) as made:
        folder = Path(made)
        assert folder.parent == tmp_path
        assert folder.name.startswith(f"perflab-check-{os.getpid()}-")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        (folder / "diff.patch").write_text("secret")
    assert not folder.exists()


def test_a_killed_runs_folders_are_removed_by_the_next_and_nothing_else(tmp_path: Path) -> None:
    orphan = tmp_path / f"perflab-callgrind-{GONE_PID}-abc"
    (orphan / "inner").mkdir(parents=True)
    running = tmp_path / f"perflab-caches-{os.getppid()}-abc"  # its process is still there
    running.mkdir()
    not_ours = tmp_path / f"other-check-{GONE_PID}-abc"
    not_ours.mkdir()
    a_file = tmp_path / f"perflab-check-{GONE_PID}-file"
    a_file.write_text("")
    target = tmp_path / "kept"
    target.mkdir()
    link = tmp_path / f"perflab-check-{GONE_PID}-link"
    link.symlink_to(target)
    made = make_private_folder("check", str(tmp_path))
    assert not orphan.exists()
    assert running.is_dir() and not_ours.is_dir() and a_file.is_file()
    assert link.is_symlink() and target.is_dir()
    assert made.is_dir()
