"""Student's t quantiles kept across perflab processes, in the analysis cache.

An analysis whose only use of scipy is `student_t_quantile` (a run without the time lens: the
profile lens's interval) otherwise imports `scipy.special` for it, 0.3 s of CPU. A quantile is a
pure function of (probability, df) and of the scipy build that computes it, so the values are
stored under the SHA-256 of scipy's `version.py` (its release and git revision), read without
importing scipy; another build is another entry.
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from perflab.stats.paired import scipy_t_quantiles, t_quantiles_from
from perflab.store.analysis_cache import AnalysisCache

KIND = "t-quantiles"


def scipy_identity() -> str | None:
    """SHA-256 of the installed scipy's version.py, or None where it cannot be read."""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        try:
            return hashlib.sha256((Path(folder) / "version.py").read_bytes()).hexdigest()
        except OSError:
            continue
    return None


class KeptQuantiles:
    """The t quantiles of one analysis: those an earlier process of the same scipy build
    computed (`known`), then those it computes itself (`computed`, to keep)."""

    def __init__(self, known: Mapping[tuple[float, int], float]) -> None:
        self.known = dict(known)
        self.computed: dict[tuple[float, int], float] = {}

    def __call__(self, probability: float, df: int) -> float:
        key = (probability, df)
        found = self.known.get(key)
        if found is None:
            found = self.computed.get(key)
        if found is None:
            self.computed.update(scipy_t_quantiles(probability, df))
            found = self.computed[key]
        return found


@contextmanager
def quantiles_kept(cache: AnalysisCache, identity: str | None = None) -> Iterator[None]:
    """Seed the quantiles stored for this scipy build; store the ones computed meanwhile."""
    identity = identity or scipy_identity()
    if identity is None or not cache.enabled:
        yield
        return
    kept = KeptQuantiles(_stored(cache, identity))
    try:
        with t_quantiles_from(kept):
            yield
    finally:
        fresh = {key: value for key, value in kept.computed.items() if key not in kept.known}
        if fresh:
            merged = {**kept.known, **fresh}
            cache.put(KIND, [identity], [[p, df, v] for (p, df), v in sorted(merged.items())])


def _stored(cache: AnalysisCache, identity: str) -> dict[tuple[float, int], float]:
    """The quantiles stored for scipy build `identity`; an unreadable entry is left out."""
    stored = cache.get(KIND, [identity])
    known: dict[tuple[float, int], float] = {}
    if isinstance(stored, list):
        for entry in stored:
            if isinstance(entry, list) and len(entry) == 3:
                probability, df, value = entry
                if isinstance(value, float) and isinstance(df, int):
                    known[(float(probability), df)] = value
    return known
