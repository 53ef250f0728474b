"""Which process owns a running run (store/owner.py): this process is alive by its exact
identity; a reused pid, a reboot or a gone process is not; another host's cannot be told."""

from __future__ import annotations

import dataclasses
import os
import socket

import pytest

from perflab.store.owner import ProcessIdentity

NO_SUCH_PID = 2**31 - 1  # above any pid the kernel hands out


@pytest.fixture
def me() -> ProcessIdentity:
    identity = ProcessIdentity.current()
    if identity.start_ticks is None:
        pytest.skip("no /proc on this machine")
    return identity


def test_this_process_is_itself_and_alive(me: ProcessIdentity) -> None:
    assert me.pid == os.getpid() and me.host == socket.gethostname()
    assert me.is_alive() is True


def test_a_reused_pid_or_a_reboot_or_a_gone_process_is_dead(me: ProcessIdentity) -> None:
    assert dataclasses.replace(me, start_ticks=me.start_ticks + 1).is_alive() is False
    if me.boot_id is not None:
        assert dataclasses.replace(me, boot_id="another-boot").is_alive() is False
    assert dataclasses.replace(me, pid=NO_SUCH_PID).is_alive() is False


def test_an_identity_without_a_start_time_or_boot_id_is_judged_by_its_pid(
    me: ProcessIdentity,
) -> None:
    assert dataclasses.replace(me, start_ticks=None, boot_id=None).is_alive() is True


def test_another_hosts_process_cannot_be_told(me: ProcessIdentity) -> None:
    other = dataclasses.replace(me, host=me.host + "-elsewhere", pid=NO_SUCH_PID)
    assert other.is_alive() is None
