"""The counters lens."""
