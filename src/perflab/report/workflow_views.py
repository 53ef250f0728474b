"""The history and bisect views as report sections, built once from the workflows' records
(:mod:`perflab.records.workflow_results`, :mod:`perflab.bisection.threshold`) for every format:
the terminal, Markdown and HTML renderers lay these out as they do a lens's section.

A history's section: the answer first (how many change points, or none, and the commits not
measured; each change point with its direct comparison), then the trend as a figure, then a row
per commit (its value, how it was obtained, its run), what was measured and the notes.
A bisection's section: a row per step (its ratio against GOOD and the state it gave), the
skipped commits' reasons, then the culprit (or what is left) and what was measured."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from perflab.bisection.threshold import direction_words
from perflab.records.bisect import (
    BisectResult,
    Direction,
    EvidenceRun,
    EvidenceSource,
    StepState,
)
from perflab.records.document import (
    Block,
    Cell,
    Paragraph,
    Section,
    Style,
    Table,
    TrendFigure,
    TrendMark,
    TrendPoint,
)
from perflab.records.kinds import Metric, Verdict
from perflab.records.lens_agreement import LensDisagreement
from perflab.records.units import format_ratio
from perflab.records.workflow_results import HistoryChange, HistoryPoint, HistoryResult

TREND_EXPLANATION = (
    "One point per commit of the first-parent line, oldest first (normalised across nodes when "
    "the history spans several); a gap on the axis is a commit not measured."
)
MARKS_EXPLANATION = (
    " Dashed lines are change points: click one for its direct comparison; grey ones are "
    "candidates it did not confirm (a step of the series alone, which may be the machine)."
)
CHANGES_CAPTION = (
    "level ratio: the level after over the level before; direct: the commit against the one "
    "before it, measured together (confirmed: its CI wholly beyond the threshold)"
)


def per_iteration_text(value: float, unit: str) -> str:
    """A per-iteration value: counts whole with thousands separators, times to 4 digits."""
    if unit in ("instructions", "count", "") or value >= 1000:
        return f"{value:,.0f}" + (f" {unit}" if unit not in ("instructions", "") else "")
    return f"{value:.4g} {unit}"


def ratio_text(
    ratio: float | None, ci_low: float | None, ci_high: float | None, *, missing: str = "-"
) -> str:
    """A ratio and its CI (a missing bound: the ratio itself); `missing` when not measured."""
    if ratio is None:
        return missing
    low = ci_low if ci_low is not None else ratio
    high = ci_high if ci_high is not None else ratio
    return format_ratio(ratio, low, high)


def change_words(metric: Metric, ratio: float, verdict: Verdict, *, countable: bool) -> str:
    """A lens's change in words: "7.3% more instructions", "12.6% less time", "time unchanged
    (1.002)"; `countable`: its figure counts things, so a fall is "fewer"."""
    if verdict in (Verdict.FASTER, Verdict.SLOWER):
        fewer = "fewer" if countable else "less"
        return f"{abs(ratio - 1.0):.1%} {'more' if ratio > 1.0 else fewer} {metric}"
    if verdict is Verdict.EQUIVALENT:
        return f"{metric} unchanged ({ratio:.3f})"
    return f"{metric} {ratio:.3f}, {verdict}"


def _gate_words(d: LensDisagreement) -> str:
    return change_words(d.gate, d.gate_ratio, d.gate_verdict, countable=d.gate_countable)


def _other_words(d: LensDisagreement) -> str:
    return change_words(d.other, d.other_ratio, d.other_verdict, countable=d.other_countable)


def disagreement_text(disagreement: LensDisagreement, follows: str) -> str:
    """Where two lenses disagree, said beside the decision: "7.3% more instructions, but 12.6%
    less time: the gate follows instructions (--metric)"; `follows` names who decided."""
    d = disagreement
    return f"{_gate_words(d)}, but {_other_words(d)}: {follows} follows {d.gate} (--metric)"


def overruled_text(disagreement: LensDisagreement) -> str:
    """Why the CI's default gate did not fail on a rise in instructions."""
    d = disagreement
    return (
        f"{_gate_words(d)}, but {_other_words(d)}, decisively: the default CI "
        f"gate does not fail a change the {d.other} lens says is faster (--metric {d.gate} "
        f"gates by {d.gate} alone)"
    )


