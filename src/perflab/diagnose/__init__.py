"""`perflab doctor` and `perflab events`: what this machine can measure and count, read through
the lenses' own probes; above the engine, below the API."""
