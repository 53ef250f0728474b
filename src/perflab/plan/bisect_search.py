"""An old import path: `Direction` from this module, which docs/python-api.md gave
until 2026-11-27, resolves through `perflab.compat` until perflab 2.0 (the name lives in
`perflab.records.bisect`)."""

from __future__ import annotations

from perflab.compat import moved


def __getattr__(name: str) -> object:
    return moved(__name__, name)  # an old import path (perflab.compat)