def _state_style(state: StepState) -> Style:
    """A step's state as the verdict it reads as against GOOD; a skipped step is a comparison
    that could not be made."""
    if state is StepState.BAD:
        return Style.SLOWER
    if state is StepState.GOOD:
        return Style.EQUIVALENT
    return Style.INVALID if state is StepState.SKIPPED else Style.INCONCLUSIVE


def _change_style(change: HistoryChange) -> Style:
    """The level rose (more time, more instructions: worse) or fell."""
    return Style.SLOWER if change.series_ratio > 1 else Style.FASTER


# --- history --------------------------------------------------------------------------------


def history_section(
    result: HistoryResult, *, change_links: Mapping[int, str] | None = None
) -> Section:
    """What changed first (the change points, or that nothing did), then the trend, then a row
    per commit, what was measured and the notes.
    `change_links`: a change point's index -> its direct comparison's report (HTML links it)."""
    links = change_links or {}
    trend = trend_figure(result, links)
    blocks = (*history_answer(result, links), *([trend] if trend else []), *history_rows(result))
    title = f"history: {result.range_text}, {result.metric} per iteration"
    return Section(title, blocks, key="history")


def history_answer(result: HistoryResult, links: Mapping[int, str]) -> tuple[Block, ...]:
    """The answer, said before the trend and the rows: how many change points (or none), the
    commits not measured and why, then each change point, any lens that disagrees with it and
    what bisect would narrow down."""
    said: list[Block] = [history_headline(result)]
    said += [Paragraph(text, Style.EMPHASIS) for text in _not_measured(result.points)]
    if not result.changes:
        return tuple(said)
    said.append(changes_table(result.changes, links))
    said += [
        Paragraph(
            f"{c.after.commit[:10]}: {disagreement_text(c.disagreement, 'the history')}",
            Style.EMPHASIS,
        )
        for c in result.changes
        if c.disagreement is not None
    ]
    said += [Paragraph(_unmeasured(c)) for c in result.changes if c.unmeasured_between]
    return tuple(said)


def history_headline(result: HistoryResult) -> Paragraph:
    """The answer in a line: "1 change point ... beyond 2.0% across 41 commits, confirmed by a
    direct comparison (and 4 candidates a direct comparison did not confirm)", "no confirmed
    change ... (2 candidates ...)", or "no change beyond 2.0% across 41 commits". A change point
    counts once its direct comparison confirms it: a step of the series alone may be the
    machine (its load between runs), so the candidates are said apart, never counted in."""
    commits = len(result.points)
    across = f"beyond {result.threshold:.1%} across {commits} commit{'s' * (commits != 1)}"
    if not result.changes:
        return Paragraph(f"no change {across}", Style.EMPHASIS)
    confirmed = sum(c.confirmed for c in result.changes)
    candidates = len(result.changes) - confirmed
    said = f"{number_of(candidates, 'candidate')} a direct comparison did not confirm"
    if not confirmed:
        return Paragraph(
            f"no confirmed change {across} ({said}, in {result.metric} per iteration)",
            Style.EMPHASIS,
        )
    return Paragraph(
        f"{number_of(confirmed, 'change point')} in {result.metric} per iteration {across}, "
        "confirmed by a direct comparison" + (f" (and {said})" if candidates else ""),
        Style.EMPHASIS,
    )


# names the commits not measured for one reason: a longer list is left to the rows
_NAMED_UNMEASURED = 5


def _not_measured(points: Sequence[HistoryPoint]) -> list[str]:
    """The commits without a value, grouped by why: "not measured (2): 0a1b2c3d4e, 5f6a7b8c9d:
    the build failed"."""
    why: dict[str, list[str]] = {}
    for point in points:
        if point.value is None:
            why.setdefault(point.skipped or "nothing was measured", []).append(point.commit[:10])
    lines = []
    for reason, commits in why.items():
        named = ", ".join(commits[:_NAMED_UNMEASURED])
        more = len(commits) - _NAMED_UNMEASURED
        named += f" and {more} more (the rows below)" if more > 0 else ""
        lines.append(f"not measured ({len(commits)}): {named}: {reason}")
    return lines


