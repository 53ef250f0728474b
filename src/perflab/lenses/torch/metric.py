"""The torch lens's name, spelled once: its descriptor and modules import it from here."""

from perflab.records.kinds import Metric

TORCH = Metric("torch")
