"""The time lens."""
