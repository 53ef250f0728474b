"""The variants' native runs before valgrind (their JIT caches filled: engine/prepare/caches.py),
in a thread of their own beside the first lens where that lens waits for them itself: the
instructions lens's fork servers import the set-up's modules under valgrind (`import torch`:
~9 s) while the second variant's statement runs natively (~1 s, or a torch.compile's minute),
and no child runs the set-up before the runs are done (`LensContext.native_fill_done`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from perflab.machine.proc import stop_all_contained

T = TypeVar("T")


class InBackground(Generic[T]):
    """`work` run in a thread of its own: `wait` blocks until it is done (for a lens's thread),
    `result` returns what it returned or raises what it raised (for the engine's)."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="perflab-native-fill", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # handed to the engine's thread by `result`
            self._error = error
        finally:
            self._done.set()

    def wait(self) -> None:
        self._done.wait()

    def result(self) -> T | None:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value

    def stop(self) -> None:
        """Its processes killed (perflab's contained ones: what a stop kills anyway) and the
        thread ended, for a run that ends before it is done."""
        if not self._done.is_set():
            stop_all_contained()
        self._thread.join(timeout=10.0)
