"""When this process began running perflab: the clock at the first import of the package, less
the CPU time the interpreter had used by then (its own start-up, before perflab's first line).

Not the process's creation (/proc/self/stat): a shell that runs `sleep 8 && perflab ...` or sets
itself up for a while execs perflab in a process it created long before, and that time is not
perflab's. The CPU time of the interpreter's start-up stands for its wall time; what the process
used before exec (a shell's few milliseconds) is inside it, a waiting parent's children are not.
"""

from __future__ import annotations

import time

STARTED_AT_S = time.monotonic() - time.process_time()  # time.monotonic()'s clock


def since_started_s() -> float:
    """Seconds since perflab started in this process."""
    return max(0.0, time.monotonic() - STARTED_AT_S)
