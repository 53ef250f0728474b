"""Experiment <-> JSON, so a stored run can be analysed again exactly as it was planned."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from perflab.records.model import Benchmark, Experiment, InteractionSpec, Variant
from perflab.records.settings import Settings


def experiment_to_json(experiment: Experiment) -> dict[str, Any]:
    """An experiment as stored with its run."""
    return {
        "variants": [{**asdict(v), "env": dict(v.env)} for v in experiment.variants],
        "benchmarks": [{**asdict(b), "params": dict(b.params)} for b in experiment.benchmarks],
        "settings": experiment.settings.to_json(),
        "pairs": [list(pair) for pair in experiment.pairs],
        "stack": list(experiment.stack),
        "interactions": [asdict(i) for i in experiment.interactions],
        "repository": experiment.repository,
        "plan_notes": list(experiment.plan_notes),
    }


def experiment_from_json(data: dict[str, Any]) -> Experiment:
    """An experiment read back from its stored JSON."""
    return Experiment(
        variants=tuple(
            Variant(**{**v, "apply": tuple(v.get("apply", ()))}) for v in data["variants"]
        ),
        benchmarks=tuple(Benchmark(**b) for b in data["benchmarks"]),
        settings=Settings.from_json(data.get("settings", {})),
        pairs=tuple((str(a), str(b)) for a, b in data.get("pairs", ())),
        stack=tuple(data.get("stack", ())),
        interactions=tuple(InteractionSpec(**i) for i in data.get("interactions", ())),
        repository=data.get("repository"),
        plan_notes=tuple(data.get("plan_notes", ())),
    )
