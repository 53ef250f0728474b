"""The interleaved schedule: which variant is sampled when. Pure and seeded."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator


def block_orders(n_variants: int, rng: random.Random) -> Iterator[list[int]]:
    """Endless orders (variant indices) for successive blocks of one generation.

    Two variants alternate AB, BA, AB, ... from a random start (ABBA: a linear drift hits both
    equally over two blocks). More variants get a fresh random permutation per block."""
    if n_variants == 2:
        start = rng.randrange(2)
        for block in itertools.count():
            yield [0, 1] if (block + start) % 2 == 0 else [1, 0]
    while True:
        order = list(range(n_variants))
        rng.shuffle(order)
        yield order


def launch_order(n_variants: int, rng: random.Random) -> list[int]:
    """Which variant's worker starts first in a generation: random, so start-up order (and the
    memory state it leaves) cannot favour one variant systematically."""
    order = list(range(n_variants))
    rng.shuffle(order)
    return order
