"""The records of `perflab publish`: every benchmark's history through each lens, read from the
store, that `perflab.publish` builds and the site's renderer (`perflab.report.site`) formats."""

from __future__ import annotations

from dataclasses import dataclass

from perflab.records.kinds import Metric
from perflab.records.workflow_results import HistoryChange, HistoryResult


@dataclass(frozen=True)
class Trend:
    """One benchmark through one lens: its stored commits as a history, with the change points
    the history's analysis finds in them. `key` names its page (unique in a site, safe as a
    file name whatever the benchmark is called)."""

    benchmark: str
    history: HistoryResult
    key: str
    machines: tuple[str, ...] = ()  # the machines its points were measured on

    @property
    def metric(self) -> Metric:
        return self.history.metric


@dataclass(frozen=True)
class SiteChange:
    """A change point as the front page lists it: the change and the trend it is in."""

    trend: Trend
    change: HistoryChange


@dataclass(frozen=True)
class Site:
    """What a published site shows: every trend, and the confirmed change points across them,
    newest first (by the run of the commit where the level moved)."""

    trends: tuple[Trend, ...]
    recent: tuple[SiteChange, ...]
    unconfirmed: int  # change points no stored direct comparison confirms (on their pages)
    threshold: float

    @property
    def run_ids(self) -> tuple[int, ...]:
        """Every run a page links: the runs of the points and of the direct comparisons."""
        found: set[int] = set()
        for trend in self.trends:
            found |= {p.run_id for p in trend.history.points if p.run_id is not None}
            found |= {c.run_id for c in trend.history.changes if c.run_id is not None}
        return tuple(sorted(found))


@dataclass(frozen=True)
class Published:
    """What a publish did: the pages written (new or changed), those left as they were, the
    pages of an earlier publish it removed (of runs and trends the store no longer has), how
    many runs' figures it analysed (the others' were kept in the folder), and how many runs
    it analysed whole for their pages."""

    folder: str
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    site: Site
    removed: tuple[str, ...] = ()
    analysed: int = 0
    # the runs analysed whole for a page rendered now (of the benchmarks it draws in full)
    pages_analysed: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "folder": self.folder,
            "written": list(self.written),
            "unchanged": list(self.unchanged),
            "trends": len(self.site.trends),
            "runs": len(self.site.run_ids),
            "removed": list(self.removed),
            "analysed": self.analysed,
            "pages_analysed": self.pages_analysed,
        }
