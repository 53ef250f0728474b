"""Experiment <-> JSON, so a stored run can be analysed again exactly as it was planned."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from perflab.model import Benchmark, Experiment, Metric, Settings, Variant


def experiment_to_json(experiment: Experiment) -> dict[str, Any]:
    settings = asdict(experiment.settings)
    settings["metrics"] = [str(m) for m in experiment.settings.metrics]
    return {
        "variants": [{**asdict(v), "env": dict(v.env)} for v in experiment.variants],
        "benchmarks": [{**asdict(b), "params": dict(b.params)} for b in experiment.benchmarks],
        "settings": settings,
    }


def experiment_from_json(data: dict[str, Any]) -> Experiment:
    known = {f.name for f in fields(Settings)}
    raw = {k: v for k, v in data.get("settings", {}).items() if k in known}
    raw["metrics"] = tuple(Metric(m) for m in raw.get("metrics", ["time"]))
    for key in ("events", "symbols"):
        if key in raw:
            raw[key] = tuple(raw[key])
    if "layers" in raw:
        raw["layers"] = tuple(tuple(layer) for layer in raw["layers"])
    return Experiment(
        variants=tuple(Variant(**v) for v in data["variants"]),
        benchmarks=tuple(Benchmark(**b) for b in data["benchmarks"]),
        settings=Settings(**raw),
    )
