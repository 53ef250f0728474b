"""What lenses share to measure: the Lens protocol and sinks, the sampling loop, the statement
worker's parent side and fork servers, the command launcher, and the measurements two lenses
share (callgrind/, perf/, peak_memory/); perf's control channel is tool_drivers/perf_control.py."""
