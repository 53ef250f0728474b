"""The import path docs/python-api.md gave for bisect's `direction=` before the search moved to
perflab.bisection, kept so that code importing `Direction` from here still runs; it lives in
perflab.records.bisect."""

from perflab.records.bisect import Direction

__all__ = ["Direction"]
