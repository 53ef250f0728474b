"""perflab: an A/B lab for performance changes."""

__version__ = "0.1.0"
