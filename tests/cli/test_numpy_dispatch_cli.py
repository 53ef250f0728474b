"""numpy's CPU dispatch through the CLI: `perflab run --metric profile,asm` with a variant that
sets NPY_DISABLE_CPU_FEATURES=X86_V3 claims the dispatch with the variable as its evidence and
shows the two copies of `DOUBLE_add` as one asm row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab  # sys.executable -m perflab.cli.main, in cwd

pytest.importorskip("numpy")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf"),
    pytest.mark.skipif(
        " avx2" not in Path("/proc/cpuinfo").read_text(), reason="the CPU lacks AVX2"
    ),
]

SETUP = "import numpy as np; a = np.ones(1 << 16); b = np.ones(1 << 16); c = np.empty(1 << 16)"


def test_numpy_dispatch_is_claimed_by_its_selector_through_the_cli(tmp_path: Path) -> None:
    done = perflab(
        *("run", "--setup", SETUP, "--stmt", "np.add(a, b, out=c)"),
        *("--variant", "v3", "--variant", "no_v3 env.NPY_DISABLE_CPU_FEATURES=X86_V3"),
        *("--metric", "profile,asm", "--budget", "1"),
        *("--quiet", "--json", "out.json", "--store", "s.db"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out.json").read_text())
    by_metric = {c["metric"]: c for c in result["comparisons"]}
    pairs = {(d["from"], d["to"]): d for d in by_metric["profile"]["dispatch_changed"]}
    if ("DOUBLE_add_X86_V3", "DOUBLE_add") not in pairs:
        pytest.skip(f"numpy dispatched np.add otherwise here: {sorted(pairs)}")
    dispatch = pairs["DOUBLE_add_X86_V3", "DOUBLE_add"]
    assert dispatch["claim"] == "dispatch_changed"
    [selector] = dispatch["selected_by"]
    assert "NPY_DISABLE_CPU_FEATURES=X86_V3 in the variant" in selector
    rows = [f for f in by_metric["asm"]["functions"] if "DOUBLE_add" in f["name"]]
    assert [r["name"] for r in rows] == ["DOUBLE_add_X86_V3 -> DOUBLE_add"]
