"""What lenses share to measure: the Lens protocol and sinks, the statement worker's parent side,
the command launcher, perf's control channel and worker generations."""
