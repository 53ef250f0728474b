"""perflab build reaper: runs one build command as its child subreaper (stdlib only, run by
perflab's own interpreter).

    python -E -S build_reaper.py ARGV...

A build may start a daemon that leaves its session and clears its environment: nothing perflab
can search for finds it, and without a subreaper above it, it is re-parented to init and
outlives the run. Under this process it is re-parented here instead. When the build ends,
every process still running below this one is stopped (SIGTERM, then SIGKILL), their number
is the last line on stderr (process_tree.REAPER_SAID, perflab/machine/builds.py reads it), and this
process ends as the build ended (its status, or its signal).
"""

import os
import signal
import sys

import process_tree  # next to this script; perflab.worker.process_tree

_NOT_STARTED = 127  # as a shell says of a program it cannot start


def _run(argv):
    """The build's wait status, or None when it could not be started."""
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as error:
        sys.stderr.write("perflab: cannot start %s: %s\n" % (argv[0], error))
        return None
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


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
    process_tree.become_subreaper()
    status = _run(sys.argv[1:])
    left = process_tree.stop_descendants()
    # after the build and all it left are gone: nothing else writes to stderr any more
    sys.stderr.write("\n%s%d\n" % (process_tree.REAPER_SAID, left))
    sys.stdout.flush()
    sys.stderr.flush()
    _end_as(status)


if __name__ == "__main__":
    main()
