"""The JSON export. Its format is documented in docs/json-format.md, with its version history.

Within a version fields are only added; where a field's meaning is refined, the history row says
which added field tells the documents apart. Bump FORMAT_VERSION only where nothing could, since
outside checks read version 1.
"""

from __future__ import annotations

import json
import math
from typing import Any

from perflab.records.model import Artifact, Benchmark, Sample, Variant
from perflab.records.results import RunResult

# the JSON export's version: raise it only for a change a reader must know of (fields are added,
# never renamed)
FORMAT_VERSION = 1
# `--samples` also writes the artifacts up to this size: what a lens recorded about its samples
# (the time lens's command batch size, exit codes) so the document is analysed as the store's
# run is; profiles and call graphs stay in the store
SMALL_ARTIFACT_CHARS = 4096


def _clean(value: Any) -> Any:
    """JSON has no inf/nan: unbounded CI ends and undefined values become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def sample_to_json(sample: Sample) -> dict[str, Any]:
    """One raw sample as the JSON export writes it."""
    return {
        "benchmark": sample.benchmark,
        "variant": sample.variant,
        "metric": str(sample.metric),
        "name": sample.name,
        "value": sample.value,
        "loops": sample.loops,
        "generation": sample.generation,
        "block": sample.block,
        "position": sample.position,
        "cpu": sample.cpu,
        "at_ns": sample.at_ns,
        "warmup": sample.warmup,
        "run_queue_ns": sample.run_queue_ns,
        "cpu_ns": sample.cpu_ns,
        "involuntary_switches": sample.involuntary_switches,
    }


def artifact_to_json(artifact: Artifact) -> dict[str, Any]:
    return {
        "benchmark": artifact.benchmark,
        "variant": artifact.variant,
        "metric": str(artifact.metric),
        "kind": artifact.kind,
        "generation": artifact.generation,
        "content": artifact.content,
    }


def run_to_json(result: RunResult, *, samples: bool = False) -> dict[str, Any]:
    """The documented JSON document; `samples` adds every raw sample (a list, can be large)."""
    experiment = result.experiment
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "run_id": result.run_id,
        "status": str(result.status),
        "created_at": result.created_at,
        "error": result.error,
        "machine": result.machine.to_json(),
        "variants": [
            _variant_to_json(v, baseline=i == 0, info=_info_json(result, v.name))
            for i, v in enumerate(experiment.variants)
        ],
        "benchmarks": [_benchmark_to_json(b) for b in experiment.benchmarks],
        "settings": experiment.settings.to_json(),
        "differences": list(result.differences),
        "comparisons": [c.to_json() for c in result.comparisons],
        "measurements": [m.to_json() for m in result.measurements],
        "notes": [n.to_json() for n in result.notes],
        "summaries": [s.to_json() for s in result.summaries],
    }
    document.update(result.top_level)
    if samples:
        document["samples"] = [sample_to_json(s) for s in result.samples]
        document["artifacts"] = [
            artifact_to_json(a) for a in result.artifacts if len(a.content) <= SMALL_ARTIFACT_CHARS
        ]
    if result.experiment.stack:
        document["stack"] = [s.to_json() for s in result.stacks]
    if result.experiment.interactions:
        document["interactions"] = [i.to_json() for i in result.interactions]
    cleaned: dict[str, Any] = _clean(document)
    return cleaned


def _info_json(result: RunResult, variant: str) -> dict[str, Any]:
    info = result.variant_info.get(variant)
    return {} if info is None else info.to_json()


def _variant_to_json(variant: Variant, *, baseline: bool, info: Any) -> dict[str, Any]:
    return {
        "name": variant.name,
        "baseline": baseline,
        "spec": variant.describe(),
        **variant.to_json(),
        "info": info,
    }


def _benchmark_to_json(benchmark: Benchmark) -> dict[str, Any]:
    return {
        "name": benchmark.name,
        "kind": str(benchmark.kind),
        "stmt": benchmark.stmt,
        "setup": benchmark.setup if benchmark.stmt is not None else None,
        "cmd": benchmark.cmd,
        "params": dict(benchmark.params),
        "cmd_args": benchmark.cmd_args or None,  # a suite's arguments after each variant's cmd
        "reports": None if benchmark.reports is None else str(benchmark.reports),
        # the lenses that measured it, of the run's; null: all of them
        "measured_by": None if benchmark.measured_by is None else list(benchmark.measured_by),
        "cmd_is_python": benchmark.cmd_is_python,  # a variant's python= replaces cmd
    }


def render_json(result: RunResult, *, samples: bool = False) -> str:
    return json.dumps(run_to_json(result, samples=samples), indent=2, sort_keys=False) + "\n"
