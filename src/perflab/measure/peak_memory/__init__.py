"""Peak memory per variant, shared by the rss and memory lenses: the sessions that measure it
(statements through a worker op, commands through the launcher's `wait4`); its analysis,
which both lenses read, is perflab.tool_output.peak_memory."""
