"""A run's page in a published site: the report `perflab show --html` draws, lighter for a run
of many comparisons. A history's run of a hundred commits compares each with the first and with
the one before, every benchmark and lens: its report draws every comparison's samples and
ratios (9 MB for 20 benchmarks). A site shows each commit's value on its trend's page, so a
run's page keeps in full only the comparisons the site's change points link to it (their
figures and explanation), analysed whole for those benchmarks alone, and lists the others'
figures (the trends' own), largest first, in one table that says what was left unanalysed."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from perflab.analyse.run import with_sections
from perflab.lenses.fragments import verdict_table
from perflab.records.document import Paragraph, Section
from perflab.records.model import Comparison
from perflab.records.published import Site
from perflab.records.results import RunResult
from perflab.store import CodeRun

# a run with more comparisons than this (a history's run) has the lighter page
MANY_COMPARISONS = 40
# the most rows of the table of the other comparisons
LISTED = 200

# a comparison a change point links to a run: (benchmark, commit before, commit after)
Focus = frozenset[tuple[str, str, str]]


def focus_of(site: Site) -> dict[int, Focus]:
    """Per run, the comparisons of the change points whose direct comparison it holds."""
    found: dict[int, set[tuple[str, str, str]]] = {}
    for trend in site.trends:
        for change in trend.history.changes:
            if change.run_id is not None:
                pair = (trend.benchmark, change.before.commit, change.after.commit)
                found.setdefault(change.run_id, set()).add(pair)
    return {run_id: frozenset(pairs) for run_id, pairs in found.items()}


def commits_of(run: CodeRun) -> dict[str, str]:
    """Variant name -> the commit it measured as committed (no changes applied)."""
    return {
        name: str(provenance["commit"])
        for name, provenance in run.provenance.items()
        if not provenance.get("changes") and provenance.get("commit")
    }


def _linked(comparison: Comparison, focus: Focus, commits: Mapping[str, str]) -> bool:
    pair = (commits.get(comparison.baseline, ""), commits.get(comparison.variant, ""))
    return (comparison.benchmark, *pair) in focus


def drawn_benchmarks(
    figures: Sequence[Comparison], focus: Focus, commits: Mapping[str, str]
) -> frozenset[str] | None:
    """The benchmarks a run's page draws in full, which are all its page analyses whole: every
    one (None) when the run has few comparisons, else those of the comparisons of `focus`."""
    if len(figures) <= MANY_COMPARISONS:
        return None
    return frozenset(c.benchmark for c in figures if _linked(c, focus, commits))


def run_page_result(
    analysed: RunResult,
    figures: Sequence[Comparison],
    focus: Focus,
    commits: Mapping[str, str],
) -> RunResult:
    """The run as its page shows it: `analysed` (the run analysed whole, of the benchmarks
    `drawn_benchmarks` names) whole when the run has few comparisons; else the comparisons of
    `focus` in full (every lens's sections built from them alone) and a table of every
    comparison's `figures`, the largest ratios first, that says what the page left out."""
    if drawn_benchmarks(figures, focus, commits) is None:
        return analysed
    shown = tuple(c for c in analysed.comparisons if _linked(c, focus, commits))
    light = with_sections(replace(analysed, comparisons=shown, sections=(), summaries=()))
    drawn = sorted({c.benchmark for c in shown})
    return replace(light, sections=(*light.sections, _others(analysed.run_id, figures, drawn)))


def _others(run_id: int, figures: Sequence[Comparison], drawn: Sequence[str]) -> Section:
    """Every comparison of the run as a row, the largest moves first, at most LISTED; and
    what the page analysed of the run (its notes are of the benchmarks drawn in full)."""
    ordered = sorted(figures, key=_move, reverse=True)
    caption = (
        f"all {len(ordered)} comparisons of the run, the largest ratios first"
        if len(ordered) <= LISTED
        else f"the {LISTED} largest ratios of the run's {len(ordered)} comparisons (perflab "
        f"show {run_id} --html draws every one)"
    )
    benchmarks = len({c.benchmark for c in figures})
    scope = (
        f"This page analysed in full {len(drawn)} of the run's {benchmarks} benchmarks, those "
        f"of its change points ({', '.join(drawn)}): its notes, measurements and explanations "
        f"are of those alone; the other rows are figures only. `perflab show {run_id}` "
        "analyses every benchmark."
        if drawn
        else f"No change point links this run: this page lists its {benchmarks} benchmarks' "
        "figures only (no notes, measurements or explanations were derived for it). "
        f"`perflab show {run_id}` analyses every benchmark."
    )
    table = verdict_table(ordered[:LISTED], cross_run=False)
    return Section(
        f"every comparison ({len(ordered)})",
        (replace(table, caption=caption), Paragraph(scope)),
        key="every-comparison",
    )


def _move(comparison: Comparison) -> float:
    return abs(math.log(comparison.ratio)) if comparison.ratio > 0 else 0.0
