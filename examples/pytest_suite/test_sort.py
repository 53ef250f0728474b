"""A pytest-benchmark suite, as a project would write it: perflab measures it unchanged
(docs/suites.md), and pytest-benchmark runs it as it is."""

import random

import pytest


@pytest.fixture
def shuffled():
    numbers = list(range(1000))
    random.Random(1).shuffle(numbers)
    return numbers


@pytest.mark.parametrize("n", [100, 10000])
def test_sorted(benchmark, n):
    result = benchmark(sorted, range(n, 0, -1))
    assert result[0] == 1


def test_sort_in_place(benchmark, shuffled):
    # each round sorts a fresh copy: list.sort consumes its input's disorder
    benchmark.pedantic(list.sort, setup=lambda: ((list(shuffled),), {}), rounds=100)


def test_join(benchmark):
    joined = benchmark(",".join, ["word"] * 100)
    assert joined.count(",") == 99


def test_no_benchmark():
    assert sorted([2, 1]) == [1, 2]
