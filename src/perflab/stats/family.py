"""Several comparisons decided together: the level each interval is computed at so that the
chance of *any* false claim among them stays at the run's confidence (docs/statistics.md,
"Many comparisons at once").

Every verdict is read off an interval (`faster`/`slower`: it excludes 1; `equivalent`: it lies
inside the band), so intervals that hold *together* with probability `confidence` make every
claim of the family true together with that probability, whatever kind each claim is. Each of
`n` intervals at 1 - (1 - confidence)/n gives that (Bonferroni), whatever the dependence between
them. Decided each at 95%, a 4-step stack's 5 comparisons of identical code give some false
claim in up to 23% of runs.
"""

from __future__ import annotations

from dataclasses import replace

from perflab.records.model import Experiment
from perflab.records.settings import Settings


def family_confidence(confidence: float, n: int) -> float:
    """The level each of `n` intervals is computed at so that together they hold `confidence`."""
    return 1 - (1 - confidence) / max(n, 1)


def family_size(benchmarks: int, comparisons: int, interactions: int = 0) -> int:
    """The comparisons one lens decides in a run: every benchmark's variant pairs (stack steps
    and the whole range, matrix cells, every variant against its baseline) and interactions."""
    return max(1, benchmarks * (comparisons + interactions))


def run_family_size(experiment: Experiment) -> int:
    """The comparisons one lens decides in this run (`family_size` of its plan)."""
    return family_size(
        len(experiment.benchmarks),
        len(experiment.comparison_pairs),
        len(experiment.interactions),
    )


def family_settings(experiment: Experiment) -> Settings:
    """The run's settings with `confidence` at the level each of its comparisons is decided at,
    for lenses that read the level from the settings."""
    settings = experiment.settings
    level = family_confidence(settings.confidence, run_family_size(experiment))
    return replace(settings, confidence=level)
