"""The counters lens's findings: typed records whose JSON is the document's
`unavailable_events`, `derived_metrics` and `avx512`, and which its section reads by attribute."""

from __future__ import annotations

from perflab.lenses.counters.findings import (
    Avx512Use,
    CounterFindings,
    UnavailableEvent,
    VariantMetric,
)
from perflab.lenses.counters.render import section
from perflab.lenses.fragments import SectionInput
from perflab.records.document import Table
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.tool_output.perf_stat import Availability, DerivedMetric

IPC = VariantMetric("B", DerivedMetric("IPC", 1.25, "instructions / cycles"))


def _findings() -> CounterFindings:
    return CounterFindings(
        "b",
        unavailable_events=(UnavailableEvent("cycles", Availability.NOT_SUPPORTED, hint="pmu"),),
        derived_metrics=(IPC,),
        avx512=(Avx512Use("A", True, 60, 60, 6, 6), Avx512Use("B", True, 60, 12, 6, 0)),
    )


def test_the_json_holds_each_row_with_its_benchmark_in_the_documented_order() -> None:
    found = _findings().to_json()
    assert list(found) == ["unavailable_events", "derived_metrics", "avx512"]
    assert found["unavailable_events"] == [
        {"event": "cycles", "reason": "not supported", "hint": "pmu", "benchmark": "b"}
    ]
    assert found["derived_metrics"] == [
        {
            "benchmark": "b",
            "variant": "B",
            "name": "IPC",
            "value": 1.25,
            "formula": "instructions / cycles",
            "unit": "",
        }
    ]
    first, second = found["avx512"]
    assert list(first) == [
        "benchmark",
        "variant",
        "supported",
        "samples",
        "samples_with_avx512",
        "control_samples",
        "control_with_avx512",
        "executed_avx512",
        "attributable",
    ]
    assert (first["executed_avx512"], first["attributable"]) == (True, False)
    assert (second["executed_avx512"], second["attributable"]) == (True, True)


def test_no_avx512_field_where_no_process_reported_it() -> None:
    assert "avx512" not in CounterFindings("b").to_json()


def test_unsupported_arch_status_claims_no_use() -> None:
    unsupported = Avx512Use("A", False, 10, 10, 2, 0)
    assert not unsupported.executed_avx512 and not unsupported.attributable


def test_the_section_shows_each_finding_once_however_many_pairs_gave_it() -> None:
    experiment = Experiment((Benchmark("b", stmt="pass"),), (Variant("A"), Variant("B")))
    other = CounterFindings("elsewhere", derived_metrics=(IPC,))  # not this experiment's
    view = SectionInput(Metric.COUNTERS, (), experiment, findings=(_findings(), _findings(), other))
    tables = [b for b in section(view).blocks if isinstance(b, Table)]
    derived = next(t for t in tables if t.caption == "derived metrics")
    assert [[c.text for c in row] for row in derived.rows] == [
        ["b", "B", "IPC", "1.25", "instructions / cycles"]
    ]
    avx = next(t for t in tables if t.caption.startswith("AVX-512"))
    assert [[c.text for c in row] for row in avx.rows] == [
        ["b", "A", "60 of 60", "6 of 6", "yes"],
        ["b", "B", "12 of 60", "0 of 6", "yes"],
    ]
