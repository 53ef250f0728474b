"""The track lens's name, spelled once: its package and its cost model both import it from here, so
neither has to import the other first."""

from perflab.records.kinds import Metric

TRACK = Metric("track")
