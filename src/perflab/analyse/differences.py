"""What differs between a run's variants, in words: their set-ups and their interpreters, for
the report's list of differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from perflab.records.model import VARIANT_FIELDS, Variant, VariantFieldKind


def variant_differences(variants: Sequence[Variant]) -> list[str]:
    """What differs between the variants' set-ups, in words (the environment a variable at a
    time, then each field); empty for an A/A test."""
    differences = []
    keys = sorted({k for v in variants for k in v.env})
    for key in keys:
        values = {v.name: v.env.get(key) for v in variants}
        if len(set(values.values())) > 1:
            differences.append(
                f"env {key}: " + ", ".join(f"{n}={_shown(x)}" for n, x in values.items())
            )
    for spec in VARIANT_FIELDS:
        if spec.kind is VariantFieldKind.TABLE:
            continue
        if len({spec.joined(getattr(v, spec.name)) for v in variants}) > 1:
            shown = {v.name: spec.shown(getattr(v, spec.name)) for v in variants}
            differences.append(
                f"{spec.name}: " + ", ".join(f"{n}={_shown(x)}" for n, x in shown.items())
            )
    return differences


def _shown(value: str | None) -> str:
    return "(unset)" if value is None else value


def interpreter_differences(variant_info: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The variants' interpreters' versions, in words, where they differ; else empty."""
    versions = {name: info.get("python_version") for name, info in variant_info.items()}
    if len({v for v in versions.values() if v}) > 1:
        return ["python version: " + ", ".join(f"{n}={v}" for n, v in versions.items())]
    return []
