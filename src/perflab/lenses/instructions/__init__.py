"""The instructions lens."""
