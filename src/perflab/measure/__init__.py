"""What lenses share to measure: the Lens protocol and sinks, the sampling loop, the statement
worker's parent side and fork servers, the command launcher, and the measurements two lenses
share (callgrind/, perf/, peak_memory/). The outside tools they run are started through
perflab.tool_drivers (perf.py, valgrind.py); jobs side by side run through machine/parallel.py."""