def history_rows(result: HistoryResult) -> tuple[Block, ...]:
    """A row per commit, then what was measured and the notes."""
    reused = sum(p.reused for p in result.points)
    skipped = sum(p.value is None for p in result.points)
    measured = Paragraph(
        f"{len(result.points)} commits: {result.measured_now} measured now, {reused} reused, "
        f"{skipped} skipped, in {result.seconds:.0f} s"
    )
    notes = tuple(Paragraph(f"info: {note}", Style.MUTED) for note in result.notes)
    return (points_table(result), measured, *notes)


def _how(point: HistoryPoint, change: HistoryChange | None) -> Cell:
    """How the point's value was obtained, or the change point (or the candidate no direct
    comparison confirmed) that starts at it."""
    if change is not None and not change.confirmed:
        return Cell(f"candidate {change.series_ratio:.3f}, not confirmed", Style.MUTED)
    if change is not None:
        return Cell(f"change {change.series_ratio:.3f}", _change_style(change))
    if point.value is None:
        return Cell(f"skipped: {point.skipped}", Style.EMPHASIS)
    return Cell("reused" if point.reused else "measured", Style.MUTED)


def points_table(
    result: HistoryResult,
    run_links: Mapping[int, str] | None = None,
    *,
    shown: Collection[int] | None = None,
    caption: str = "",
) -> Table:
    """A row per commit: the value compared along the history, as measured (when normalised
    across nodes or levelled across runs), how it was obtained, its run and its node (when it
    spans several).
    `run_links`: a point's index -> the report of its run; `shown`: the points given a row
    (None: all)."""
    starts = {c.index: c for c in result.changes}
    nodes = any(p.node for p in result.points)
    # the value as measured beside the compared one, where they differ: normalised across
    # nodes, or levelled across runs
    normalised = any(
        p.normalised_value is not None or p.levelled_value is not None for p in result.points
    )
    rows = []
    for index, point in enumerate(result.points):
        if shown is not None and index not in shown:
            continue
        measured = [Cell(_value_text(point.value, point.unit))] if normalised else []
        rows.append(
            (
                Cell(point.commit[:10]),
                Cell(point.subject),
                Cell(_value_text(point.series_value, point.unit)),
                *measured,
                _how(point, starts.get(index)),
                Cell(_run_text(point.run_id), href=(run_links or {}).get(index, "")),
                *([Cell(point.node)] if nodes else []),
            )
        )
    columns = ("commit", "subject", "value", *(["as measured"] * normalised), "", "run")
    return Table(
        (*columns, *(["node"] * nodes)),
        tuple(rows),
        numeric=(False, False, True, *([True] * normalised), False, True, False),
        caption=caption,
    )


def _value_text(value: float | None, unit: str) -> str:
    return "-" if value is None else per_iteration_text(value, unit)


def _run_text(run_id: int | None) -> str:
    return str(run_id) if run_id is not None else ""


def changes_table(changes: Sequence[HistoryChange], links: Mapping[int, str]) -> Table:
    """Each change point: the commit where the level moved, from what to what and by how much,
    the direct comparison of the commit against the one before it (confirmed or not) and,
    where another lens measured beside it disagrees, what that lens says."""
    disagree = any(c.disagreement is not None for c in changes)
    rows = tuple(
        (
            Cell(c.after.commit[:10]),
            Cell(c.after.subject),
            Cell(_before_after(c)),
            Cell(f"{c.series_ratio:.3f}", _change_style(c) if c.confirmed else Style.MUTED),
            Cell(ratio_text(c.ratio, c.ci_low, c.ci_high, missing="not measured")),
            Cell("confirmed" if c.confirmed else "not confirmed", Style.MUTED),
            *([_other_lens(c.disagreement)] if disagree else []),
            Cell(
                _run_text(c.run_id) + (", reused" if c.reused else ""), href=links.get(c.index, "")
            ),
        )
        for c in changes
    )
    columns = ("commit", "subject", "before → after", "level ratio", "direct [95% CI]", "")
    return Table(
        (*columns, *(["other lens"] * disagree), "run"),
        rows,
        numeric=(False, False, True, True, True, False, *([False] * disagree), True),
        caption=CHANGES_CAPTION,
    )


def _other_lens(disagreement: LensDisagreement | None) -> Cell:
    """What the lens that disagrees says: "12.6% less time"; empty where none does."""
    if disagreement is None:
        return Cell("")
    return Cell(_other_words(disagreement), Style.EMPHASIS)


