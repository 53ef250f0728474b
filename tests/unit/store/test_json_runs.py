"""A run read back from its JSON document (store/json_runs.py): the captured document's samples,
variants and benchmarks as a stored run, and each document it refuses, with why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from perflab.records.errors import ConfigError
from perflab.records.kinds import RunStatus
from perflab.store.json_runs import READABLE_FORMAT_VERSION, is_document_reference, load_document

CAPTURE = Path(__file__).parents[2] / "golden" / "data" / "runs" / "gzip_preempted.json"


def written(tmp_path: Path, document: Any, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def captured() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(CAPTURE.read_text())
    return document


def test_a_document_is_read_as_the_run_it_describes() -> None:
    document = captured()
    run = load_document(CAPTURE)
    assert run.run_id == document["run_id"] and run.source == CAPTURE.name
    assert run.status is RunStatus(document["status"])
    assert [v.name for v in run.experiment.variants] == [v["name"] for v in document["variants"]]
    assert [b.name for b in run.experiment.benchmarks] == [
        b["name"] for b in document["benchmarks"]
    ]
    assert len(run.samples) == len(document["samples"])
    first = document["samples"][0]
    assert (run.samples[0].value, run.samples[0].loops) == (first["value"], first["loops"])
    assert run.notes == () and run.perflab_version == ""


def test_older_samples_without_accounting_or_artifacts_read_with_defaults(tmp_path: Path) -> None:
    document = captured()
    for sample in document["samples"]:
        for newer in ("run_queue_ns", "cpu_ns", "involuntary_switches", "position"):
            sample.pop(newer, None)
    document.pop("artifacts", None)
    run = load_document(written(tmp_path, document))
    assert all(s.run_queue_ns is None and s.position == 0 for s in run.samples)
    assert run.artifacts == ()


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d.pop("samples"), "has no raw samples"),
        (lambda d: d.update(format_version=READABLE_FORMAT_VERSION + 1), "reads up to 1"),
        (lambda d: d.pop("run_id"), "is not a perflab JSON document"),
        (lambda d: d["samples"][0].pop("value"), "not a readable perflab JSON document: KeyError"),
        (
            lambda d: [s.update(variant="run1:" + s["variant"]) for s in d["samples"]],
            "samples belong to none of its variants",
        ),
    ],
    ids=["no-samples", "newer", "not-perflabs", "damaged", "a-compare-document"],
)
def test_a_document_that_cannot_be_compared_is_refused_with_why(
    tmp_path: Path, change: Any, said: str
) -> None:
    document = captured()
    change(document)
    with pytest.raises(ConfigError, match=said):
        load_document(written(tmp_path, document))


def test_a_missing_file_or_one_that_is_not_a_json_object_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no file"):
        load_document(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="is not JSON"):
        load_document(written(tmp_path, "{not json"))
    with pytest.raises(ConfigError, match="not an object"):
        load_document(written(tmp_path, "[]"))


def test_a_compare_argument_is_a_document_when_it_is_a_file_or_ends_in_json(
    tmp_path: Path,
) -> None:
    assert is_document_reference("missing.json")
    assert is_document_reference(str(written(tmp_path, "{}", name="export")))
    assert not is_document_reference("12") and not is_document_reference("latest")
    assert not is_document_reference(str(tmp_path / "nothing"))
