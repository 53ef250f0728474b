"""Inline SVG plots for the HTML report, one function per figure. Pure: plot data in, an <svg>
string out. The figures share the primitives of `canvas` (colours, text, labels) and the scales
and ticks of `axes`.

No JavaScript and no external resources: a report must open from a file on a machine without
network. Hover text is SVG <title>, which every browser shows as a tooltip.
"""

from perflab.report.svg.flame import flame_colour_scale, flame_graph, flame_legend
from perflab.report.svg.ratio_plots import ForestRow, forest_plot, generation_plot, waterfall
from perflab.report.svg.samples import time_scatter
from perflab.report.svg.trend_chart import trend

__all__ = [
    "ForestRow",
    "flame_colour_scale",
    "flame_graph",
    "flame_legend",
    "forest_plot",
    "generation_plot",
    "time_scatter",
    "trend",
    "waterfall",
]
