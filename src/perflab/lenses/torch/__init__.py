"""The torch lens."""
