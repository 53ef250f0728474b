"""`perf record` around a variant's measured region, shared by the profile and asm lenses: the
recording itself, the runs that record each benchmark once, the readings each lens takes, and
what perf costs (costs.py, which the counters lens's cost model prices too)."""
