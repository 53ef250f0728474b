"""A run's page in a published site: the report `perflab show --html` draws, lighter for a run
of many comparisons. A history's run of a hundred commits compares each with the first and with
the one before, every benchmark and lens: its report draws every comparison's samples and
ratios (9 MB for 20 benchmarks). A site shows each commit's value on its trend's page, so a
run's page keeps in full only the comparisons the site's change points link to it (their
figures and explanation), and lists the others' ratios, largest first, in one table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from perflab.analyse.run import with_sections
from perflab.lenses.fragments import verdict_table
from perflab.records.document import Section
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


def run_page_result(result: RunResult, focus: Focus, commits: Mapping[str, str]) -> RunResult:
    """The run as its page shows it: whole when it has few comparisons; else the comparisons
    of `focus` in full (every lens's sections rebuilt from them alone) and a table of the
    others, the largest ratios first."""
    if len(result.comparisons) <= MANY_COMPARISONS:
        return result

    def linked(c: Comparison) -> bool:
        return (c.benchmark, commits.get(c.baseline, ""), commits.get(c.variant, "")) in focus

    shown = tuple(c for c in result.comparisons if linked(c))
    light = with_sections(replace(result, comparisons=shown, sections=(), summaries=()))
    return replace(light, sections=(*light.sections, _others(result)))


def _others(result: RunResult) -> Section:
    """Every comparison of the run as a row, the largest moves first, at most LISTED."""
    ordered = sorted(result.comparisons, key=_move, reverse=True)
    caption = (
        f"all {len(ordered)} comparisons of the run, the largest ratios first"
        if len(ordered) <= LISTED
        else f"the {LISTED} largest ratios of the run's {len(ordered)} comparisons (perflab "
        f"show {result.run_id} --html draws every one)"
    )
    table = verdict_table(ordered[:LISTED], cross_run=False)
    return Section(
        f"every comparison ({len(ordered)})",
        (replace(table, caption=caption),),
        key="every-comparison",
    )


def _move(comparison: Comparison) -> float:
    return abs(math.log(comparison.ratio)) if comparison.ratio > 0 else 0.0
