"""The axes the plots share: round tick values on linear and log scales, the log scale of
ratios and its range, and the ratio axis drawn below a plot."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from perflab.report.svg.canvas import coord, svg_text


def linear_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 5 x 10^k steps) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


_LOG_CANDIDATES = sorted(
    {m * 10.0**k for k in range(-4, 5) for m in (1, 2, 5)}
    | {0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99}
    | {1.01, 1.02, 1.05, 1.1, 1.2, 1.25, 1.5, 3, 4}
)


def _round_inside(value: float, low: float, high: float) -> float | None:
    """`value` rounded to two significant digits, if that stays inside [low, high]."""
    if value <= 0:
        return None
    digits = 1 - math.floor(math.log10(value))
    rounded = round(value, digits)
    return rounded if low <= rounded <= high else None


def log_ticks(low: float, high: float, count: int = 7) -> list[float]:
    """Tick values for a ratio axis on a log scale: 1 always (when in range), then round values
    near 1 for narrow ranges or 1-2-5 decades for wide ones, at most about `count`."""
    inside = [t for t in _LOG_CANDIDATES if low <= t <= high]
    span = math.log(high) - math.log(low)
    if len(inside) <= count:
        chosen = inside
    else:
        # thin out evenly in log space, keeping 1
        chosen = [1.0] if low <= 1.0 <= high else []
        min_gap = span / count
        for tick in sorted(inside, key=lambda t: abs(math.log(t))):
            if all(abs(math.log(tick) - math.log(c)) >= min_gap * 0.9 for c in chosen):
                chosen.append(tick)
    # the axis is read up to its ends: a tick near each end when the round ones stop short
    edge = span * 0.12
    for end, inward in ((low, 1.04), (high, 1 / 1.04)):
        if chosen and min(abs(math.log(end) - math.log(c)) for c in chosen) <= span / 4:
            continue
        near = _round_inside(end * inward, low, high)
        if near is not None and all(abs(math.log(near) - math.log(c)) >= edge for c in chosen):
            chosen.append(near)
    return sorted(chosen)


def format_ratio_tick(value: float) -> str:
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class LogScale:
    """Maps values between `low` and `high` onto pixels on a logarithmic axis (values outside are
    clamped)."""

    low: float
    high: float
    start_px: float
    end_px: float

    def __call__(self, value: float) -> float:
        value = min(max(value, self.low), self.high)
        span = math.log(self.high) - math.log(self.low)
        return self.start_px + (math.log(value) - math.log(self.low)) / span * (
            self.end_px - self.start_px
        )


def ratio_domain(values: Sequence[float], band: float) -> tuple[float, float]:
    """A log-scale range holding 1, the equivalence band and every finite positive value."""
    finite = [v for v in values if math.isfinite(v) and v > 0]
    low = min([1 - band, *finite])
    high = max([1 + band, *finite])
    pad = (math.log(high) - math.log(low)) * 0.08 or 0.01
    return math.exp(math.log(low) - pad), math.exp(math.log(high) + pad)


# An interval wider than this factor (high / low) says little about where the ratio is: it does
# not set the axis (its ends are clipped at the edge and marked), so it cannot flatten every
# informative row onto 1.
UNINFORMATIVE_SPAN = 4.0


def informative(ci_low: float, ci_high: float) -> bool:
    return ci_low > 0 and math.isfinite(ci_high) and ci_high / ci_low <= UNINFORMATIVE_SPAN


def ratio_axis(x: LogScale, top: float, plot_bottom: float, caption: str) -> list[str]:
    """A log axis of ratios below the plot: the dashed line at 1, the ticks and the caption."""
    body = [
        f'<line x1="{coord(x(1))}" x2="{coord(x(1))}" y1="{coord(top)}" y2="{coord(plot_bottom)}" '
        'stroke="#444" stroke-dasharray="3,3"/>'
    ]
    for tick in log_ticks(x.low, x.high):
        body.append(
            f'<line x1="{coord(x(tick))}" x2="{coord(x(tick))}" y1="{coord(plot_bottom)}" '
            f'y2="{coord(plot_bottom + 4)}" stroke="#666"/>'
        )
        body.append(svg_text(x(tick), plot_bottom + 16, format_ratio_tick(tick), anchor="middle"))
    body.append(
        svg_text(
            (x.start_px + x.end_px) / 2,
            plot_bottom + 30,
            caption,
            anchor="middle",
            extra=' fill="#555"',
        )
    )
    return body
