"""The differential flame graph and its colour key."""

from __future__ import annotations

from perflab.records.document import FlameNode
from perflab.report.escape import html_text as escape
from perflab.report.svg.canvas import coord, fit_label, svg_document, svg_text

# colours as RGB: an unchanged frame is neutral; a changed one moves towards red (grew) or blue
# (shrank), the usual reading of differential flame graphs
NEUTRAL = (226, 220, 210)
GROWTH = (214, 64, 50)
SHRINK = (52, 110, 196)


def delta_colour(delta: float, scale: float) -> str:
    """Neutral for no change; redder as a frame's share grows, bluer as it shrinks, saturating
    at `scale` (a change in fractions, 0.05 = 5 percentage points)."""
    strength = min(abs(delta) / scale, 1.0) if scale > 0 else 0.0
    target = GROWTH if delta > 0 else SHRINK
    r, g, b = (round(n + (t - n) * strength) for n, t in zip(NEUTRAL, target, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _max_abs_delta(node: FlameNode) -> float:
    return max([abs(node.delta), *(_max_abs_delta(c) for c in node.children)])


def flame_colour_scale(root: FlameNode, floor: float = 0.02) -> float:
    """Full colour at the largest change, but never for less than `floor` (2 points): an A/A
    profile must not look dramatic because of sampling noise."""
    return max(_max_abs_delta(root), floor)


def visible_depth(node: FlameNode, width: float, min_frame_px: float) -> int:
    """Levels with at least one frame wide enough to draw: narrow deep stacks add no height."""
    if node.variant_share * width < min_frame_px:
        return 0
    return 1 + max((visible_depth(c, width, min_frame_px) for c in node.children), default=0)


def flame_graph(
    root: FlameNode,
    *,
    width: float = 1200,
    frame_px: float = 17,
    min_frame_px: float = 1.0,
    max_depth: int = 80,
) -> str:
    """A differential flame graph: width is the frame's share of the variant's samples, colour
    the change against the baseline. Root at the bottom; hover a frame for its numbers."""
    depth = min(visible_depth(root, width, min_frame_px), max_depth)
    height = depth * frame_px + 4
    scale = flame_colour_scale(root)
    body: list[str] = []

    def draw(node: FlameNode, x0: float, level: int) -> None:
        w = node.variant_share * width
        if w < min_frame_px or level >= depth:
            return
        y = height - (level + 1) * frame_px - 2
        label = node.symbol if not node.object else f"{node.symbol}  ({node.object})"
        tip = (
            f"{label}\nbaseline {node.baseline_share:.2%} → variant {node.variant_share:.2%} "
            f"({node.delta * 100:+.2f} points)"
        )
        body.append(
            f"<g><title>{escape(tip)}</title>"
            f'<rect x="{coord(x0)}" y="{coord(y)}" width="{coord(max(w - 0.5, 0.3))}" '
            f'height="{coord(frame_px - 1)}" rx="1.5" fill="{delta_colour(node.delta, scale)}"/>'
        )
        shown = fit_label(node.symbol, w - 6)
        if shown:
            body.append(svg_text(x0 + 3, y + frame_px - 5, shown))
        body.append("</g>")
        child_x = x0
        for child in node.children:
            draw(child, child_x, level + 1)
            child_x += child.variant_share * width

    draw(root, 0.0, 0)
    return svg_document(width, height, body, "differential flame graph")


def flame_legend(scale: float, width: float = 420) -> str:
    """The colour key of :func:`flame_graph` for a given saturation `scale`."""
    steps = 9
    cell = (width - 120) / steps
    body = []
    for k in range(steps):
        delta = scale * (k - steps // 2) / (steps // 2)
        body.append(
            f'<rect x="{coord(60 + k * cell)}" y="2" width="{coord(cell)}" height="14" '
            f'fill="{delta_colour(delta, scale)}"/>'
        )
    body.append(svg_text(56, 13, f"−{scale * 100:.1f} pt", anchor="end"))
    body.append(svg_text(64 + steps * cell, 13, f"+{scale * 100:.1f} pt"))
    return svg_document(width, 18, body, "colour key: change of a frame's share")
