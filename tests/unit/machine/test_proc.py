"""A live process's stderr, cut into lines as it is read from the pipe (machine/proc.py)."""

from __future__ import annotations

from perflab.machine.proc import STDERR_LINE_CHARS, StderrLines


def test_lines_split_across_chunks_come_whole() -> None:
    lines = StderrLines("utf-8")
    assert lines.add(b"first li") == []
    assert lines.add(b"ne\nsecond\nthi") == ["first line\n", "second\n"]
    assert lines.end() == ["thi"]
    assert lines.end() == []


def test_a_character_split_across_chunks_is_decoded_whole() -> None:
    lines = StderrLines("utf-8")
    encoded = "é\n".encode()
    assert lines.add(encoded[:1]) == []
    assert lines.add(encoded[1:]) == ["é\n"]


def test_a_line_without_newlines_is_cut_and_carriage_returns_end_lines() -> None:
    """A progress bar never grows perflab's memory; \r and \r\n read as a text stream does."""
    lines = StderrLines("utf-8")
    cut = lines.add(b"x" * (STDERR_LINE_CHARS + 5))
    assert cut == ["x" * STDERR_LINE_CHARS]
    assert lines.add(b"\r10%\r20%\r\n") == ["xxxxx\n", "10%\n", "20%\n"]


def test_invalid_bytes_are_replaced() -> None:
    lines = StderrLines("utf-8")
    assert lines.add(b"\xff\n") == ["\ufffd\n"]
