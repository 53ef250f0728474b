"""The workflows' answers (history, bisect, check) in each output format: terminal, Markdown and
HTML. The history and bisect views are sections (:mod:`perflab.report.workflow_views`) laid out by
the generic renderers; a step said while bisecting and the pull-request comment of `perflab check`
have one format each and are written here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from urllib.parse import quote

from rich.console import Console

from perflab.records.bisect import BisectResult, BisectStep, StepState
from perflab.records.document import Cell, Paragraph, Section, Style
from perflab.records.document import Table as DocTable
from perflab.records.kinds import Metric
from perflab.records.results import RunResult
from perflab.records.units import format_ratio
from perflab.records.workflow_results import CheckResult, HistoryResult, SuiteHistory, base_words
from perflab.report.escape import markdown, visible
from perflab.report.markdown import block_lines
from perflab.report.terminal import render_section, text_of
from perflab.report.workflow_views import (
    bisect_section,
    disagreement_text,
    history_answer,
    history_headline,
    history_rows,
    history_section,
    overruled_text,
    per_iteration_text,
    ratio_text,
)

# a check's one line and its comment's headline name at most this many regressed benchmarks
# of a suite (the table has them all)
NAMED_REGRESSIONS = 5


def describe_step(step: BisectStep, total: int) -> str:
    """One line per step, said while bisecting."""
    outcome = step.outcome
    more = f" (measured {step.attempts}x)" if step.attempts > 1 else ""
    why = f": {outcome.reason}" if outcome.reason else ""
    shown = (
        f" {ratio_text(outcome.ratio, outcome.ci_low, outcome.ci_high)}"
        if outcome.ratio is not None
        else ""
    )
    inside = f" inside {step.inside[:10]}" if step.inside else ""
    reused = f" (run {outcome.run_id} in the store)" if outcome.reused else ""
    return (
        f"[{step.index + 1}/{total}{inside}] {step.commit[:10]} {step.subject}: {outcome.state}"
        f"{shown}{more}{reused}{why}"
    )


def render_bisect(result: BisectResult, console: Console) -> None:
    render_section(bisect_section(result), console, max_rows=None)


# more rows than this push the answer above them off a terminal's screen
SCREEN_ROWS = 20


def render_history(result: HistoryResult, console: Console) -> None:
    """The answer, the rows; under a long table the answer's first line again, as that is what
    a terminal leaves in view."""
    render_section(history_section(result), console, max_rows=None)
    if len(result.points) > SCREEN_ROWS:
        headline = history_headline(result)
        where = ": in the table above the rows" if result.changes else ""
        console.print(text_of(replace(headline, text=headline.text + where)))


def history_html(result: HistoryResult, *, change_links: dict[int, str]) -> str:
    """A self-contained page that starts with the answer: the change points (each linked to its
    direct comparison's report), or that nothing changed; then the trend; then every commit."""
    from perflab.report.html import render_page  # jinja2: loaded only when a page is written

    section = history_section(result, change_links=change_links)
    return render_page(f"perflab history {result.range_text}", (section,))


def history_markdown(result: HistoryResult) -> str:
    """The history as Markdown, the answer first and open (the change points, or that nothing
    changed, and the commits not measured); every commit's row folded under details (the trend
    chart is the HTML page's)."""
    title = f"history: {result.range_text}, {result.metric} per iteration"
    lines = [f"#### {markdown(title)}", ""]
    for block in history_answer(result, {}):
        lines += block_lines(block)
    lines += [
        f"<details><summary>every commit ({len(result.points)})</summary>",
        "",
        "*trend: a plot in the HTML report (`--html FILE`)*",
        "",
    ]
    for block in history_rows(result):
        lines += block_lines(block)
    return "\n".join([*lines, "</details>"]) + "\n"


def suite_history_headline(found: SuiteHistory) -> str:
    """A suite's history in a line: which benchmarks changed, of how many, by a confirmed
    change point; those with candidates alone (no direct comparison confirmed them) apart."""
    total = len(found.series)
    commits = max((len(s.points) for s in found.series), default=0)
    across = f"beyond {found.threshold:.1%} across {commits} commit{'s' * (commits != 1)}"
    if not found.changed:
        return f"no benchmark of {total} changed in {found.metric} per iteration {across}"
    confirmed = [s for s in found.changed if any(c.confirmed for c in s.changes)]
    candidates = [s for s in found.changed if s not in confirmed]
    apart = (
        f"{len(candidates)} with candidates a direct comparison did not confirm: "
        + ", ".join(str(s.benchmark) for s in candidates)
        if candidates
        else ""
    )
    if not confirmed:
        return (
            f"no benchmark of {total} changed in {found.metric} per iteration {across} by a "
            f"confirmed change point ({apart})"
        )
    names = ", ".join(str(s.benchmark) for s in confirmed)
    return (
        f"{len(confirmed)} of {total} benchmarks changed in {found.metric} per iteration "
        f"{across}, confirmed by a direct comparison: {names}" + (f"; {apart}" if apart else "")
    )


def suite_history_markdown(found: SuiteHistory) -> str:
    """A suite's history as Markdown: the line naming the benchmarks that changed, then each
    benchmark's history (those with a change point first)."""
    lines = [f"### {markdown('history of a suite: ' + suite_history_headline(found))}", ""]
    ordered = [*found.changed, *(s for s in found.series if not s.changes)]
    for series in ordered:
        lines += [f"##### {markdown(str(series.benchmark))}", "", history_markdown(series)]
    return "\n".join(lines)


def suite_history_html(
    found: SuiteHistory, *, change_links: Mapping[str, Mapping[int, str]]
) -> str:
    """A suite's history as one page: the line naming the benchmarks that changed and a row
    per benchmark linked to its part, then each benchmark's history with its trend (those with
    a change point first). `change_links`: a benchmark -> its change points' reports."""
    from perflab.report.html import render_page  # jinja2: loaded only when a page is written

    ordered = [*found.changed, *(s for s in found.series if not s.changes)]
    rows: list[tuple[Cell, ...]] = []
    parts: list[Section] = []
    for number, series in enumerate(ordered, 1):
        name, key = str(series.benchmark), f"history-{number}"
        part = history_section(series, change_links=change_links.get(name, {}))
        parts.append(replace(part, title=name, key=key))  # the range and lens: the page's top
        skipped = sum(1 for p in series.points if p.skipped)
        rows.append(
            (Cell(name, href=f"#{key}"), Cell(str(len(series.changes))), Cell(str(skipped)))
        )
    front = Section(
        f"history of a suite: {found.range_text}, {found.metric} per iteration",
        (
            Paragraph(suite_history_headline(found), Style.EMPHASIS),
            DocTable(
                ("benchmark", "change points", "commits not measured"),
                tuple(rows),
                numeric=(False, True, True),
            ),
        ),
        key="suite",
    )
    return render_page(f"perflab history {found.range_text}", (front, *parts))


def check_line(checked: CheckResult, *, failures_above: bool = False) -> str:
    """The check's one line on the terminal (`check_headline` is the comment's);
    `failures_above`: the run's notes, shown above it, hold each failure in full, so a run that
    measured nothing names the variants that failed."""
    outcome = checked.outcome
    failures = checked.result.failures
    if failures_above and failures and outcome.state is StepState.SKIPPED:
        names = ", ".join(dict.fromkeys(f.variant or "?" for f in failures))
        return f"not measured: {names} failed (the reasons are in the notes above)"
    disagreement = checked.disagreement
    if checked.overruled and disagreement is not None:
        return f"passed: {overruled_text(disagreement)}"
    said = ""
    if disagreement is not None and outcome.state is not StepState.SKIPPED:
        said = "; " + disagreement_text(disagreement, "the gate")
    ratio = ""
    if outcome.ratio is not None:
        ratio = " " + ratio_text(outcome.ratio, outcome.ci_low, outcome.ci_high)
    return _verdict_words(checked, checked.threshold, ratio) + said


def _verdict_words(checked: CheckResult, threshold: float, ratio: str) -> str:
    outcome = checked.outcome
    if outcome.state is not StepState.SKIPPED:
        total = len(checked.result.experiment.benchmarks)
        if total > 1:
            return _suite_verdict_words(checked, threshold, ratio, total)
    return {
        StepState.BAD: f"regression: {checked.metric}{ratio}, more than {threshold:.1%} worse "
        "than the base",
        StepState.GOOD: f"passed: {checked.metric}{ratio}, not worse than {threshold:.1%}",
        StepState.INCONCLUSIVE: f"passed, inconclusive: {checked.metric}{ratio} straddles "
        f"{threshold:.1%}; not a confirmed regression (a larger --budget would settle it)",
        StepState.SKIPPED: f"not measured: {outcome.reason}",
    }[outcome.state]


def _suite_verdict_words(checked: CheckResult, threshold: float, ratio: str, total: int) -> str:
    """A suite's one line: which of its benchmarks regressed and the worst's ratio, or, when
    none did, the slowest's."""
    metric, state = checked.metric, checked.outcome.state
    if state is StepState.BAD:
        named = list(checked.regressed[:NAMED_REGRESSIONS])
        more = len(checked.regressed) - len(named)
        names = ", ".join(named) + (f" and {more} more" if more > 0 else "")
        return (
            f"regression: {len(checked.regressed)} of {total} benchmarks more than "
            f"{threshold:.1%} worse than the base by {metric} (family-wise): {names}; the "
            f"worst{ratio}"
        )
    if state is StepState.GOOD:
        return (
            f"passed: none of {total} benchmarks worse than {threshold:.1%} by {metric} "
            f"(family-wise); the slowest{ratio}"
        )
    return (
        f"passed, inconclusive: none of {total} benchmarks confirmed worse than "
        f"{threshold:.1%} by {metric}, and some straddle it; the slowest{ratio}; not a "
        "confirmed regression (a larger --budget would settle it)"
    )


def check_headline(check: CheckResult) -> str:
    """The verdict in one line, naming the lens that gates, and where another lens measured
    beside it disagrees, both: the comment's first line says what the whole comparison says."""
    gate, threshold = check.metric, f"{check.threshold:.1%}"
    disagreement = check.disagreement
    if check.overruled and disagreement is not None:
        return f"⚠️ not failed: {overruled_text(disagreement)}"
    headline = {
        StepState.BAD: f"❌ regression: {gate} more than {threshold} worse",
        StepState.GOOD: f"✅ no regression in {gate} beyond {threshold}",
        StepState.INCONCLUSIVE: f"⚠️ inconclusive in {gate} at {threshold}: not failed",
        StepState.SKIPPED: "⚠️ not measured",
    }[check.outcome.state]
    total = len(check.result.experiment.benchmarks)
    if check.regressed and total > 1:
        named = ", ".join(check.regressed[:NAMED_REGRESSIONS])
        named += ", ..." if len(check.regressed) > NAMED_REGRESSIONS else ""
        headline += f": {len(check.regressed)} of {total} benchmarks ({named})"
    if disagreement is not None and check.outcome.state is not StepState.SKIPPED:
        headline += f"; {disagreement_text(disagreement, 'the gate')}"
    return headline


def check_markdown(check: CheckResult, *, report_link: str | None = None) -> str:
    """The pull-request comment: the verdict, the table, the top explanation, the report.
    `report_link` is a checked http(s) URL or a relative file name
    (cli/workflows/check/handler.py)."""
    result = check.result
    lenses = ", ".join(str(m) for m in check.lenses[1:])
    beside = f" ({lenses} beside it)" if lenses else ""
    base_from = f", {_md(base_words(check.base_from))}" if check.base_from else ""
    lines = [
        f"### perflab check: {_md(check_headline(check))}",
        "",
        f"`{check.head.commit[:10]}` {_md(check.head.subject)}"
        + (" with uncommitted changes" if check.working_tree else "")
        + " against "
        f"`{check.base.commit[:10]}` {_md(check.base.subject)} (base {_code(check.base_ref)}"
        f"{base_from}), the {check.metric} lens gates{beside}, run {result.run_id}.",
        "",
        "| benchmark | metric | base | head | ratio [95% CI] | verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    lines += _comparison_rows(check)
    lines.append("")
    explanation = _top_explanation(result, check.metric)
    if explanation:
        lines += ["**Where it changed** (the largest changes first):", "", *explanation]
    if result.failures:
        lines += [f"- not measured: {_md(f.message)}" for f in result.failures] + [""]
    for note in check.notes:
        lines += [f"_{_md(note)}_", ""]
    if report_link:
        target = link_target(report_link)
        lines += [f"[The full report (plots, every lens's tables)]({target})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# kept as they are in a link's target: what a URL's syntax needs; everything else (spaces,
# parentheses, angle brackets, quotes, `@`, backslashes) is percent-encoded, so a link cannot
# end early, open another, hold HTML or mention anyone
_LINK_SAFE = "/:?#&=+%-._~,;"


def link_target(url: str) -> str:
    """A URL or file name as a Markdown link's target: nothing in it read as Markdown."""
    return quote(visible(url), safe=_LINK_SAFE)


def _comparison_rows(check: CheckResult) -> list[str]:
    """Each measured lens's comparison, the gate's first, one table row each (events are the
    details' part)."""
    order = {m: i for i, m in enumerate(check.lenses or (check.metric,))}
    found = [c for c in check.result.comparisons if c.metric in order and c.event is None]
    return [
        f"| {_md(c.benchmark)} | {c.metric} | {per_iteration_text(c.baseline_value, c.unit)} | "
        f"{per_iteration_text(c.variant_value, c.unit)} | "
        f"{format_ratio(c.ratio, c.ci_low, c.ci_high)} | {c.verdict} |"
        for c in sorted(found, key=lambda c: order[c.metric])
    ]


def _code(text: str) -> str:
    """A name as a code span: shown as it is, so nothing in it is escaped but backticks."""
    return "`" + visible(text).replace("`", "'") + "`"


def _md(text: str) -> str:
    return markdown(text)  # escapes Markdown syntax, table pipes included


def _top_explanation(result: RunResult, metric: Metric, rows: int = 5) -> list[str]:
    """The first table of the metric's explanations (per function, per symbol ...), cut."""
    from perflab.report.markdown import table_lines

    for section in result.sections:
        if section.key != metric.value:
            continue
        for sub in section.subsections:
            for block in sub.blocks:
                if isinstance(block, DocTable) and block.rows:
                    shown = replace(
                        block,
                        rows=block.rows[:rows],
                        omitted_rows=block.omitted_rows + max(0, len(block.rows) - rows),
                    )
                    return table_lines(shown)
    return []


def bisect_markdown(result: BisectResult) -> str:
    """A bisection in Markdown: the answer, the search path, what was measured; then the
    culprit's evidence runs (itself against its parent, every lens: a run of the search
    first, when one compared the two, then the run of the lenses it lacked)."""
    from perflab.report.markdown import block_lines, render_markdown

    section = bisect_section(result)
    lines = [f"### perflab {markdown(section.title)}", ""]
    for block in section.blocks:
        lines += block_lines(block)
    for evidence in (result.evidence, *result.more_evidence):
        if evidence is not None:
            lines += ["", render_markdown(evidence)]
    return "\n".join(lines).rstrip("\n") + "\n"


def bisect_html(
    result: BisectResult, *, evidence_link: str = "", more_links: Sequence[str] = ()
) -> str:
    """A bisection as a page of its own: the answer, the search path, and a link to the
    culprit's evidence report (`evidence_link`, written beside it; `more_links`: the reports
    of `result.more_evidence`)."""
    from perflab.report.html import render_page  # jinja2: loaded only when a page is written

    section = bisect_section(result, evidence_link=evidence_link, more_links=more_links)
    return render_page(
        f"perflab bisect {result.good.commit[:10]}..{result.bad.commit[:10]}", (section,)
    )