def _before_after(change: HistoryChange) -> str:
    """The values of the commits either side: "1,005 → 1,500 ns" (the unit said once)."""
    unit = change.after.unit or change.before.unit
    before = _value_text(change.before.series_value, unit)
    after = _value_text(change.after.series_value, unit)
    if unit and before.endswith(f" {unit}") and after.endswith(f" {unit}"):
        before = before.removesuffix(f" {unit}")
    return f"{before} → {after}"


def _unmeasured(change: HistoryChange) -> str:
    before, after = change.before.commit[:10], change.after.commit[:10]
    return (
        f"{change.unmeasured_between} commit(s) between {before} and {after} were not "
        f"measured: `perflab bisect {before} {after}` (with the same benchmark options) finds "
        "the commit"
    )


def trend_figure(
    result: HistoryResult,
    links: Mapping[int, str],
    point_links: Mapping[int, str] | None = None,
) -> TrendFigure | None:
    """The compared value of each measured commit and the change points; None: none measured.
    `point_links`: a point's index -> the report of the run it was measured in."""
    points = tuple(
        TrendPoint(index, value, _point_label(point, value), (point_links or {}).get(index, ""))
        for index, point in enumerate(result.points)
        if (value := point.series_value) is not None
    )
    if not points:
        return None
    marks = tuple(
        TrendMark(
            c.index,
            f"{c.after.subject}: {c.series_ratio:.3f}x"
            + ("" if c.confirmed else ", a candidate not confirmed by a direct comparison"),
            _change_style(c) if c.confirmed else Style.MUTED,
            links.get(c.index, ""),
        )
        for c in result.changes
    )
    unit = next(p.unit for p in result.points if p.value is not None)
    axis_labels = tuple(p.commit[:7] for p in result.points)
    confirmed = sum(c.confirmed for c in result.changes)
    summary = (
        f"{result.metric} per iteration over {len(result.points)} commits of "
        f"{result.range_text}, {confirmed} confirmed change point(s)"
        + (
            f" and {len(marks) - confirmed} candidate(s) not confirmed"
            if len(marks) > confirmed
            else ""
        )
    )
    return TrendFigure(
        title="trend",
        points=points,
        positions=len(result.points),
        marks=marks,
        unit=unit,
        summary=summary,
        explanation=TREND_EXPLANATION + (MARKS_EXPLANATION if marks else ""),
        axis_labels=axis_labels,
    )


def _point_label(point: HistoryPoint, value: float) -> str:
    where = f" on {point.node}" if point.node else ""
    return f"{point.commit[:10]} {point.subject}: {per_iteration_text(value, point.unit)}{where}"


# --- bisect ---------------------------------------------------------------------------------


def bisect_section(
    result: BisectResult, *, evidence_link: str = "", more_links: Sequence[str] = ()
) -> Section:
    """The answer first (the commit found, inside which merges, what its lenses say), then the
    search path (every step: its commit, its ratio against GOOD, its verdict), then what was
    measured. `evidence_link`: where the HTML links the culprit's evidence run;
    `more_links`: its other evidence runs (`result.more_evidence`)."""
    blocks: list[Block] = [*_found(result), steps_table(result)]
    blocks += [
        Paragraph(f"skipped {s.commit[:10]} {s.subject}: {s.outcome.reason}", Style.EMPHASIS)
        for s in result.steps
        if s.outcome.state is StepState.SKIPPED
    ]
    reused = sum(s.outcome.reused for s in result.steps)
    blocks.append(
        Paragraph(
            f"{number_of(result.measured_commits, 'commit')} measured "
            f"({number_of(len(result.steps), 'step')}"
            + (f", {reused} read from the store's earlier runs" if reused else "")
            + f") in {result.seconds:.0f} s; the first-parent line holds "
            f"{len(result.line) + 1} with GOOD"
        )
    )
    blocks += [Paragraph(f"info: {note}", Style.MUTED) for note in result.notes]
    blocks += _evidence(result, (evidence_link, *more_links))
    of = f" of {result.benchmark}" if result.benchmark is not None else ""
    title = (
        f"bisect: {result.metric}{of} against GOOD {result.good.commit[:10]}, looking for "
        f"{direction_words(result.direction, result.threshold)}"
    )
    return Section(title, tuple(blocks), key="bisect")


