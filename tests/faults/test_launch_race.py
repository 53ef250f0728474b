"""The orphan sweep after a run never takes a process perflab launched itself. Mid-exec, a
child's environment reads empty (no token), and the sweep that killed it also reaped it, so
the Popen of another thread read it as exited 0: a bisect's GOOD "wrote no profile"."""

from __future__ import annotations

import os
import subprocess
import threading

from perflab.machine import proc
from perflab.machine.proc import LaunchSpec, SubprocessRunner
from perflab.worker import process_tree


def test_a_child_without_token_is_an_orphan_unless_perflab_launched_it() -> None:
    child = subprocess.Popen(["env", "-i", "sleep", "30"])  # no token, like a process mid-exec
    try:
        for _ in range(200):  # until env has exec'd sleep with its empty environment
            if process_tree.carries_no_token(child.pid):
                break
            threading.Event().wait(0.01)
        table = process_tree.process_table()
        me = os.getpid()
        assert child.pid in process_tree.Container(None, None, orphans_of=me).members(table)
        launched = process_tree.Container(None, None, orphans_of=me, launched=[child.pid])
        assert child.pid not in launched.members(table)
    finally:
        child.kill()
        child.wait()


def test_every_launch_is_known_until_it_is_reaped() -> None:
    runner = SubprocessRunner()
    live = runner.spawn(LaunchSpec(("sleep", "30")))
    try:
        assert live.pid in proc._launched
    finally:
        live.kill()
    assert live.pid not in proc._launched
    done = runner.run(LaunchSpec(("true",)))
    assert done.ok and not proc._launched
