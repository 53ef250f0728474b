"""`perflab history`: one result per commit of a range, with its change points; its command
declared once for the registry (help, options, and by name its handler and view, in
`handler.py`, imported when the command runs)."""

from __future__ import annotations

from perflab.cli.declarations import RunLikeCommand, each_option, option
from perflab.cli.workflows.workflow import Workflow, threshold_option

HISTORY_TEXT = """\
one result per commit of a range, with its change points

Measure the commits of RANGE's first-parent line (reusing what was measured before) and find
where the benchmark changed.

One result per commit of RANGE's first-parent line (its base included), read from the runs
the store holds of the same tree, benchmark and settings: a nightly run measures only the
commits its store has not measured. Change points (PELT on the log of the values) are each
checked by a direct, interleaved comparison of the commits either side. A commit whose build
fails is skipped and named. The first lens of --metric is the series; each change point's
direct comparison measures time and instructions too, and says when they disagree. --html
draws the trend with its change points, each linked to its comparison's report. A suite
(--pytest, --asv, --gbench) has a series per benchmark, each with its change points (--json,
--markdown, or --html: one page with a trend per benchmark).

examples:
  perflab history v1.0..main --every 4 --cmd ./build/bench --build "make -j" --html trend.html
  perflab history v1.0..main --asv benchmarks --json history.json --html history.html
"""

HISTORY_OPTIONS = (
    option("range_text", metavar="RANGE", help="OLDER..NEWER, e.g. v1.0..main"),
    option(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="every Nth commit, counted back from the newest (default 1: all)",
    ),
    threshold_option("the smallest step that is a change point"),
    each_option(),
)


WORKFLOW = Workflow(
    command=RunLikeCommand("history", HISTORY_TEXT, HISTORY_OPTIONS),
    handler="perflab.cli.workflows.history.handler:handle",
    view="perflab.report.workflow_formats:render_history",
)
