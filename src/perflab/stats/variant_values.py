"""The per-variant values of a paired comparison, from the very samples its ratio uses.

A table that prints each variant's time next to their ratio must have the three agree: the
ratio is computed from the pairs the decision keeps (preempted time taken out, or preempted
pairs dropped) as the mean over groups of each group's median log ratio, so each variant's
value is the same estimator over the same samples: the mean over groups (generations, batches;
or units such as server rounds) of each group's median log time per iteration. Raw medians
next to a corrected ratio disagree under load (docs/statistics.md, "The table's columns").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from perflab.records.model import Sample
from perflab.stats.paired import PairedLogRatio, unit_means
from perflab.stats.summary import relative_spread
from perflab.stats.trimmed import TRIM_SHARE, trimmed_centre, trimmed_count

# what the JSON's `value_estimator` says the per-variant values (and the ratio) are
VALUE_ESTIMATOR = "mean of group medians"
TRIMMED_VALUE_ESTIMATOR = f"{TRIM_SHARE:.0%}-trimmed mean of group medians"


def estimator_name(n_units: int, *, trimmed: bool) -> str:
    """The words for the estimator over `n_units` units: trimming applies only where
    `stats.trimmed` trims (enough units), as the ratio's interval does."""
    if trimmed and trimmed_count(n_units) is not None:
        return TRIMMED_VALUE_ESTIMATOR
    return VALUE_ESTIMATOR


@dataclass(frozen=True)
class VariantCentres:
    """Each side's value per iteration, and what the values are (estimator_name)."""

    baseline: float
    variant: float
    estimator: str = VALUE_ESTIMATOR


@dataclass(frozen=True)
class VariantValues:
    """Each side's value per iteration and its spread (relative MAD of its samples)."""

    baseline: float
    variant: float
    baseline_spread: float
    variant_spread: float
    estimator: str = VALUE_ESTIMATOR  # what baseline and variant are (estimator_name)

    @classmethod
    def of(cls, centres: VariantCentres, spreads: tuple[float, float]) -> VariantValues:
        """`spreads`: the baseline's, the variant's."""
        return cls(centres.baseline, centres.variant, *spreads, centres.estimator)


def _centre(
    kept: Sequence[tuple[int, Sample, Sample]],
    index: int,
    units: Mapping[int, int] | None,
    trimmed: bool,
) -> tuple[float, int]:
    """(value, units) of one side."""
    values = [(group, pair[index].per_iteration) for group, *pair in kept]
    if not values:
        return math.nan, 0
    logs = [PairedLogRatio(group, 0, math.log(v)) for group, v in values]
    means = list(unit_means(logs, units).values())
    centre = trimmed_centre(means) if trimmed else float(np.mean(means))
    return math.exp(centre), len(means)


def paired_centres(
    kept: Sequence[tuple[int, Sample, Sample]],
    units: Mapping[int, int] | None = None,
    *,
    trimmed: bool = False,
) -> VariantCentres:
    """From `stats.paired.kept_pairs`: (group, variant sample, baseline sample) as the decision
    uses them; `units` as for `estimate_ratio`; `trimmed` where the ratio is a trimmed mean
    (`stats.trimmed.trimmed_ratio`, commands)."""
    variant, n_units = _centre(kept, 0, units, trimmed)
    baseline, _ = _centre(kept, 1, units, trimmed)
    return VariantCentres(baseline, variant, estimator_name(n_units, trimmed=trimmed))


def paired_spreads(kept: Sequence[tuple[int, Sample, Sample]]) -> tuple[float, float]:
    """The baseline's and the variant's relative spread over the samples the decision uses."""
    return (
        relative_spread([pair[1].per_iteration for _, *pair in kept]) if kept else math.nan,
        relative_spread([pair[0].per_iteration for _, *pair in kept]) if kept else math.nan,
    )
