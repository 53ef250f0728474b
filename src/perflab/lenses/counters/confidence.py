"""The level the counters lens decides each event at, shared by its analysis (analyse.py) and its
early stop for `--precision` (samples.py), so the stop waits for the interval the analysis will
read. Pure: no processes."""

from __future__ import annotations

from perflab.stats.family import family_confidence


def event_confidence(confidence: float, n_events: int, n_comparisons: int = 1) -> float:
    """The level each event's interval is computed at so that a run's events of all its
    comparisons (benchmarks x variant pairs), decided together, hold `confidence` (Bonferroni,
    stats.family): decided each at the run's level, every noisy event of an A/A would have its
    own chance of a false claim (docs/lenses/counters.md has the A/A runs)."""
    return family_confidence(confidence, max(n_events, 1) * max(n_comparisons, 1))
