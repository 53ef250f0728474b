"""`perf record` around a variant's measured region, shared by the profile and asm lenses. It holds
the recording itself, the runs that record each benchmark once, and the readings each lens takes.
perf's command lines, probe and reading back are tool_drivers/perf.py; what perf costs, which the
lenses' cost models price too, is budget/perf_costs.py."""
