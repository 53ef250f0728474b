"""Format-neutral report fragments: what a lens shows beyond its verdict table.

Each lens's ``render.py`` turns its analysis (the comparisons' details) into one
:class:`Section` of these records; the terminal, Markdown and HTML renderers in
``perflab.report`` format any section the same way, so no lens can be missing from one format.
The records hold text and numbers already computed by analysis: renderers only lay them out.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Style(enum.StrEnum):
    """What a piece of text is, for renderers to colour (never what colour it is)."""

    PLAIN = ""
    UP = "up"  # more than the baseline (usually worse)
    DOWN = "down"  # less than the baseline
    ADD = "add"  # diff: only in the variant
    DEL = "del"  # diff: only in the baseline
    MOVED = "moved"  # diff: moved
    CHANGED = "changed"  # diff: changed in place
    GAP = "gap"  # elided lines
    HOT = "hot"  # inside the hot loop
    MUTED = "muted"  # secondary
    EMPHASIS = "emphasis"  # a finding the reader should not miss
    # a verdict cell: renderers colour it as the verdict
    FASTER = "faster"
    SLOWER = "slower"
    EQUIVALENT = "equivalent"
    INCONCLUSIVE = "inconclusive"
    INVALID = "invalid"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, its style, and a link the HTML gives it."""

    text: str
    style: Style = Style.PLAIN
    href: str = ""  # the HTML links the text there; text formats show the text only


@dataclass(frozen=True)
class Table:
    """A table of cells with column headings, which columns are numeric, and how many rows a short
    view left out."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: tuple[bool, ...] = ()  # right-aligned columns; empty: none
    caption: str = ""
    title: str = ""
    # rows left out of a short (terminal) view still count: "N more" is said from this
    omitted_rows: int = 0

    def is_numeric(self, index: int) -> bool:
        return index < len(self.numeric) and self.numeric[index]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of text in one style."""

    text: str
    style: Style = Style.PLAIN


@dataclass(frozen=True)
class Preformatted:
    """Monospaced lines (an assembly diff), each with its own style."""

    title: str
    lines: tuple[Cell, ...]


# --- figures: data for plots; HTML draws them, text formats say where to find them ------------


@dataclass(frozen=True)
class TimePoint:
    """One sample in a time series: when it was taken and its per-iteration value."""

    at_s: float  # since the benchmark's first sample
    value: float  # per iteration
    generation: int
    warmup: bool = False


@dataclass(frozen=True)
class TimeSeries:
    """One variant's samples over the run, for the time plot."""

    label: str
    index: int  # the variant's position (0: baseline): its colour
    points: tuple[TimePoint, ...]


@dataclass(frozen=True)
class GroupRatios:
    """A comparison's ratio per generation (or batch): the values its CI is computed over."""

    label: str
    index: int  # the variant's position: its colour
    ratios: tuple[tuple[int, float], ...]  # (generation or batch, ratio)
    ratio: float  # the overall estimate and its CI
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class FlameNode:
    """One call path (root first) of a differential flame tree, with its inclusive share of the
    baseline's and of the variant's samples."""

    symbol: str
    object: str
    baseline_share: float  # inclusive: samples on this path / all baseline samples
    variant_share: float
    children: tuple[FlameNode, ...] = ()

    @property
    def delta(self) -> float:
        """Change of the inclusive share, in fractions (0.02 = 2 percentage points more)."""
        return self.variant_share - self.baseline_share

    @property
    def depth(self) -> int:
        """Frames on the deepest path below and including this one."""
        return 1 + max((child.depth for child in self.children), default=0)


@dataclass(frozen=True)
class ScatterFigure:
    """Raw samples over time, one panel per variant."""

    title: str
    series: tuple[TimeSeries, ...]
    explanation: str = ""


@dataclass(frozen=True)
class RatiosFigure:
    """Per-generation (or per-batch) ratios with the overall ratio and its CI."""

    title: str
    ratios: tuple[GroupRatios, ...]
    band: float
    group_name: str = "generation"
    explanation: str = ""


@dataclass(frozen=True)
class FlameFigure:
    """A flame graph of a profile, titled, with its explanation."""

    title: str
    tree: FlameNode
    explanation: str = ""


@dataclass(frozen=True, kw_only=True)
class WaterfallBar:
    """One bar of a waterfall, on the axis of the running product of ratios: from `start` to
    `end`, its CI as a whisker from `ci_low` to `ci_high`, labelled with its own `ratio`."""

    label: str
    start: float
    end: float
    ci_low: float
    ci_high: float
    ratio: float
    style: Style  # the verdict it shows, for its colour; MUTED: a derived bar


@dataclass(frozen=True)
class WaterfallFigure:
    """Bars each starting where the one before ended (a stack's steps, multiplied on a log
    axis), then bars from 1 (the steps' product, the whole range measured directly)."""

    title: str
    bars: tuple[WaterfallBar, ...]
    band: float
    summary: str = ""  # what the figure shows, in one sentence, for readers who cannot see it
    explanation: str = ""


@dataclass(frozen=True)
class TrendPoint:
    """A measured commit on a trend: its place on the line (0: the oldest commit shown)."""

    position: int
    value: float  # per iteration, in the figure's unit
    label: str  # what hovering over it says: the commit, its subject, its value
    href: str = ""  # the report of the run it was measured in (a published site links it)


@dataclass(frozen=True)
class TrendMark:
    """A change point: a vertical line at the commit where the new level starts."""

    position: int
    label: str
    style: Style  # SLOWER: the level rose; FASTER: it fell
    href: str = ""  # the report of its direct comparison


@dataclass(frozen=True, kw_only=True)
class TrendFigure:
    """A value per commit along a line of history (a line through the measured commits; the
    skipped ones leave a gap on the axis) and its change points."""

    title: str
    points: tuple[TrendPoint, ...]
    positions: int  # commits on the axis, measured or not
    marks: tuple[TrendMark, ...] = ()
    unit: str = ""
    summary: str = ""  # what the figure shows, in one sentence, for readers who cannot see it
    explanation: str = ""
    # what the commit axis names each place by (a short commit id), one per position; the
    # axis shows as many as fit
    axis_labels: tuple[str, ...] = ()


Figure = ScatterFigure | RatiosFigure | FlameFigure | WaterfallFigure | TrendFigure
Block = Paragraph | Table | Preformatted | Figure


@dataclass(frozen=True)
class Section:
    """A titled part of a report: blocks in reading order, then subsections."""

    title: str
    blocks: tuple[Block, ...] = ()
    subsections: tuple[Section, ...] = ()
    key: str = ""  # a stable id (the metric name for a lens's section)

    def is_empty(self) -> bool:
        return not self.blocks and all(s.is_empty() for s in self.subsections)


FIGURE_TYPES = (ScatterFigure, RatiosFigure, FlameFigure, WaterfallFigure, TrendFigure)
