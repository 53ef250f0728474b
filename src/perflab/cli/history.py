"""The command line of the workflows over a history: `bisect`, `check` and `history`, which
take the benchmark and measuring options of `run` (and `--build`, `--cache-dir`)."""

from __future__ import annotations

from perflab.cli.changes import Option, RunLikeCommand, each_option, option

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
first, then every step of the search.

example:
  perflab bisect v1.2 main --cmd ./build/bench --build "make -j" --threshold 2%
  perflab bisect v1.2 main --cmd ./build/bench --build "make -j" --faster --markdown b.md
"""


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
(--pytest, --asv, --gbench) has a series per benchmark, each with its change points (--json
or --markdown; --html draws one series).

examples:
  perflab history v1.0..main --every 4 --cmd ./build/bench --build "make -j" --html trend.html
  perflab history v1.0..main --asv benchmarks --json history.json
"""


EACH_EXAMPLE = "python=venv/bin/python"


def _threshold(what: str) -> Option:
    return option("--threshold", default="2%", help=f"{what}: 2%% or 0.02 (default 2%%)")


BISECT_OPTIONS = (
    option("good", metavar="GOOD", help="a commit where the benchmark was fine"),
    option("bad", metavar="BAD", help="a later commit where it is worse"),
    _threshold("how much worse than GOOD counts as bad"),
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
    each_option(EACH_EXAMPLE),
)

CHECK_OPTIONS = (
    option("--base", dest="base_ref", metavar="REF", help="what the change is for"),
    option(
        "--head",
        metavar="REF",
        help="the change (default: the working tree, i.e. HEAD with its uncommitted "
        "changes to tracked files; HEAD alone when it is clean)",
    ),
    _threshold("how much worse counts as a regression"),
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
    each_option(EACH_EXAMPLE),
)

HISTORY_OPTIONS = (
    option("range_text", metavar="RANGE", help="OLDER..NEWER, e.g. v1.0..main"),
    option(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="every Nth commit, counted back from the newest (default 1: all)",
    ),
    _threshold("the smallest step that is a change point"),
    each_option(EACH_EXAMPLE),
)


HISTORY_COMMANDS = (
    RunLikeCommand("bisect", BISECT_TEXT, BISECT_OPTIONS),
    RunLikeCommand("check", CHECK_TEXT, CHECK_OPTIONS),
    RunLikeCommand("history", HISTORY_TEXT, HISTORY_OPTIONS),
)
