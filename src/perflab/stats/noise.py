"""Noise diagnostics: drift, outliers, bimodality, CPU migration, per-process effects.

Each check is a pure function of one variant's samples (per-iteration values in time order) and
returns a finding or None. They report; they never change the estimate.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DRIFT_THRESHOLD = 0.05  # relative change of the typical sample over the run
# a sample this many (normal-scaled) MADs of the log times from the median is an outlier:
# normal noise lands there less than once in a million samples, an interrupt or a time slice does
OUTLIER_MADS = 5.0
# outliers are said from this share: far above chance (above), yet well inside the 20% a side
# the trimmed estimate discards (stats/trimmed.py), so the note explains a spread, not a bias
OUTLIER_FRACTION_THRESHOLD = 0.02
BIMODALITY_COEFFICIENT_THRESHOLD = 0.555  # the value for a uniform distribution
# two modes matter only this far apart (10-90% spread of the log times): a tight distribution
# can score as "bimodal" on its coefficient alone
BIMODAL_MIN_SPREAD = 0.05
# the shape checks (outliers, two modes) wait for this many samples: fewer make a distribution's
# skewness and kurtosis, and so Sarle's coefficient, too unsteady to read
MIN_SAMPLES_FOR_SHAPE = 20
# the between-generation SD of the ratio said as a per-process effect: at 3% pairs treated as
# independent would cover the truth less than 60% of the time (docs/statistics.md), so it is the
# size at which more generations, not longer ones, are what narrows the interval
PER_PROCESS_EFFECT_THRESHOLD = 0.03


class NoiseKind(enum.StrEnum):
    """The kinds of noise a variant's samples can show."""

    DRIFT = "drift"
    OUTLIERS = "outliers"
    BIMODAL = "bimodal"
    MIGRATION = "migration"
    PER_PROCESS = "per-process"


@dataclass(frozen=True)
class NoiseFinding:
    """A sign of noise in one variant's samples (drift, outliers ...), said with a hint."""

    kind: NoiseKind
    message: str
    hint: str | None = None


def relative_drift(times_ns: Sequence[float], per_iteration: Sequence[float]) -> float:
    """Fitted relative change of per-iteration time from the first to the last sample
    (log-linear least squares, so one spike does not dominate)."""
    if len(per_iteration) < 3 or max(times_ns) == min(times_ns):
        return 0.0
    x = np.asarray(times_ns, dtype=float)
    y = np.log(np.asarray(per_iteration, dtype=float))
    slope = float(np.polyfit(x, y, 1)[0])
    return math.expm1(slope * (x.max() - x.min()))


def drift_finding(times_ns: Sequence[float], per_iteration: Sequence[float]) -> NoiseFinding | None:
    """A finding when the time per iteration drifted over the run; None when it did not."""
    drift = relative_drift(times_ns, per_iteration)
    if abs(drift) < DRIFT_THRESHOLD:
        return None
    direction = "slower" if drift > 0 else "faster"
    return NoiseFinding(
        NoiseKind.DRIFT,
        f"samples became {abs(drift):.0%} {direction} over the run",
        hint="the machine's speed changed while measuring (thermal, frequency, other load); "
        "interleaving cancels drift in the ratio, but check for background jobs",
    )


def outlier_fraction(per_iteration: Sequence[float]) -> float:
    logs = np.log(np.asarray(per_iteration, dtype=float))
    median = float(np.median(logs))
    mad = float(np.median(np.abs(logs - median))) * 1.4826
    if mad == 0:
        return 0.0
    return float(np.mean(np.abs(logs - median) > OUTLIER_MADS * mad))


def outlier_finding(per_iteration: Sequence[float]) -> NoiseFinding | None:
    """A finding when too many samples lie far from the median; None when few do."""
    if len(per_iteration) < MIN_SAMPLES_FOR_SHAPE:
        return None
    fraction = outlier_fraction(per_iteration)
    if fraction < OUTLIER_FRACTION_THRESHOLD:
        return None
    return NoiseFinding(
        NoiseKind.OUTLIERS,
        f"{fraction:.1%} of samples are outliers (more than {OUTLIER_MADS:g} MADs from the median)",
        hint="interrupts or other processes on the measuring CPU; the estimate trims them",
    )


def bimodality_coefficient(values: Sequence[float]) -> float:
    """Sarle's bimodality coefficient: above ~0.555 suggests two modes."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 4 or float(np.std(x)) == 0:
        return 0.0
    centred = x - x.mean()
    m2 = float(np.mean(centred**2))
    skew = float(np.mean(centred**3)) / m2**1.5
    excess_kurtosis = float(np.mean(centred**4)) / m2**2 - 3
    return float((skew**2 + 1) / (excess_kurtosis + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


def bimodality_finding(per_iteration: Sequence[float]) -> NoiseFinding | None:
    """A finding when the sample times look bimodal; None when they do not."""
    if len(per_iteration) < MIN_SAMPLES_FOR_SHAPE:
        return None
    logs = np.log(np.asarray(per_iteration, dtype=float))
    spread = float(np.percentile(logs, 90) - np.percentile(logs, 10))
    coefficient = bimodality_coefficient(logs)
    if coefficient <= BIMODALITY_COEFFICIENT_THRESHOLD or spread < BIMODAL_MIN_SPREAD:
        return None
    return NoiseFinding(
        NoiseKind.BIMODAL,
        f"sample times look bimodal (coefficient {coefficient:.2f}, 10-90% spread {spread:.0%})",
        hint="the machine switches between speeds (frequency, co-tenants) or the code has two "
        "paths; paired samples keep the ratio fair, but the per-variant times are a mix",
    )


def migration_finding(cpus: Sequence[int | None], pinned_cpu: int | None) -> NoiseFinding | None:
    """A finding when samples ran on CPUs other than the pinned one, or on several unpinned; None
    otherwise."""
    seen = {cpu for cpu in cpus if cpu is not None}
    if not seen:
        return None
    if pinned_cpu is not None and seen != {pinned_cpu}:
        return NoiseFinding(
            NoiseKind.MIGRATION,
            f"samples ran on CPUs {sorted(seen)} although pinned to CPU {pinned_cpu}",
            hint="something overrides the affinity (cgroup cpuset?); check `taskset -p` of the "
            "workers",
        )
    if pinned_cpu is None and len(seen) > 1:
        return NoiseFinding(
            NoiseKind.MIGRATION,
            f"samples ran on {len(seen)} different CPUs {sorted(seen)}",
            hint="pin the measurement (the default) so all variants share one core",
        )
    return None


def per_process_finding(between_group_sd: float, n_groups: int) -> NoiseFinding | None:
    """A finding when the ratio's SD between worker generations passes PER_PROCESS_EFFECT_THRESHOLD
    (per-process effects dominate); None otherwise."""
    if n_groups < 3 or math.isnan(between_group_sd):
        return None
    if between_group_sd < PER_PROCESS_EFFECT_THRESHOLD:
        return None
    return NoiseFinding(
        NoiseKind.PER_PROCESS,
        f"the ratio varies by {between_group_sd:.1%} (SD) between worker generations",
        hint="per-process effects (memory layout, hash seeds) dominate; the CI accounts for "
        "them, more generations (a larger --budget) narrow it",
    )
