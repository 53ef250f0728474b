"""Clocks for tests, one of each kind: a stepping clock spends a budget after a known number of
readings without waiting for it; a settable clock stands still until the test moves it."""

from __future__ import annotations

from dataclasses import dataclass


class FakeClock:
    """Nanoseconds; each reading advances 10 ms (or `step_ns`)."""

    def __init__(self, step_ns: int = 10_000_000) -> None:
        self.now_ns = 0
        self.step_ns = step_ns

    def __call__(self) -> int:
        self.now_ns += self.step_ns
        return self.now_ns


class FakeClockS:
    """Seconds; each reading advances 10 ms."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        self.now_s += 0.01
        return self.now_s


@dataclass
class SetClock:
    """Nanoseconds; reads `now_ns` as the test set it."""

    now_ns: int = 0

    def __call__(self) -> int:
        return self.now_ns


@dataclass
class SetClockS:
    """Seconds; reads `now_s` as the test set it."""

    now_s: float = 0.0

    def __call__(self) -> float:
        return self.now_s
