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


# only as the `perflab` command (or `python -m perflab.cli.main`, whose argv[0] is "-m" while
# its package is imported), never in a program importing perflab: main() installs its own
if sys.argv[:1] == ["-m"] or os.path.basename(sys.argv[0] if sys.argv else "") == "perflab":
    for _number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(_number, _interrupted_while_starting)
