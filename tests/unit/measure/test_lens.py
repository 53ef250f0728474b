"""What a lens measures with (measure/lens.py): the in-memory sink keeps every write and reads
one benchmark and lens back, a variant's facts accumulate, and a lens's budget is its share or
the whole."""

from __future__ import annotations

from perflab.api import make_experiment
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Note, Sample, Severity
from perflab.records.run_facts import VariantInfo


def test_the_memory_sink_reads_back_one_benchmark_and_lens() -> None:
    sink = MemorySink()
    mine = Sample("b", "A", Metric.TIME, "wall_ns", 1.0)
    sink.add_sample(mine)
    sink.add_sample(Sample("b", "A", Metric.COUNTERS, "cycles", 2.0))
    sink.add_sample(Sample("other", "A", Metric.TIME, "wall_ns", 3.0))
    artifact = Artifact("b", "A", Metric.TIME, "time-shared-cpu", "{}")
    sink.add_artifact(artifact)
    sink.add_note(Note(Severity.INFO, "said"))
    data = sink.data_for("b", Metric.TIME)
    assert data.samples == (mine,) and data.artifacts == (artifact,)
    assert [n.message for n in sink.notes] == ["said"]


def test_a_variants_facts_accumulate_nested_tables_merged() -> None:
    sink = MemorySink()
    sink.add_variant_info(
        "A", VariantInfo.from_json({"python_version": "3.12", "time": {"b": {"loops": 10}}})
    )
    sink.add_variant_info("A", VariantInfo.from_json({"time": {"c": {"loops": 20}}}))
    assert sink.variant_info == {
        "A": {"python_version": "3.12", "time": {"b": {"loops": 10}, "c": {"loops": 20}}}
    }


def test_a_lens_budget_is_its_share_or_the_benchmarks_whole() -> None:
    experiment = make_experiment(stmt="pass", variants=["A", "B"], budget_s=30)
    whole = LensContext(experiment, FakeRunner(), MemorySink(), NullProgress(), None, "python3")
    assert whole.lens_budget_s == 30
    share = LensContext(
        experiment, FakeRunner(), MemorySink(), NullProgress(), 3, "python3", budget_s=7.5
    )
    assert share.lens_budget_s == 7.5
    NullProgress().update(benchmark="b", metric=Metric.TIME, detail="nothing shown")
