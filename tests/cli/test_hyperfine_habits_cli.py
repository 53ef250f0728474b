"""hyperfine's habits through the `perflab` command itself (issue 38, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab


@pytest.mark.integration
def test_ignore_failure_no_shell_show_output_one_run_and_a_parameter_list(tmp_path: Path) -> None:
    """`-i` measures a command that exits 1 and says so; `-N` runs `echo` without a shell
    ($HOME stays as typed); `--show-output` lets its output through; `--runs 1` measures one
    run each, shown without an interval; `--parameter-list` makes a benchmark per value; the
    hyperfine export's exit_codes are the runs' own."""
    done = perflab(
        "-i", "-N", "--show-output", "--runs", "1", "--warmup", "0", "--budget", "0.3",
        "--parameter-list", "x", "1,2", "--json", "r.json", "--store", "s.db",
        "--export-hyperfine-json", "h.json",
        "echo {x} $HOME", "false",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 $HOME" in done.stdout and "2 $HOME" in done.stdout  # no shell expanded it
    said = " ".join((done.stdout + done.stderr).split())
    assert "was measured anyway (--ignore-failure): 1 run with status 1" in said
    assert "was measured once (--runs 1)" in said
    document = json.loads((tmp_path / "r.json").read_text())
    benchmarks = sorted({c["benchmark"] for c in document["comparisons"]})
    assert benchmarks == ["echo {x} $HOME vs false[x=1]", "echo {x} $HOME vs false[x=2]"]
    assert all(m["n_samples"] == 1 for m in document["measurements"])
    results = json.loads((tmp_path / "h.json").read_text())["results"]
    codes = {r["variant"]: r["exit_codes"] for r in results if r["parameters"] == {"x": "1"}}
    assert codes == {"cmd1": [0], "cmd2": [1]}  # hyperfine's field, as each run exited


@pytest.mark.integration
def test_one_command_alone_takes_a_few_seconds_by_default(tmp_path: Path) -> None:
    """hyperfine answers a single command in seconds: a command timed alone gets a 5 s budget
    unless one is given (a comparison keeps 20 s)."""
    done = perflab("true", "--json", "r.json", "--store", "s.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["settings"]["budget_s"] == 5.0
    assert document["measurements"][0]["value"] > 0


def test_the_quick_default_is_for_one_variant_timed_alone() -> None:
    from perflab.api import make_experiment

    assert make_experiment(cmd="true").settings.budget_s == 5.0
    assert make_experiment(cmd="true", budget_s=2).settings.budget_s == 2.0
    assert make_experiment(cmd="true", variants=["a", "b"]).settings.budget_s == 20.0
