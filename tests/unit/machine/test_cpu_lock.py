"""Advisory per-CPU locks between perflab runs (flock, in a directory of the test's own)."""

from __future__ import annotations

import os
from pathlib import Path

from perflab.machine.cpu_lock import Waiting, claim_cpu, holder, joined, try_lock


def test_a_second_claim_gets_another_cpu_and_a_released_one_is_free_again(tmp_path: Path) -> None:
    first = claim_cpu([1, 0], forced=False, directory=tmp_path)
    second = claim_cpu([1, 0], forced=False, directory=tmp_path)
    assert (first.cpu, second.cpu) == (1, 0)
    assert first.lock is not None and second.lock is not None and not second.shared_with
    assert holder(1, tmp_path) == os.getpid()
    first.release()
    first.release()  # twice is harmless
    assert holder(1, tmp_path) is None
    again = try_lock(1, tmp_path)
    assert again is not None
    again.close()
    second.release()


def test_a_forced_cpu_held_by_another_run_is_shared_at_once_and_says_with_whom(
    tmp_path: Path,
) -> None:
    other = claim_cpu([1], forced=True, directory=tmp_path)
    waits: list[float] = []
    shared = claim_cpu(
        [1, 0],
        forced=True,
        directory=tmp_path,
        waiting=Waiting(on_wait=lambda held, left: waits.append(left)),
    )
    assert shared.cpu == 1 and shared.lock is None and shared.shared_with == (os.getpid(),)
    assert waits == []  # --cpu: never waits
    other.release()


def test_when_every_cpu_is_held_a_run_waits_bounded_then_shares(tmp_path: Path) -> None:
    held = [claim_cpu([cpu], forced=True, directory=tmp_path) for cpu in (0, 1)]
    now = [0.0]
    messages: list[tuple[dict[int, int], float]] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    claim = claim_cpu(
        [1, 0],
        forced=False,
        directory=tmp_path,
        waiting=Waiting(
            1.0,
            on_wait=lambda who, left: messages.append((who, left)),
            clock=lambda: now[0],
            sleep=sleep,
        ),
    )
    assert claim.cpu == 1 and claim.lock is None and claim.waited_s >= 1.0
    assert messages and messages[0] == ({0: os.getpid(), 1: os.getpid()}, 1.0)
    for lock in held:
        lock.release()


def test_a_look_while_measuring_leaves_an_ended_joiners_mark(tmp_path: Path) -> None:
    ended = tmp_path / "cpu1.joined.999999999"  # no such process: a run that has ended
    ended.touch()
    assert joined(1, 0.0, tmp_path, remove_ended=False) == (999999999,)
    assert ended.exists()
    assert joined(1, 0.0, tmp_path) == (999999999,)  # the run's end: found, removed
    assert not ended.exists()
