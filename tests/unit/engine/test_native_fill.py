"""The native runs in a thread of their own (engine/native_fill.py): a lens's thread waits for
them, the engine's gets what they returned or what they raised."""

from __future__ import annotations

import threading

import pytest

from perflab.engine.native_fill import InBackground


def test_a_lens_waits_until_the_work_is_done_and_the_engine_gets_its_value() -> None:
    release = threading.Event()
    order: list[str] = []

    def work() -> int:
        release.wait()
        order.append("filled")
        return 7

    filling = InBackground(work)
    waiter = threading.Thread(target=lambda: (filling.wait(), order.append("child runs")))
    waiter.start()
    assert order == []  # the lens's thread is held while the work runs
    release.set()
    waiter.join(timeout=10)
    assert order == ["filled", "child runs"]
    assert filling.result() == 7


def test_what_the_work_raised_is_raised_in_the_engines_thread_and_a_lens_is_not_held() -> None:
    def work() -> None:
        raise RuntimeError("native run broke")

    filling = InBackground(work)
    filling.wait()  # returns: a failed fill holds no lens
    with pytest.raises(RuntimeError, match="native run broke"):
        filling.result()


def test_a_stop_after_the_work_ended_kills_nothing() -> None:
    filling = InBackground(lambda: None)
    filling.wait()
    filling.stop()
    assert filling.result() is None
