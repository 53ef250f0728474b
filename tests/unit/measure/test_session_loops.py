"""Each variant's loop count: the baseline's unless the variant's own differs a lot."""

from __future__ import annotations

from typing import Any, cast

from perflab.measure.session import OWN_LOOPS_FACTOR, loops_per_variant
from perflab.measure.worker_client import StatementWorker


class _Calibrated:
    def __init__(self, loops: int) -> None:
        self.loops = loops
        self.targets: list[int] = []

    def calibrate(self, target_ns: int) -> int:
        self.targets.append(target_ns)
        return self.loops


def _workers(*loops: int) -> list[StatementWorker]:
    return [cast(Any, _Calibrated(n)) for n in loops]


def test_same_speed_variants_share_the_baseline_count() -> None:
    assert loops_per_variant(_workers(1000, 1100, 700), 10_000_000) == [1000, 1000, 1000]


def test_a_much_slower_or_faster_variant_gets_its_own() -> None:
    slow = int(1000 / OWN_LOOPS_FACTOR) - 1
    assert loops_per_variant(_workers(1000, slow, 1), 10_000_000) == [1000, slow, 1]
    assert loops_per_variant(_workers(10, 100_000), 10_000_000) == [10, 100_000]


def test_every_worker_is_calibrated_to_the_same_target() -> None:
    workers = _workers(5, 6)
    loops_per_variant(workers, 123)
    assert [cast(Any, w).targets for w in workers] == [[123], [123]]
