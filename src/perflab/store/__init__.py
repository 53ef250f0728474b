"""The embedded SQLite store: every sample and artifact, written as it is measured."""

from perflab.store.sqlite import RunSummary, RunWriter, Store, StoredRun

__all__ = ["RunSummary", "RunWriter", "Store", "StoredRun"]
