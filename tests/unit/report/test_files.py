"""Writing a file the user named (report/files.py): the whole text, the mode a file keeps or a
new one gets, never through a link, a device written in place, a pipe nobody reads refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from perflab.records.errors import PerflabError
from perflab.report.files import check_target, write_file


def test_the_text_replaces_the_file_and_its_mode_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    write_file(target, "first\n")
    assert target.read_text() == "first\n"
    plain = tmp_path / "plain"
    plain.write_text("")  # the mode a plain new file gets here, not mkstemp's private 0600
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    plain.unlink()
    target.chmod(0o640)
    write_file(str(target), "second")
    assert target.read_text() == "second" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left


def test_a_link_is_refused_and_left_with_its_destination(tmp_path: Path) -> None:
    destination = tmp_path / "elsewhere"
    destination.write_text("keep")
    link = tmp_path / "report.html"
    link.symlink_to(destination)
    with pytest.raises(PerflabError, match="it is a symbolic link") as raised:
        check_target(link)
    assert "- writes to standard output" in (raised.value.hint or "")
    with pytest.raises(PerflabError, match="symbolic link"):
        write_file(link, "text")
    assert destination.read_text() == "keep" and link.is_symlink()


def test_a_directory_or_a_missing_folder_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(PerflabError, match="it is a directory"):
        write_file(tmp_path, "text")
    with pytest.raises(PerflabError, match="cannot write .*No such file or directory"):
        write_file(tmp_path / "missing" / "report.md", "text")
    check_target(tmp_path / "new.md")  # a file not there yet is fine


def test_a_device_is_written_in_place() -> None:
    write_file("/dev/null", "discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_pipe_nobody_reads_is_refused_at_once(tmp_path: Path) -> None:
    pipe = tmp_path / "fifo"
    os.mkfifo(pipe)
    with pytest.raises(PerflabError, match="a pipe \\(FIFO\\) that nobody is reading"):
        write_file(pipe, "text")
