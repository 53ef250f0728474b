"""The instructions lens's name, spelled once: its descriptor and modules import it from here."""

from perflab.records.kinds import Metric

INSTRUCTIONS = Metric("instructions")
