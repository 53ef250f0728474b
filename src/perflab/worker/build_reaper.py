"""perflab build reaper: runs one build command as its child subreaper (stdlib only, run by
perflab's own interpreter).

    python -E -S build_reaper.py TIMEOUT_S ARGV...

A build may start a daemon that leaves its session and clears its environment: nothing perflab
can search for finds it, and without a subreaper above it, it is re-parented to init and
outlives the run. Under this process it is re-parented here instead. When the build ends,
every process still running below this one is stopped (SIGTERM, then SIGKILL), their number
is the last line on stderr (process_tree.REAPER_SAID, perflab/machine/builds.py reads it), and this
process ends as the build ended (its status, or its signal).

TIMEOUT_S ("none" for no limit) is enforced here, not by killing this process: a reaper killed
with its build's group leaves the build's daemons to init. A build still running after
TIMEOUT_S, or this process asked to stop (SIGTERM), is stopped with all it left, the last line
says so (process_tree.REAPER_TIMED_OUT), and this process ends with TIMED_OUT_STATUS.
"""

import os
import signal
import sys
import time

import process_tree  # next to this script; perflab.worker.process_tree

_NOT_STARTED = 127  # as a shell says of a program it cannot start
TIMED_OUT_STATUS = 124  # as coreutils' timeout ends when it stopped its command
_POLL_S = 0.05  # how often a build with a time limit is looked at: small beside any build


class _Stop(Exception):
    """The build ran out of time, or this process was asked to stop."""


def _asked_to_stop(number, frame):
    raise _Stop()


def _run(argv, timeout_s):
    """The build's wait status; None when it could not be started. Raises _Stop when it ran
    past `timeout_s` (None: no limit) or this process got SIGTERM."""
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as error:
        sys.stderr.write("perflab: cannot start %s: %s\n" % (argv[0], error))
        return None
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            raise _Stop()
        time.sleep(_POLL_S)


def _end_as(status):
    """Exit as the build did: with its status, or killed by its signal."""
    if status is None:
        os._exit(_NOT_STARTED)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status))


def main():
    """Run the build, stop what it left (or all of it, past its limit), say how many, and end
    as the build ended."""
    process_tree.become_subreaper()
    signal.signal(signal.SIGTERM, _asked_to_stop)
    timeout_s = None if sys.argv[1] == "none" else float(sys.argv[1])
    try:
        status = _run(sys.argv[2:], timeout_s)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the build has ended: stopping is next
        said = process_tree.REAPER_SAID
    except _Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        status = None
        said = process_tree.REAPER_TIMED_OUT
    left = process_tree.stop_descendants()
    # after the build and all it left are gone: nothing else writes to stderr any more
    sys.stderr.write("\n%s%d\n" % (said, left))
    sys.stdout.flush()
    sys.stderr.flush()
    if said == process_tree.REAPER_TIMED_OUT:
        os._exit(TIMED_OUT_STATUS)
    _end_as(status)


if __name__ == "__main__":
    main()
