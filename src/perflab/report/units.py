"""Human formatting of values by unit: kept here for existing imports; the functions live in
:mod:`perflab.records.units`, where lens fragments (which must not import the report package) use
them."""

from perflab.records.units import (
    format_change,
    format_ns,
    format_ratio,
    format_seconds,
    format_value,
)

__all__ = ["format_change", "format_ns", "format_ratio", "format_seconds", "format_value"]
