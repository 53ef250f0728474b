"""What the suites (pytest-benchmark, asv) share to list their benchmarks: which variants can
list them, and the environment that puts perflab's helpers on the listing's path."""

from __future__ import annotations

import os
from collections.abc import Sequence

from perflab.records.model import VARIANT_FIELDS, Variant
from perflab.worker import STATEMENT_WORKER_PATH


def listing_variants(variants: Sequence[Variant]) -> list[Variant]:
    """The variants that need no checkout or build (the others have no interpreter yet); a
    stand-in run where perflab runs when there is none, in the first variant's environment
    (its env.PYTHONPATH=. imports a pure-Python checkout's package, here from the working
    tree)."""
    return _ready(variants) or [Variant("here", env=dict(variants[0].env) if variants else {})]


def lists_here(variants: Sequence[Variant]) -> bool:
    """Whether the suite is listed by a stand-in where perflab runs: every variant is checked
    out or built first, so none has its own interpreter before the builds."""
    return not _ready(variants)


def _ready(variants: Sequence[Variant]) -> list[Variant]:
    return [
        v for v in variants if not any(getattr(v, f.name) for f in VARIANT_FIELDS if f.prepares)
    ]


def helpers_env(variant: Variant) -> dict[str, str]:
    """perflab's environment with the variant's, the worker's folder (where the suites'
    helpers live) first on PYTHONPATH, ahead of the variant's own path."""
    env = dict(os.environ)
    env.update(variant.env)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(STATEMENT_WORKER_PATH.parent), env.get("PYTHONPATH")) if p
    )
    return env


def distinct_listings(variants: Sequence[Variant], default_python: str) -> list[Variant]:
    """The listing variants, one for each interpreter, cwd and environment: two variants
    that share them list the same suite (an A/A run would list it twice)."""
    chosen: dict[tuple[str, str | None, tuple[tuple[str, str], ...]], Variant] = {}
    for variant in listing_variants(variants):
        key = (variant.python or default_python, variant.cwd, tuple(sorted(variant.env.items())))
        chosen.setdefault(key, variant)
    return list(chosen.values())
