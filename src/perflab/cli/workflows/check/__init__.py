"""`perflab check`: a CI gate, HEAD against its merge base, failing only on a confirmed
regression; its command declared once for the registry (help, options, and by name its handler
and view, in `handler.py`, imported when the command runs)."""

from __future__ import annotations

from perflab.cli.declarations import RunLikeCommand, each_option, option
from perflab.cli.workflows.workflow import Workflow, threshold_option

CHECK_TEXT = """\
a CI gate: HEAD against its merge base, fails only on a confirmed regression

Compare HEAD with the merge base of --base and exit 1 only on a confirmed regression beyond
--threshold; --markdown writes a pull-request comment.

The base is the merge base of --base (default: origin/$GITHUB_BASE_REF or
origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME in CI, else origin/HEAD) and HEAD: only the
pull request's own effect is measured. Both are checked out and built in their own worktrees.
The exit status is 1 only for a confirmed regression (the ratio's whole CI above
1 + --threshold); inconclusive and faster pass. --markdown writes the pull-request comment.
The first lens of --metric gates, the others are measured beside it. On a CI runner (CI,
GITHUB_ACTIONS, GITLAB_CI ... set) the instructions lens gates by default (wall time on shared
runners is noise), with the time lens beside it: a change it says is decisively faster does
not fail on instructions alone. A suite (--pytest, --asv, --gbench) is gated whole, its
comparisons one family; the answer names the benchmarks that regressed.

examples:
  perflab check --base origin/main --cmd ./build/bench --build "make -j" \\
      --markdown comment.md --html perflab-report.html
  perflab check --base origin/main --pytest tests/benchmarks --markdown comment.md
"""

CHECK_OPTIONS = (
    option("--base", dest="base_ref", metavar="REF", help="what the change is for"),
    option(
        "--head",
        metavar="REF",
        help="the change (default: the working tree, i.e. HEAD with its uncommitted "
        "changes to tracked files; HEAD alone when it is clean)",
    ),
    threshold_option("how much worse counts as a regression"),
    option(
        "--no-merge-base",
        dest="merge_base",
        action="store_false",
        help="compare with --base's tip, not with the merge base",
    ),
    option(
        "--report-link",
        metavar="URL",
        help="where the comment links the HTML report (default: the --html file's name)",
    ),
    each_option(),
)


WORKFLOW = Workflow(
    command=RunLikeCommand("check", CHECK_TEXT, CHECK_OPTIONS),
    handler="perflab.cli.workflows.check.handler:handle",
    view="perflab.cli.workflows.check.handler:view",
)
