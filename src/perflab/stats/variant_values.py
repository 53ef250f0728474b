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

# what the JSON's `value_estimator` says the per-variant values are
VALUE_ESTIMATOR = "mean of group medians"


@dataclass(frozen=True)
class VariantValues:
    """Each side's value per iteration and its spread (relative MAD of its samples)."""

    baseline: float
    variant: float
    baseline_spread: float
    variant_spread: float


def _side(
    kept: Sequence[tuple[int, Sample, Sample]], index: int, units: Mapping[int, int] | None
) -> tuple[float, float]:
    values = [(group, pair[index].per_iteration) for group, *pair in kept]
    if not values:
        return math.nan, math.nan
    logs = [PairedLogRatio(group, 0, math.log(v)) for group, v in values]
    centre = float(np.mean(list(unit_means(logs, units).values())))
    return math.exp(centre), relative_spread([v for _, v in values])


def paired_values(
    kept: Sequence[tuple[int, Sample, Sample]], units: Mapping[int, int] | None = None
) -> VariantValues:
    """From `stats.paired.kept_pairs`: (group, variant sample, baseline sample) as the decision
    uses them; `units` as for `estimate_ratio`."""
    variant, variant_spread = _side(kept, 0, units)
    baseline, baseline_spread = _side(kept, 1, units)
    return VariantValues(baseline, variant, baseline_spread, variant_spread)
