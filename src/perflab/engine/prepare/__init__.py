"""What the engine does before it measures: the cost probe and its recent results, isolated JIT
caches, git refs built into worktrees, and the check that variants' outputs agree."""
