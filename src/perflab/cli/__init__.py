"""The command line: parse into typed options, call the library, print, exit."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType


def _interrupted_while_starting(signum: int, frame: FrameType | None) -> None:
    # during start-up (imports, parsing) nothing was started or written: exit at once, with
    # the status of an interrupted run and a line, never a traceback from inside an import
    os.write(2, b"perflab: interrupted while starting; nothing was measured\n")
    os._exit(130)


def end_start_up_on_interrupt() -> None:
    """Ctrl-C, SIGTERM or SIGHUP before main() installs its own handlers ends the `perflab`
    command with one line and status 130. Only for the command's own process: a program
    importing perflab keeps its handlers."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, _interrupted_while_starting)


# the `perflab` script, or `python -m perflab.cli.main` (whose argv[0] is "-m" while its package
# is imported); `python -m perflab` calls the function itself, as its argv[0] names no command
if sys.argv[:1] == ["-m"] or os.path.basename(sys.argv[0] if sys.argv else "") == "perflab":
    end_start_up_on_interrupt()
