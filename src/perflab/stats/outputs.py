"""Output checks compared (pure): is what two processes computed the same?

The values are encoded by the worker (`perflab/worker/statement_values.py`, `encode_value`):
`exact` values (ints, strings, bytes, reprs) must be equal; `array` values (floats, NumPy
arrays, tensors, lists of numbers) must have the same shape and agree element by element within
a relative tolerance. Large values carry a digest: equal digests are equal values; otherwise
the texts' starts, or the arrays' strided elements, say where they differ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CHECK_ARTIFACT = "check_value"


@dataclass(frozen=True)
class OutputDifference:
    """Where two output values first differ, in words, and how many elements differ."""

    where: str  # "element [2, 3]", "the type", "the shape", "the text at character 12"
    baseline: str
    variant: str
    differing: int | None = None  # elements that differ (arrays), of `compared`
    compared: int | None = None

    def describe(self) -> str:
        text = f"{self.where}: {self.baseline} vs {self.variant}"
        if self.differing is not None and self.compared is not None:
            text += f" ({self.differing:,} of {self.compared:,} elements differ)"
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "where": self.where,
            "baseline": self.baseline,
            "variant": self.variant,
            "message": self.describe(),
        }
        if self.differing is not None:
            out["differing_elements"] = self.differing
            out["compared_elements"] = self.compared
        return out


def _close(a: float, b: float, rtol: float) -> bool:
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def _index(flat: int, shape: Sequence[int]) -> str:
    if not shape:
        return "the value"
    if math.prod(shape) == 0:
        return f"element {flat}"
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return "element [" + ", ".join(str(i) for i in reversed(index)) + "]"


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exact_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> OutputDifference | None:
    if a.get("digest", a["text"]) == b.get("digest", b["text"]):
        return None
    text_a, text_b = str(a["text"]), str(b["text"])
    at = next(
        (i for i, (x, y) in enumerate(zip(text_a, text_b, strict=False)) if x != y),
        min(len(text_a), len(text_b)),
    )
    if "digest" in a or "digest" in b:
        return OutputDifference(
            f"the value (a digest of {a.get('length', len(text_a)):,} characters)",
            _short(text_a),
            _short(text_b),
        )
    if len(text_a) <= 60 and len(text_b) <= 60:
        return OutputDifference("the value", text_a, text_b)
    start = max(0, at - 20)
    return OutputDifference(
        f"the value at character {at}",
        repr(_short(text_a[start:])),
        repr(_short(text_b[start:])),
    )


def _array_difference(
    a: Mapping[str, Any], b: Mapping[str, Any], rtol: float
) -> OutputDifference | None:
    shape_a, shape_b = list(a["shape"]), list(b["shape"])
    if shape_a != shape_b:
        return OutputDifference("the shape", str(tuple(shape_a)), str(tuple(shape_b)))
    if "digest" in a and a.get("digest") == b.get("digest"):
        return None
    values_a: list[float] = a["values"]
    values_b: list[float] = b["values"]
    stride = int(a.get("stride", 1))
    if len(values_a) != len(values_b) or stride != int(b.get("stride", 1)):
        return OutputDifference("the size", str(len(values_a)), str(len(values_b)))
    differing = [
        i for i, (x, y) in enumerate(zip(values_a, values_b, strict=True)) if not _close(x, y, rtol)
    ]
    if not differing:
        return None
    first = differing[0]
    return OutputDifference(
        _index(first * stride, shape_a),
        repr(values_a[first]),
        repr(values_b[first]),
        differing=len(differing),
        compared=len(values_a),
    )


def output_difference(
    baseline: Mapping[str, Any], variant: Mapping[str, Any], rtol: float
) -> OutputDifference | None:
    """Where two encoded values differ, or None when they are the same (within `rtol` for
    floats and arrays)."""
    if baseline.get("kind") != variant.get("kind") or (
        baseline.get("kind") == "exact" and baseline.get("type") != variant.get("type")
    ):
        return OutputDifference("the type", str(baseline.get("type")), str(variant.get("type")))
    if baseline.get("kind") == "array":
        return _array_difference(baseline, variant, rtol)
    return _exact_difference(baseline, variant)
