"""Output checks (--check): the worker's encoding of values and their comparison (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from perflab.stats.outputs import output_difference
from perflab.worker.statement_values import Uncomparable, encode_value


def differs(a: Any, b: Any, rtol: float = 1e-6) -> str | None:
    found = output_difference(encode_value(a), encode_value(b), rtol)
    return None if found is None else found.describe()


def test_equal_values_do_not_differ() -> None:
    for value in (3, "abc", b"\x00\x01", None, True, 1.5, [1.0, 2.0], (1, "a"), {"k": 1}):
        assert differs(value, value) is None


def test_ints_strings_and_bytes_are_exact() -> None:
    assert differs("abc", "abd") == "the value: abc vs abd"
    assert differs(b"\x00", b"\x01") == "the value: 00 vs 01"
    assert differs(2**70, 2**70 + 1) is not None


def test_floats_and_lists_agree_within_the_tolerance() -> None:
    assert differs(1.0, 1.0 + 1e-9) is None
    assert differs(1.0, 1.001) == "the value: 1.0 vs 1.001 (1 of 1 elements differ)"
    assert differs(1.0, 1.001, rtol=0.01) is None
    assert differs(float("nan"), float("nan")) is None
    assert differs(float("inf"), float("-inf")) is not None


def test_the_first_differing_element_of_a_nested_array_is_named_by_its_index() -> None:
    a = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    b = [[0.0, 1.0, 2.0], [3.0, 9.0, 8.0]]
    assert differs(a, b) == "element [1, 1]: 4.0 vs 9.0 (2 of 6 elements differ)"
    assert differs(a, [[0.0, 1.0]]) == "the shape: (2, 3) vs (1, 2)"


def test_a_different_type_differs() -> None:
    assert differs(1, "1") == "the type: int vs str"


class FakeArray:
    """Anything with tolist() and a shape (NumPy arrays, torch tensors) is an array."""

    def __init__(self, rows: list[list[float]]) -> None:
        self.rows = rows
        self.shape = (len(rows), len(rows[0]))

    def tolist(self) -> list[list[float]]:
        return self.rows


def test_array_likes_compare_by_element() -> None:
    assert differs(FakeArray([[1.0, 2.0]]), FakeArray([[1.0, 2.0]])) is None
    assert differs(FakeArray([[1.0, 2.0]]), FakeArray([[1.0, -2.0]])) == (
        "element [0, 1]: 2.0 vs -2.0 (1 of 2 elements differ)"
    )


def test_large_values_are_digested_and_still_located() -> None:
    big = [float(i) for i in range(1_100_000)]
    other = list(big)
    other[6] = -1.0
    encoded = encode_value(big)
    assert "digest" in encoded and len(encoded["values"]) <= 1 << 20
    assert differs(big, list(big)) is None
    assert differs(big, other) == "element [6]: 6.0 vs -1.0 (1 of 550,000 elements differ)"
    assert differs("x" * 10_000, "x" * 10_000) is None
    assert differs("x" * 10_000, "x" * 9_999 + "y") is not None


def test_a_value_whose_repr_is_an_address_is_uncomparable() -> None:
    with pytest.raises(Uncomparable, match="names its address"):
        encode_value(object())
