"""An experiment to JSON and back (store/codec.py): a stored run is analysed again as it was
planned, whatever its variants, benchmarks, pairs, stack and interactions were."""

from __future__ import annotations

import json

from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Experiment, InteractionSpec, Variant
from perflab.records.settings import Settings
from perflab.store.codec import experiment_from_json, experiment_to_json

EXPERIMENT = Experiment(
    benchmarks=(
        Benchmark("parse[n=10]", stmt="parse(n)", setup="n = 10", params={"n": "10"}),
        Benchmark("gzip", cmd="gzip -c data"),
        Benchmark("peak", stmt="f()", measured_by=(Metric("rss"),)),
        Benchmark("raw", cmd="python3", cmd_args="-c pass", cmd_is_python=True),
    ),
    variants=(
        Variant("main", git="main", build="make"),
        Variant("fix", git="main", apply=("abc123", "fix.patch"), env={"OMP_NUM_THREADS": "1"}),
        Variant("other", python="/envs/b/bin/python", cwd="/src"),
        Variant("fix-other", git="other", apply=("abc123",)),
    ),
    settings=Settings(budget_s=30, confidence=0.99, metrics=(Metric.TIME, Metric.INSTRUCTIONS)),
    pairs=(("main", "fix"), ("other", "fix-other")),
    stack=("main", "fix"),
    interactions=(InteractionSpec("fix", "main", "other", "fix", "fix-other"),),
    repository="/home/me/project",
    plan_notes=("a stack of 1 step",),
)


def test_an_experiment_reads_back_as_it_was_written_through_json_text() -> None:
    text = json.dumps(experiment_to_json(EXPERIMENT))
    assert experiment_from_json(json.loads(text)) == EXPERIMENT


def test_a_stored_run_written_before_pairs_stacks_and_interactions_reads_without_them() -> None:
    stored = experiment_to_json(EXPERIMENT)
    for newer in ("pairs", "stack", "interactions", "repository", "plan_notes", "settings"):
        del stored[newer]
    for variant in stored["variants"]:
        del variant["apply"]
    for benchmark in stored["benchmarks"]:
        del benchmark["measured_by"], benchmark["cmd_is_python"]
    read = experiment_from_json(stored)
    assert read.variants[1].apply == () and read.pairs == () and read.interactions == ()
    assert read.repository is None and read.settings == Settings()
    assert [b.name for b in read.benchmarks] == ["parse[n=10]", "gzip", "peak", "raw"]
    assert read.benchmarks[2].measured_by is None  # every lens of its run measured it
