"""A lens added by its own package and one registry line, nothing else: planned, run, stored,
analysed and reported through the CLI like the built-in lenses (issue 23's measure of the
layout: a new lens touches only its package and the registry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

# The package a contributor would write: a descriptor, and a lens that measures each variant's
# $X in bytes (deterministic, so the verdict is known).
PACKAGE = {
    "__init__.py": """
        from perflab.lenses.descriptor import LensDescriptor, Planning, Probe
        from perflab.records.kinds import Metric

        DESCRIPTOR = LensDescriptor(
            metric=Metric("env_bytes"),
            summary="the bytes of each variant's $X",
            lens="env_bytes_lens.measure:EnvBytesLens",
            probe=lambda facts: Probe(True, "the variant's environment, as configured"),
            planning=Planning(needs_quiet_cpu=False),
        )
    """,
    "measure.py": """
        from perflab.records.model import Sample
        from perflab.records.kinds import Metric
        from perflab.measure.lens import LensAnalysis
        from perflab.stats.comparison import SideValues, Subject, comparison_from

        METRIC = Metric("env_bytes")


        def env_bytes(variant):
            return float(len(variant.env.get("X", "")))


        class EnvBytesLens:
            metric = METRIC

            def preflight(self, experiment, runner):
                return []

            def measure(self, benchmark, context):
                for variant in context.experiment.variants:
                    context.sink.add_sample(
                        Sample(benchmark.name, variant.name, METRIC, "bytes", env_bytes(variant))
                    )

            def analyse(self, benchmark, variants, data, experiment):
                value = {v: data.samples_of(v)[0].value for v in variants}
                base = variants[0]
                return LensAnalysis(tuple(
                    comparison_from(
                        (value[v] / value[base],) * 3,
                        Subject(benchmark.name, METRIC, base, v),
                        SideValues(value[base], value[v], "B"),
                        equivalence_band=experiment.settings.equivalence_band,
                    )
                    for v in variants[1:]
                ))
    """,
}

# The one registry line, as src/perflab/lenses/registry.py would hold it, then the CLI.
DRIVER = """
import sys
import perflab.lenses.registry as registry
from env_bytes_lens import DESCRIPTOR
registry.DESCRIPTORS = (*registry.DESCRIPTORS, DESCRIPTOR)
from perflab.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_lens_from_its_package_and_one_registry_line_runs_end_to_end(tmp_path: Path) -> None:
    package = tmp_path / "env_bytes_lens"
    package.mkdir()
    for name, text in PACKAGE.items():
        (package / name).write_text(textwrap.dedent(text))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    report = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, "run", "--stmt", "pass", "--variant", "A env.X=1",
         "--variant", "B env.X=12345", "--metric", "env_bytes", "--store",
         str(tmp_path / "s.db"), "--json", str(report), "--budget", "5"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [comparison] = json.loads(report.read_text())["comparisons"]
    assert comparison["metric"] == "env_bytes" and comparison["verdict"] == "slower"
    assert comparison["baseline_value"] == 1 and comparison["variant_value"] == 5
    assert "env_bytes" in done.stdout and "5.000" in done.stdout
    # stored, and read back by `show` like any lens's results
    shown = subprocess.run(
        [sys.executable, "-c", DRIVER, "show", "--store", str(tmp_path / "s.db")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0 and "5.000" in shown.stdout, shown.stderr
