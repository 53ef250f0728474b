"""`perflab run --metric torch` end to end: an env toggle makes the statement call one more op,
and the JSON says which ops appeared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab  # sys.executable -m perflab.cli.main, in cwd

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.integration


def test_run_metric_torch_reports_the_ops_that_appeared(tmp_path: Path) -> None:
    done = perflab(
        "run",
        "--stmt",
        "torch.add(x, y)\nif extra: torch.relu(x)",
        "--setup",
        "import os, torch; x = torch.ones(4); y = torch.ones(4); extra = os.environ.get('EXTRA')",
        "--name",
        "add",
        "--variant",
        "A",
        "--variant",
        "B env.EXTRA=1",
        "--metric",
        "torch",
        "--min-generations",
        "2",
        "--sample-ms",
        "1",
        "--seed",
        "3",
        # the variants' interpreters read torch's bytecode from site-packages: a fresh,
        # isolated PYTHONPYCACHEPREFIX (the default; tests/cli/test_isolated_caches_cli.py)
        # compiles torch from source at every import, 3.6 s -> 6.8 s, three imports per run
        "--share-caches",
        "--json",
        "out.json",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (comparison,) = json.loads((tmp_path / "out.json").read_text())["comparisons"]
    assert comparison["metric"] == "torch"
    assert (comparison["baseline"], comparison["variant"]) == ("A", "B")
    assert "aten::relu" in comparison["appeared"]
    assert comparison["disappeared"] == []
    ops = {op["name"]: op for op in comparison["ops"]}
    assert ops["aten::relu"]["baseline_calls_per_iteration"] == 0.0
    assert ops["aten::relu"]["variant_calls_per_iteration"] == 1.0
    assert ops["aten::add"]["baseline_calls_per_iteration"] == 1.0
    assert ops["aten::add"]["variant_calls_per_iteration"] == 1.0
    # the ops whose calls changed come first; add's calls did not change
    assert comparison["ops"][-1]["name"] == "aten::add"
    assert comparison["variant_self_us_per_iteration"] > 0
    assert comparison["ratio"] > 0 and comparison["n_groups"] == 2
    assert comparison["baseline_torch_version"] == comparison["variant_torch_version"]
    assert comparison["baseline_torch_version"] == str(torch.__version__)
    assert comparison["baseline_cpu_capability"]
    assert "ops appeared in B: " in done.stdout
