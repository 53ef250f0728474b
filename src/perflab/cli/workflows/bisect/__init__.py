"""`perflab bisect`: find the first commit after GOOD where the benchmark got worse; its
command declared once for the registry (help, options, and by name its handler and view, in
`handler.py`, imported when the command runs)."""

from __future__ import annotations

from perflab.cli.declarations import RunLikeCommand, each_option, option
from perflab.cli.workflows.workflow import Workflow, threshold_option

BISECT_TEXT = """\
find the first commit after GOOD where the benchmark got worse

Binary search over BAD's first-parent line for the first commit that is worse than GOOD by
more than --threshold (--faster: faster by more; --changed: either way).

Each step checks out and builds one commit of BAD's first-parent line and compares it with
GOOD in an interleaved experiment, kept in the store; a step the store holds already (same
commits, benchmark and settings) is read, not measured again. When the commit found is a
merge, the search goes on inside the branch it merged (from the merge base to its second
parent), and the answer names the innermost commit; where it cannot, it says why and gives
the command that looks inside. A commit whose build fails is skipped and named; a step that
stays inconclusive is measured again with twice the budget, then the search stops with what
is left. The first lens of --metric decides; the culprit against its parent is measured with
time and instructions too, and the answer says when they disagree. Without --metric the
instructions lens answers (deterministic), and the time lens is used when instructions do
not show the change. The reports (terminal, --json, --markdown, --html) give the answer
first, then every step of the search. A suite (--pytest, --asv, --gbench) is bisected on one
of its benchmarks: select it with -k EXPR, --bench REGEX or --filter REGEX (perflab history
of the suite says which changed).

example:
  perflab bisect v1.2 main --cmd ./build/bench --build "make -j" --threshold 2%
  perflab bisect v1.2 main --cmd ./build/bench --build "make -j" --faster --markdown b.md
  perflab bisect v1.2 main --pytest tests/bench -k test_parse --metric instructions
"""

BISECT_OPTIONS = (
    option("good", metavar="GOOD", help="a commit where the benchmark was fine"),
    option("bad", metavar="BAD", help="a later commit where it is worse"),
    threshold_option("how much worse than GOOD counts as bad"),
    option(
        "--faster",
        action="store_true",
        help="look for the first commit faster than GOOD by more than --threshold",
    ),
    option(
        "--changed",
        action="store_true",
        help="look for the first commit that differs from GOOD by more than --threshold, "
        "either way",
    ),
    each_option(),
)


WORKFLOW = Workflow(
    command=RunLikeCommand("bisect", BISECT_TEXT, BISECT_OPTIONS),
    handler="perflab.cli.workflows.bisect.handler:handle",
    view="perflab.cli.workflows.bisect.handler:view",
)
