"""One Rust function built twice, as cargo builds it under two flag sets (another `-C metadata`,
so legacy mangling ends each build's symbol in another hash): `perflab run --metric
instructions,asm` shows it as one row in every lens, claims nothing appeared or disappeared, and
the summary and the Markdown name it as people read it (no hash, no `$LT$`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab  # sys.executable -m perflab.cli.main, in cwd

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("rustc") is None, reason="needs rustc"),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind"),
    pytest.mark.skipif(shutil.which("perf") is None, reason="needs perf"),
]

SUMBENCH = """
use std::env;

#[inline(never)]
fn sum_slice(v: &[u32], n: usize) -> u32 {
    let mut s = 0u32;
    for x in &v[..n] {
        s = s.wrapping_add(*x);
    }
    s
}

fn main() {
    let reps: usize = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20000);
    let v: Vec<u32> = (0..4096u32).collect();
    let mut t = 0u32;
    for _ in 0..reps {
        t = t.wrapping_add(sum_slice(std::hint::black_box(&v), std::hint::black_box(4000)));
    }
    std::process::exit((t == 12345) as i32);
}
"""
HASHED = re.compile(r"::h[0-9a-f]{16}\b")


def _build(directory: Path) -> None:
    (directory / "sumbench.rs").write_text(SUMBENCH)
    vector = ["-C", "target-cpu=haswell"] if " avx2" in Path("/proc/cpuinfo").read_text() else []
    for name, flags in (("a", []), ("b", vector)):
        subprocess.run(
            ["rustc", "-g", "--crate-name", "sumbench", "-C", "opt-level=3",
             "-C", f"metadata={name}", *flags, "-o", name, "sumbench.rs"],
            cwd=directory, check=True,
        )  # fmt: skip
    names = [
        subprocess.run(["nm", name], cwd=directory, capture_output=True, text=True).stdout
        for name in ("a", "b")
    ]
    spelled = [re.findall(r"_ZN8sumbench9sum_slice17h[0-9a-f]{16}E", text) for text in names]
    assert len(spelled[0]) == len(spelled[1]) == 1 and spelled[0] != spelled[1]


def test_one_rust_function_under_two_hashes_is_one_row_everywhere(tmp_path: Path) -> None:
    _build(tmp_path)
    done = perflab(
        *("run", "--cmd", "./a", "--variant", "a", "--variant", "b cmd=./b"),
        *("--metric", "instructions,asm", "--budget", "1"),
        *("--quiet", "--json", "out.json", "--markdown", "out.md", "--store", "s.db"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out.json").read_text())
    by_metric = {c["metric"]: c for c in result["comparisons"] if c.get("event") is None}

    rows = [f for f in by_metric["instructions"]["functions"] if "sum_slice" in f["name"]]
    assert [r["presence"] for r in rows] == ["both"]

    asm = by_metric["asm"]
    claims = [(d["claim"], d["function"]) for d in asm["diagnoses"]]
    assert not [c for c in claims if c[0] in ("appeared", "disappeared")], claims
    [row] = [r for r in asm["functions"] if "sum_slice" in r["name"]]
    assert row["ran"] == {"baseline": True, "variant": True}
    assert "the only function named sumbench::sum_slice in each build" in row["paired_by"]
    # where its hot loop lies, for the summary's placement finding
    loop = row["baseline"]["hot_loop"]
    assert 0 < loop["start_address"] < loop["end_address"]

    [summary] = result["summaries"]
    text = summary["summary"]["text"]
    assert "sumbench::sum_slice" in text
    assert not HASHED.search(text) and "$LT$" not in text
    markdown = (tmp_path / "out.md").read_text().replace("\\_", "_")
    assert "| sumbench::sum_slice |" in markdown and "$LT$" not in markdown
    # a hash is shown only where it is the evidence: the two spellings taken for one function
    hashed = [line for line in markdown.splitlines() if HASHED.search(line)]
    assert all("spelled differently by its build" in line for line in hashed), hashed
