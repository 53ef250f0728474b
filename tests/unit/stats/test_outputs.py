"""Two encoded output values compared (stats/outputs.py): the same, or where they first differ,
for exact values, arrays within a tolerance, and large values carried by their digest."""

from __future__ import annotations

import math
from typing import Any

import pytest

from perflab.stats.outputs import OutputDifference, output_difference


def exact(text: str, type_name: str = "str", **large: Any) -> dict[str, Any]:
    return {"kind": "exact", "type": type_name, "text": text, **large}


def array(values: list[float], shape: list[int], **large: Any) -> dict[str, Any]:
    return {"kind": "array", "type": "list", "shape": shape, "values": values, **large}


def test_equal_exact_values_are_the_same_and_others_differ_in_words() -> None:
    assert output_difference(exact("abc"), exact("abc"), 0.0) is None
    found = output_difference(exact("abc"), exact("abd"), 0.0)
    assert found == OutputDifference("the value", "abc", "abd")
    assert found.describe() == "the value: abc vs abd"


def test_a_long_text_is_shown_around_where_it_first_differs() -> None:
    before, after = "x" * 100 + "A" + "y" * 50, "x" * 100 + "B" + "y" * 50
    found = output_difference(exact(before), exact(after), 0.0)
    assert found is not None and found.where == "the value at character 100"
    assert found.baseline.startswith("'" + "x" * 20 + "A")


def test_another_type_is_the_difference() -> None:
    found = output_difference(exact("1", "int"), exact("1", "str"), 0.0)
    assert found == OutputDifference("the type", "int", "str")
    assert output_difference(exact("1", "int"), array([1.0], []), 0.0) is not None


def test_large_exact_values_compare_by_digest() -> None:
    same = output_difference(
        exact("start", digest="d1", length=10**6), exact("other", digest="d1", length=10**6), 0.0
    )
    assert same is None
    found = output_difference(
        exact("start", digest="d1", length=10**6), exact("start", digest="d2"), 0.0
    )
    assert found is not None and found.where == "the value (a digest of 1,000,000 characters)"


def test_arrays_agree_within_the_relative_tolerance() -> None:
    a = array([1.0, 2.0, math.nan, math.inf], [4])
    assert output_difference(a, array([1.0 + 1e-9, 2.0, math.nan, math.inf], [4]), 1e-6) is None
    found = output_difference(a, array([1.0 + 1e-3, 2.0, math.nan, -math.inf], [4]), 1e-6)
    assert found is not None
    assert (found.where, found.differing, found.compared) == ("element [0]", 2, 4)
    assert found.describe().endswith("(2 of 4 elements differ)")
    assert found.to_json()["differing_elements"] == 2


def test_the_first_differing_element_is_named_by_its_index_in_the_shape() -> None:
    values = [float(i) for i in range(6)]
    changed = values[:4] + [40.0, 5.0]
    found = output_difference(array(values, [2, 3]), array(changed, [2, 3]), 0.0)
    assert found is not None and found.where == "element [1, 1]"
    assert (found.baseline, found.variant) == ("4.0", "40.0")
    # a large array carries every `stride`-th element: the index is the element's own
    strided = output_difference(
        array([0.0, 1.0], [10], stride=5, digest="a"),
        array([0.0, 2.0], [10], stride=5, digest="b"),
        0.0,
    )
    assert strided is not None and strided.where == "element [5]"


def test_another_shape_or_size_is_the_difference() -> None:
    assert output_difference(array([1.0, 2.0], [2]), array([1.0, 2.0], [1, 2]), 0.0) == (
        OutputDifference("the shape", "(2,)", "(1, 2)")
    )
    found = output_difference(array([1.0], [2], stride=2), array([1.0, 2.0], [2]), 0.0)
    assert found is not None and found.where == "the size"


@pytest.mark.parametrize("rtol", [0.0, 0.1])
def test_a_single_number_is_the_value(rtol: float) -> None:
    found = output_difference(array([1.0], []), array([2.0], []), rtol)
    assert found is not None and found.where == "the value"
