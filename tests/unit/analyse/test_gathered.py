"""The lenses' answers gathered (analyse.gathered): notes in order, a variant's first
measurement kept, comparisons left to the caller."""

from __future__ import annotations

from perflab.analyse.gathered import GatheredAnalyses
from perflab.measure.lens import LensAnalysis
from perflab.records.kinds import Metric
from perflab.records.model import Measurement, Note, Severity


def _measurement(value: float) -> Measurement:
    return Measurement(
        benchmark="b",
        metric=Metric.TIME,
        variant="v",
        value=value,
        ci_low=value,
        ci_high=value,
        unit="s",
        n_groups=3,
        group_name="generation",
        mean=value,
        stddev=0.0,
        median=value,
        min=value,
        max=value,
    )


def test_notes_gather_in_order_and_a_variants_first_measurement_is_kept() -> None:
    found = GatheredAnalyses(notes=[Note(severity=Severity.INFO, message="run")])
    found.add(LensAnalysis(notes=(Note(Severity.INFO, "first"),), measurements=(_measurement(1),)))
    found.add(LensAnalysis(notes=(Note(Severity.INFO, "second"),), measurements=(_measurement(2),)))
    assert [n.message for n in found.notes] == ["run", "first", "second"]
    assert [m.value for m in found.measurements.values()] == [1]
    assert found.comparisons == [] and found.findings == []