def _evidence(result: BisectResult, links: Sequence[str]) -> list[Block]:
    """Which runs the culprit against its parent is: one measured for it ("... is run 21"), or
    the runs a step of the search or the store made of the two, and one more for the lenses
    they lacked ("...: run 14, measured during the search (time); run 22, measured for the
    evidence (instructions)")."""
    runs = result.evidence_runs or (
        (EvidenceRun(result.evidence_run, (result.metric,)),)
        if result.evidence_run is not None
        else ()
    )
    if not runs:
        return []
    parent = f" {result.parent.commit[:10]}" if result.parent is not None else ""
    head = f"evidence: the culprit against its first parent{parent}"
    if len(runs) == 1 and runs[0].source is EvidenceSource.MEASURED:
        said = [f"{head} is run"]
        text = f"{head} is run {runs[0].run_id}"
    else:
        said = [_evidence_source(r, several=len(runs) > 1) for r in runs]
        text = f"{head}: " + "; ".join(
            f"run {r.run_id}, {how}" for r, how in zip(runs, said, strict=True)
        )
        said[0] = f"{head}: {said[0]}"
    if not any(links):
        return [Paragraph(text)]
    hrefs = [*links[: len(runs)], *[""] * (len(runs) - len(links))]
    rows = tuple(
        (Cell(how), Cell(str(r.run_id), href=href))
        for r, how, href in zip(runs, said, hrefs, strict=True)
    )
    return [Table(("evidence", "run"), rows, numeric=(False, True))]


def _evidence_source(run: EvidenceRun, *, several: bool) -> str:
    """Where one evidence run came from ("measured during the search"), and its lenses
    ("(time)") when the evidence is read from several runs."""
    where = {
        EvidenceSource.SEARCH: "measured during the search",
        EvidenceSource.STORE: "read from the store's earlier runs",
        EvidenceSource.MEASURED: "measured for the evidence",
    }[run.source]
    lenses = f"({', '.join(str(m) for m in run.metrics)})" if several else ""
    return f"{where} {lenses}".rstrip()


def _found(result: BisectResult) -> list[Paragraph]:
    """The answer: the culprit (inside which merges), or the commits it is one of, and why the
    search stopped early or could not go inside a merge."""
    style = Style.SLOWER if result.direction is Direction.SLOWER else Style.EMPHASIS
    if result.culprit is None:
        style = Style.INCONCLUSIVE
    found = [Paragraph(result.answer(), style)]
    outer = result.first_parent_culprit
    if result.merges and outer is not None:
        found.append(
            Paragraph(
                f"on the first-parent line: {outer.commit[:10]} {outer.subject}, a merge; the "
                "search went on inside the branch it merged"
            )
        )
    if result.culprit is not None and result.disagreement is not None:
        said = disagreement_text(result.disagreement, "the search")
        found.append(Paragraph(f"against its parent: {said}", Style.EMPHASIS))
    if result.not_inside:
        found.append(Paragraph(result.not_inside, Style.INCONCLUSIVE))
    if result.stopped and result.culprit is None and result.candidates:
        found.append(Paragraph(result.stopped, Style.INCONCLUSIVE))
    return found


def steps_table(result: BisectResult) -> Table:
    """A row per step in the order measured: the commit, the line it is on, its ratio
    against GOOD, its verdict, its run (and whether the store held it already)."""
    rows = []
    for number, step in enumerate(result.steps, 1):
        outcome = step.outcome
        state = outcome.state
        more = f" ({step.attempts}x)" if step.attempts > 1 else ""
        rows.append(
            (
                Cell(str(number)),
                Cell(step.commit[:10]),
                Cell(step.subject),
                Cell(f"inside {step.inside[:10]}" if step.inside else "first-parent"),
                Cell(ratio_text(outcome.ratio, outcome.ci_low, outcome.ci_high)),
                Cell(f"{state}{more}", _state_style(state)),
                Cell(_run_text(outcome.run_id) + (", reused" if outcome.reused else "")),
            )
        )
    return Table(
        ("#", "commit", "subject", "line", "ratio vs GOOD [95% CI]", "step", "run"),
        tuple(rows),
        numeric=(True, False, False, False, False, False, True),
        caption="the search path: each step's commit against GOOD, in the order measured",
    )


def number_of(n: int, word: str) -> str:
    """`n` and the word, in the plural past one ("1 step", "2 commits")."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
