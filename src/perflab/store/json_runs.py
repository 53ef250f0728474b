"""A run read back from its JSON document (`--json FILE --samples`), so that `perflab compare`
takes a file where it takes a run id: the document's raw samples are the truth, analysed as a
stored run's are (docs/json-format.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, RunStatus
from perflab.records.model import (
    VARIANT_FIELDS,
    Artifact,
    Benchmark,
    Experiment,
    Sample,
    Variant,
    VariantFieldKind,
)
from perflab.records.run_facts import MachineInfo
from perflab.records.settings import Settings
from perflab.store.runs import StoredRun

# the newest `format_version` this perflab reads (report.json_report.FORMAT_VERSION; the store
# knows no renderer, so the number is restated and a test keeps the two equal)
READABLE_FORMAT_VERSION = 1

_EXPORT_HINT = (
    "export a run with its raw samples: `perflab show RUN --json FILE --samples` "
    "(or `--samples` on the run that writes --json)"
)


def is_document_reference(text: str) -> bool:
    """Whether a `compare` argument names a JSON file rather than a stored run: a path that
    exists, or one that ends in `.json` (so a missing file says so instead of 'no run')."""
    return text.endswith(".json") or (
        not text.isdigit() and text != "latest" and Path(text).is_file()
    )


def load_document(path: Path) -> StoredRun:
    """The run a `--json` document describes, with its raw samples; a ConfigError for a file
    that is missing, not JSON, not perflab's, of a newer format, or without samples."""
    document = _read(path)
    version = document.get("format_version")
    if not isinstance(version, int) or "run_id" not in document or "benchmarks" not in document:
        raise ConfigError(
            f"{path} is not a perflab JSON document (no format_version, run_id and benchmarks)",
            hint="give a file written by `perflab run/show --json FILE --samples`, or a run id",
        )
    if version > READABLE_FORMAT_VERSION:
        raise ConfigError(
            f"{path} has format_version {version}; this perflab reads up to "
            f"{READABLE_FORMAT_VERSION}",
            hint="compare it with the perflab that wrote it, or a newer one",
        )
    samples = document.get("samples")
    if not isinstance(samples, list):
        raise ConfigError(
            f"{path} has no raw samples: its figures alone cannot be compared with the same "
            "statistics as a stored run",
            hint=_EXPORT_HINT,
        )
    try:
        run = _stored_run(path, document, samples)
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(
            f"{path} is not a readable perflab JSON document: {type(error).__name__} {error}",
            hint="give a file written by `perflab run/show --json FILE --samples`",
        ) from error
    names = {v.name for v in run.experiment.variants}
    if run.samples and not any(s.variant in names for s in run.samples):
        # a `compare` document's samples are relabelled (`run1:A`): they are not its variants'
        raise ConfigError(
            f"{path}'s samples belong to none of its variants (a `perflab compare` document?)",
            hint="compare the files or runs it was made from",
        )
    return run


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"no file {path}", hint="give a run id (perflab list) or an existing --json file"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path} cannot be read: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{path} is not JSON ({error.msg}, line {error.lineno})",
            hint="give a file written by `perflab run/show --json FILE --samples`",
        ) from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path} is not a perflab JSON document (not an object)")
    return document


def _stored_run(path: Path, document: dict[str, Any], samples: list[Any]) -> StoredRun:
    experiment = Experiment(
        benchmarks=tuple(_benchmark(b) for b in document["benchmarks"]),
        variants=tuple(_variant(v) for v in document["variants"]),
        settings=Settings.from_json(document.get("settings", {})),
    )
    return StoredRun(
        run_id=int(document["run_id"]),
        created_at=str(document.get("created_at", "")),
        finished_at=None,
        status=RunStatus(document.get("status", "complete")),
        perflab_version="",
        experiment=experiment,
        machine=MachineInfo.from_json(document.get("machine") or {}),
        error=document.get("error"),
        samples=tuple(_sample(s) for s in samples),
        artifacts=tuple(_artifact(a) for a in document.get("artifacts") or ()),
        notes=(),
        variant_info={v["name"]: dict(v.get("info") or {}) for v in document["variants"]},
        source=path.name,
    )


def _benchmark(data: dict[str, Any]) -> Benchmark:
    return Benchmark(
        name=str(data["name"]),
        stmt=data.get("stmt"),
        setup=data.get("setup") or "pass",
        cmd=data.get("cmd"),
        params={str(k): str(v) for k, v in (data.get("params") or {}).items()},
        measured_by=data.get("measured_by"),
        cmd_is_python=bool(data.get("cmd_is_python", False)),
    )


def _variant(data: dict[str, Any]) -> Variant:
    """The inverse of `Variant.to_json` (with the name), field by field."""
    values: dict[str, Any] = {}
    for spec in VARIANT_FIELDS:
        value = data.get(spec.name)
        if spec.kind is VariantFieldKind.TABLE:
            values[spec.name] = {str(k): str(v) for k, v in (value or {}).items()}
        elif spec.kind is VariantFieldKind.TEXTS:
            values[spec.name] = tuple(str(v) for v in value or ())
        else:
            values[spec.name] = None if value is None else str(value)
    return Variant(name=str(data["name"]), **values)


def _artifact(data: dict[str, Any]) -> Artifact:
    return Artifact(
        benchmark=str(data["benchmark"]),
        variant=str(data["variant"]),
        metric=Metric(data["metric"]),
        kind=str(data["kind"]),
        content=str(data["content"]),
        generation=int(data.get("generation", 0)),
    )


def _sample(data: dict[str, Any]) -> Sample:
    return Sample(
        benchmark=str(data["benchmark"]),
        variant=str(data["variant"]),
        metric=Metric(data["metric"]),
        name=str(data["name"]),
        value=float(data["value"]),
        loops=int(data.get("loops", 1)),
        generation=int(data.get("generation", 0)),
        block=int(data.get("block", 0)),
        position=int(data.get("position", 0)),
        cpu=data.get("cpu"),
        at_ns=int(data.get("at_ns", 0)),
        warmup=bool(data.get("warmup", False)),
        run_queue_ns=data.get("run_queue_ns"),
        cpu_ns=data.get("cpu_ns"),
        involuntary_switches=data.get("involuntary_switches"),
    )
