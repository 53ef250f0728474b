"""What a lens that samples repeatedly needs while measuring one benchmark."""

from __future__ import annotations

import random
from collections.abc import Callable

from perflab.collectors.base import LensContext
from perflab.model import Benchmark, Settings


def benchmark_rng(settings: Settings, benchmark: Benchmark) -> random.Random:
    """The seeded randomness of one benchmark's schedule (launch orders, ABBA starts, layouts)."""
    seed = settings.seed if settings.seed is not None else random.SystemRandom().randrange(2**32)
    return random.Random(f"{seed}:{benchmark.name}")


class LensSession:
    """Settings, variants, the benchmark's seeded schedule and a clock, for one benchmark."""

    def __init__(
        self, benchmark: Benchmark, context: LensContext, clock_ns: Callable[[], int]
    ) -> None:
        self.benchmark = benchmark
        self.context = context
        self.settings = context.experiment.settings
        self.variants = context.experiment.variants
        self.clock_ns = clock_ns
        self.start_ns = clock_ns()
        self.rng = benchmark_rng(self.settings, benchmark)

    def elapsed_s(self) -> float:
        return float(self.clock_ns() - self.start_ns) / 1e9
