"""Human formatting of values by unit."""

from __future__ import annotations

import math


def format_ns(value_ns: float) -> str:
    if math.isnan(value_ns):
        return "-"
    for limit, unit, scale in ((1e3, "ns", 1.0), (1e6, "µs", 1e3), (1e9, "ms", 1e6)):
        if abs(value_ns) < limit:
            return f"{value_ns / scale:.3g} {unit}"
    return f"{value_ns / 1e9:.3g} s"


def format_value(value: float, unit: str) -> str:
    if unit == "ns":
        return format_ns(value)
    if math.isnan(value):
        return "-"
    if abs(value) >= 1e4:
        return f"{value:,.0f}" + (f" {unit}" if unit else "")
    return f"{value:.4g}" + (f" {unit}" if unit else "")


def format_ratio(ratio: float, ci_low: float, ci_high: float) -> str:
    if math.isnan(ratio):
        return "-"
    if ci_low == ci_high:
        return f"{ratio:.3f}"
    high = "∞" if math.isinf(ci_high) else f"{ci_high:.3f}"
    return f"{ratio:.3f} [{ci_low:.3f}, {high}]"


def format_seconds(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
