"""What the lenses' analyses of one run, or of two runs compared, found: gathered while the
analyses run, then read once into a `RunResult`."""

from __future__ import annotations

from dataclasses import dataclass, field

from perflab.measure.lens import BenchmarkData, LensAnalysis
from perflab.records.kinds import Metric
from perflab.records.lens_findings import LensFindings
from perflab.records.model import Comparison, Measurement, Note


# not frozen: one analysis fills it as each lens answers, and nothing else holds it
@dataclass
class GatheredAnalyses:
    """The lenses' answers gathered: comparisons in the caller's order, their notes and
    findings, each (benchmark, metric)'s data analysed, and each variant's measurement."""

    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    findings: list[LensFindings] = field(default_factory=list)
    data_of: dict[tuple[str, Metric], BenchmarkData] = field(default_factory=dict)
    measurements: dict[tuple[str, Metric, str], Measurement] = field(default_factory=dict)

    def add(self, analysis: LensAnalysis) -> None:
        """An analysis's notes, findings and measurements (the first of a variant's kept); its
        comparisons the caller adds, in its own order."""
        for own in analysis.measurements:
            self.measurements.setdefault((own.benchmark, own.metric, own.variant), own)
        self.notes += analysis.notes
        if analysis.findings is not None:
            self.findings.append(analysis.findings)
