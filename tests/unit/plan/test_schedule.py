import itertools
import random

from perflab.plan.schedule import block_orders, launch_order


def test_two_variants_alternate_abba() -> None:
    orders = list(itertools.islice(block_orders(2, random.Random(0)), 6))
    assert all(sorted(o) == [0, 1] for o in orders)
    assert all(a != b for a, b in zip(orders, orders[1:], strict=False))


def test_more_variants_are_permuted_and_seeded() -> None:
    first = list(itertools.islice(block_orders(4, random.Random(5)), 20))
    again = list(itertools.islice(block_orders(4, random.Random(5)), 20))
    assert first == again
    assert all(sorted(o) == [0, 1, 2, 3] for o in first)
    assert len({tuple(o) for o in first}) > 5
    assert sorted(launch_order(3, random.Random(1))) == [0, 1, 2]
