"""Reading a live process's replies line by line: a line that arrived together with the one
before it is returned at once, not lost behind a select() on a drained pipe."""

from __future__ import annotations

import sys

import pytest

from perflab.machine.proc import LaunchSpec, SubprocessRunner

pytestmark = pytest.mark.integration

# two lines in one write, then a third after the parent asks; then the end of its output
TWO_AT_ONCE = (
    "import sys\n"
    "sys.stdout.write('one\\ntwo\\n'); sys.stdout.flush()\n"
    "sys.stdin.readline()\n"
    "sys.stdout.write('three'); sys.stdout.flush()\n"
)


def test_a_line_read_with_the_one_before_it_is_not_lost() -> None:
    process = SubprocessRunner().spawn(LaunchSpec(argv=(sys.executable, "-c", TWO_AT_ONCE)))
    try:
        assert process.read_line(10.0) == "one\n"
        # already read from the pipe with "one": returned without waiting
        assert process.read_line(0.0) == "two\n"
        assert process.read_line(0.2) is None  # nothing more until asked
        process.write_line("go")
        assert process.read_line(10.0) == "three"  # the end of its output, without a newline
        assert process.read_line(10.0) == ""
    finally:
        process.kill()
        process.close()
