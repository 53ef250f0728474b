"""Pure analysis of stored measurements: deltas, inlining changes, profile and asm diffs."""
