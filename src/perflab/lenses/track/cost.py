"""The track lens's cost model for the budget's plan."""

from __future__ import annotations

from perflab.budget.costs import ANALYSIS_S, CostProbe, LensCost, analysis_s
from perflab.lenses.track.metric import TRACK
from perflab.records.settings import Settings

# fresh workers per variant, each reading the value once: a value that varies from process to
# process (a hash seed's, an address's) gets an interval over this many
TRACK_GENERATIONS = 4


def generations_of(settings: Settings) -> int:
    """How many generations of workers read the value."""
    return max(TRACK_GENERATIONS, settings.min_generations)


def track_cost(probe: CostProbe, settings: Settings) -> LensCost:
    """The track lens's measurement of one benchmark: a fresh worker per variant and
    generation, whose set-up and one call of the statement (its check) come before the one
    that is read."""
    generations = generations_of(settings)
    per_worker_s = probe.startup_s + 2 * probe.sample_s
    return LensCost(
        TRACK,
        minimum_s=generations * probe.variants * per_worker_s,
        needs=f"{generations} generations of {probe.variants} workers",
        after_s=analysis_s(probe, ANALYSIS_S),
    )
