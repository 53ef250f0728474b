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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from perflab.stats.paired import know_quantiles, new_quantiles
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


@contextmanager
def quantiles_kept(cache: AnalysisCache, identity: str | None = None) -> Iterator[None]:
    """Seed the quantiles stored for this scipy build; store the ones computed meanwhile."""
    identity = identity or scipy_identity()
    if identity is None or not cache.enabled:
        yield
        return
    stored = cache.get(KIND, [identity])
    known: dict[tuple[float, int], float] = {}
    if isinstance(stored, list):
        for entry in stored:
            if isinstance(entry, list) and len(entry) == 3:
                probability, df, value = entry
                if isinstance(value, float) and isinstance(df, int):
                    known[(float(probability), df)] = value
    know_quantiles(known)
    try:
        yield
    finally:
        fresh = {key: value for key, value in new_quantiles().items() if key not in known}
        if fresh:
            merged = {**known, **fresh}
            cache.put(KIND, [identity], [[p, df, v] for (p, df), v in sorted(merged.items())])
