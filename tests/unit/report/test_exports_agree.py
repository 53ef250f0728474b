"""Every export of one captured run gives the same quantity the same name: hyperfine's fields
are the runs as measured, perflab's estimate and its interval are the `perflab_*` fields (and
the JSON's `value`), and the table's columns are that estimate, by the ratio's estimator.

The capture: `perflab --runs 20 --warmup 3 --json F --samples 'gzip -1 -c data.txt'
'gzip -3 -c data.txt'` on a machine whose other processes took ~48% of the measuring CPU,
so perflab's estimate (preempted time taken out) lies below the smallest raw run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.lenses.time.render import caption
from perflab.records.kinds import Metric
from perflab.records.model import Artifact
from perflab.records.results import RunResult
from perflab.report.exports import hyperfine_results, render_csv
from perflab.report.json_report import FORMAT_VERSION, run_to_json
from perflab.store.json_runs import READABLE_FORMAT_VERSION, load_document
from tests.support.exports_agreement import check_exports_agree

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"


@pytest.fixture(scope="module")
def result() -> RunResult:
    return analyse_run(load_document(CAPTURE))


def _raw_seconds(variant: str) -> list[float]:
    document = json.loads(CAPTURE.read_text())
    return [
        s["value"] / s["loops"] / 1e9
        for s in document["samples"]
        if s["variant"] == variant and s["name"] == "wall_ns" and not s["warmup"]
    ]


def test_every_export_gives_raw_fields_as_measured_and_names_the_estimate(
    result: RunResult,
) -> None:
    hyperfine = hyperfine_results(result)
    raw = {entry["variant"]: _raw_seconds(entry["variant"]) for entry in hyperfine}
    check_exports_agree(hyperfine, render_csv(result), run_to_json(result), raw)
    for entry in hyperfine:
        # the capture's point: the time other processes took is out of the estimate only
        assert entry["perflab_estimate"] < entry["min"]
        assert entry["perflab_preempted"] == "correct"
        assert entry["perflab_estimator"] == "20%-trimmed mean of group medians"


def test_the_table_s_columns_and_ratio_are_the_estimate_s_estimator(result: RunResult) -> None:
    (comparison,) = [c for c in result.comparisons if c.metric == Metric.TIME]
    own = {m.variant: m for m in result.measurements}
    # every pair complete and preempted time taken out: the columns are each variant's estimate
    assert comparison.baseline_value == pytest.approx(own[comparison.baseline].value)
    assert comparison.variant_value == pytest.approx(own[comparison.variant].value)
    details = comparison.to_json()
    assert details["value_estimator"] == own[comparison.baseline].estimator
    implied = comparison.variant_value / comparison.baseline_value
    assert comparison.ci_low <= implied <= comparison.ci_high
    text = caption([comparison], 0.95)
    assert "baseline, variant, ratio: one estimator" in text
    assert "20%-trimmed mean of the batches' medians" in text


def test_the_document_reader_reads_the_format_the_writer_writes() -> None:
    assert READABLE_FORMAT_VERSION == FORMAT_VERSION


def test_a_document_written_with_samples_is_analysed_as_its_run(
    result: RunResult, tmp_path: Path
) -> None:
    """`compare` reads a file as a stored run: the document perflab writes with --samples
    (samples and the small artifacts) gives the same figures again."""
    stored = replace(result, artifacts=(Artifact("b", "cmd1", Metric.TIME, "k", "{}"),))
    path = tmp_path / "again.json"
    path.write_text(json.dumps(run_to_json(stored, samples=True)))
    again = analyse_run(load_document(path))
    assert again.comparisons == result.comparisons
    assert again.measurements == result.measurements
    assert load_document(path).artifacts == stored.artifacts
