"""When this process began running perflab: the clock at the first import of the package, less
the CPU time the interpreter had used by then (its own start-up, before perflab's first line).

Not the process's creation (/proc/self/stat): a shell that runs `sleep 8 && perflab ...` or sets
itself up for a while execs perflab in a process it created long before, and that time is not
perflab's. The CPU time of the interpreter's start-up stands for its wall time; what the process
used before exec (a shell's few milliseconds) is inside it, a waiting parent's children are not.
"""

from __future__ import annotations

import time

# an interpreter's start-up uses well under a second of CPU: more was the process's own work
# before it ran perflab (a shell's, which exec keeps in the process's CPU time)
INTERPRETER_START_CPU_S = 1.0
STARTED_AT_S = time.monotonic() - min(time.process_time(), INTERPRETER_START_CPU_S)
