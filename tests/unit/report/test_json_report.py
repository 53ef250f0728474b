"""The JSON export (report/json_report.py) of a captured run: the documented fields in order,
no inf or nan, the raw samples and small artifacts only when asked for, every field of a sample
and an artifact."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.records.kinds import Metric
from perflab.records.model import Artifact, Sample
from perflab.records.results import RunResult
from perflab.report.json_report import (
    FORMAT_VERSION,
    SMALL_ARTIFACT_CHARS,
    artifact_to_json,
    render_json,
    run_to_json,
    sample_to_json,
)
from perflab.store.json_runs import load_document

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"
# docs/json-format.md's top-level fields, in the order a document has them
FIELDS = [
    "format_version",
    "run_id",
    "status",
    "created_at",
    "error",
    "machine",
    "variants",
    "benchmarks",
    "settings",
    "differences",
    "comparisons",
    "measurements",
    "notes",
    "summaries",
    "unavailable_events",
]


@pytest.fixture(scope="module")
def result() -> RunResult:
    return analyse_run(load_document(CAPTURE))


def test_the_document_has_the_documented_fields_in_order(result: RunResult) -> None:
    document = run_to_json(result)
    assert list(document) == FIELDS
    assert document["format_version"] == FORMAT_VERSION == 1
    assert [v["baseline"] for v in document["variants"]] == [True, False]
    (benchmark,) = document["benchmarks"]
    assert benchmark["kind"] == "command" and benchmark["stmt"] is None
    assert benchmark["setup"] is None  # a command has no set-up, whatever the default says


def test_unbounded_or_undefined_values_are_null(result: RunResult) -> None:
    comparison = dataclasses.replace(result.comparisons[0], ci_high=math.inf, ratio=math.nan)
    unbounded = dataclasses.replace(result, comparisons=(comparison,))
    (written,) = run_to_json(unbounded)["comparisons"]
    assert written["ci_high"] is None and written["ratio"] is None
    text = render_json(unbounded)
    assert "Infinity" not in text and "NaN" not in text and text.endswith("}\n")
    assert json.loads(text) == run_to_json(unbounded)


def test_samples_and_small_artifacts_only_when_asked_for(result: RunResult) -> None:
    small = Artifact("b", "A", Metric.TIME, "time-command-units", '{"blocks_per_unit": 2}')
    large = Artifact("b", "A", Metric.TIME, "profile", "x" * (SMALL_ARTIFACT_CHARS + 1))
    stored = dataclasses.replace(result, artifacts=(small, large))
    assert "samples" not in run_to_json(stored) and "artifacts" not in run_to_json(stored)
    document = run_to_json(stored, samples=True)
    assert document["samples"] == [sample_to_json(s) for s in result.samples]
    assert len(document["samples"]) == len(result.samples) > 0
    assert document["artifacts"] == [artifact_to_json(small)]


def test_a_sample_and_an_artifact_keep_every_field() -> None:
    sample = Sample("b", "A", Metric.TIME, "wall_ns", 5.0, run_queue_ns=3, cpu_ns=2)
    written = sample_to_json(sample)
    assert set(written) == {f.name for f in dataclasses.fields(Sample)}
    assert written["metric"] == "time" and written["run_queue_ns"] == 3
    artifact = Artifact("b", "A", Metric.TIME, "kind", "content", generation=4)
    assert set(artifact_to_json(artifact)) == {f.name for f in dataclasses.fields(Artifact)}


def test_no_stack_or_interactions_unless_the_experiment_has_them(result: RunResult) -> None:
    document = run_to_json(result)
    assert "stack" not in document and "interactions" not in document
