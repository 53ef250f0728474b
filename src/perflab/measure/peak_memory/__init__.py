"""Peak memory per variant, shared by the rss and memory lenses: the sessions that measure it
(statements through a worker op, commands through the launcher's `wait4`); and their
analysis, which both lenses read (analyse.py)."""
