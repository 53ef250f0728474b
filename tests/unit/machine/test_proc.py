"""A live process's stderr, cut into lines as it is read from the pipe, and the leftover
processes stopped, counted per measuring lens (machine/proc.py)."""

from __future__ import annotations

import threading

from perflab.machine.proc import (
    STDERR_LINE_CHARS,
    StderrLines,
    count_stopped,
    counting_stopped,
)


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


def test_a_lens_s_tally_counts_what_its_thread_stops_not_another_thread() -> None:
    """A build on another thread (bisect) stops its own leftovers while a lens measures."""
    with counting_stopped() as tally:
        count_stopped(2)
        build = threading.Thread(target=count_stopped, args=(5,))
        build.start()
        build.join()
    count_stopped(1)  # after the lens
    assert tally.count == 2


def test_a_tally_inside_another_leaves_the_outer_one_counting_after_it() -> None:
    with counting_stopped() as outer:
        with counting_stopped() as inner:
            count_stopped(3)
        count_stopped(4)
    assert (outer.count, inner.count) == (4, 3)
