"""The profile lens."""
