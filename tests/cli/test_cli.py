"""The command line end to end: exit codes, messages, the JSON contract."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perflab.cli.main import main
from tests.support.cli_commands import FAST, perflab


@pytest.mark.integration
def test_run_writes_the_json_contract_and_the_store(tmp_path: Path) -> None:
    done = perflab(
        "run",
        "--stmt",
        "sum(range(100))",
        "--variant",
        "A",
        "--variant",
        "B env.X=1",
        "--json",
        "out.json",
        "--markdown",
        "out.md",
        *FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "out.json").read_text())
    assert document["format_version"] == 1
    assert isinstance(document["run_id"], int)
    assert document["machine"]["cores"] >= 1
    assert document["unavailable_events"] == []
    (comparison,) = document["comparisons"]
    assert comparison["benchmark"] == "sum(range(100))"
    assert comparison["metric"] == "time"
    assert (comparison["baseline"], comparison["variant"]) == ("A", "B")
    for key in ("ratio", "ci_low", "ci_high"):
        assert isinstance(comparison[key], float)
    assert comparison["verdict"] in ("faster", "slower", "equivalent", "inconclusive")
    assert document["differences"] == ["env X: A=(unset), B=1"]
    markdown = (tmp_path / "out.md").read_text()
    assert "#### time" in markdown and "| sum(range(100)) | B vs A |" in markdown
    assert (tmp_path / ".perflab" / "perflab.db").exists()
    assert "ratio [95% CI]" in done.stdout

    listed = perflab("list", cwd=tmp_path)
    assert listed.returncode == 0 and "sum(range(100))" in listed.stdout
    listed_json = json.loads(perflab("list", "--json", "-", cwd=tmp_path).stdout)
    assert listed_json[0]["run_id"] == document["run_id"]
    shown = perflab("show", "latest", "--json", "-", "--quiet", cwd=tmp_path)
    assert json.loads(shown.stdout)["comparisons"][0]["ratio"] == comparison["ratio"]

    perflab(
        "run",
        "--stmt",
        "sum(range(100))",
        "--variant",
        "A",
        "--variant",
        "B env.X=1",
        "--quiet",
        *FAST,
        cwd=tmp_path,
    )
    compared = perflab("compare", "1", "2", "--json", "-", "--quiet", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    names = {(c["baseline"], c["variant"]) for c in json.loads(compared.stdout)["comparisons"]}
    assert names == {("run1:A", "run2:A"), ("run1:B", "run2:B")}


@pytest.mark.integration
def test_fail_on_makes_a_regression_fail_the_job(tmp_path: Path) -> None:
    args = [
        "run",
        "--stmt",
        "sum(range(n))",
        "--setup",
        "import os; n = int(os.environ['N'])",
        "--variant",
        "A env.N=100",
        "--variant",
        "B env.N=3000",
        "--quiet",
        *FAST,
    ]
    assert perflab(*args, cwd=tmp_path).returncode == 0
    assert perflab(*args, "--fail-on", "slower", cwd=tmp_path).returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run", "--stmt", "pass", "--variant", "A", "-m", "asm"],
            "time, instructions and rss lenses only",
        ),
        (["run", "--stmt", "pass", "--runs", "5"], "apply to commands"),
        (["run", "--cmd", "true", "--min-runs", "5", "--max-runs", "3"], "more than max_runs"),
        (["sho", "3"], "did you mean show"),
        (["true", "--cmd", "false"], "cannot be added"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B colour=red"], "unknown key 'colour'"),
        (["run", "-v", "A", "-v", "B"], "nothing to measure"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--metric", "speed"], "unknown metric"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--budget", "-1"], "budget must be"),
        (["run", "no-such-file.toml"], "does not exist"),
        (["show", "42"], "no perflab store at"),
        (["list", "--store", "no/such/dir/x.db"], "no perflab store at"),
        (["run", "--stmt", "pass", "-v", "A cmd=./x", "-v", "B"], "cmd= applies to command"),
        (["run", "--cmd", "true", "-v", "A python=/x", "-v", "B"], "python= applies to statement"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B python="], "python= has no value"),
        (["run", "--stmt", "$n", "--param", "n=,", "-v", "A", "-v", "B"], "empty value"),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--events", "x"], "--events is an option"),
        (
            ["show", "1", "--json", "-", "--markdown", "-"],
            "only one of --json, --markdown, --html",
        ),
        (["run", "--stmt", "pass", "-v", "A", "-v", "B", "--cpu", "99"], "CPU 99 is not available"),
    ],
)
def test_bad_input_is_named_with_a_non_zero_exit(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert message in capsys.readouterr().err


@pytest.mark.integration
def test_a_failing_statement_exits_3_with_the_traceback(tmp_path: Path) -> None:
    done = perflab("run", "--stmt", "1/0", "-v", "A", "-v", "B", *FAST, cwd=tmp_path)
    assert done.returncode == 3
    # each failure once where it is read: in the run's notes (the report, here a pipe) and in
    # full on stderr, since a table in a pipe or a file is not "above" (on one terminal the
    # notes hold it and stderr only names the variant)
    assert done.stdout.count("ZeroDivisionError") == 1
    assert done.stderr.count("ZeroDivisionError") == 1
    assert "notes above" not in done.stderr


def test_help_explains_variants() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "perflab.cli.main", "run", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "env.VAR=VALUE" in done.stdout and "A/A" in done.stdout


def test_experiment_file_from_the_docs_parses(tmp_path: Path) -> None:
    from perflab.plan.experiment_file import load_experiment

    experiment = load_experiment(Path(__file__).parents[2] / "examples" / "experiment.toml")
    assert len(experiment.variants) >= 2 and experiment.benchmarks


@pytest.mark.integration
def test_hyperfine_habits_one_command_alone_with_runs_warmup_prepare_and_exports(
    tmp_path: Path,
) -> None:
    """`perflab CMD` measures one command alone: its own time with an interval and no ratio;
    --warmup runs are discarded, --prepare runs before every run, --runs bounds the measured
    runs, and the exports hold hyperfine's fields."""
    done = perflab(
        "--warmup", "1", "--runs", "4", "--prepare", "echo . >> prepared.txt",
        "--budget", "0.3",
        "--export-hyperfine-json", "h.json", "--export-csv", "h.csv", "--json", "r.json",
        "sleep 0.001",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "per iteration [95% CI]" in done.stdout and "ratio [" not in done.stdout
    assert len((tmp_path / "prepared.txt").read_text().split()) == 1 + 4  # warm-up + runs
    results = json.loads((tmp_path / "h.json").read_text())["results"]
    assert [r["command"] for r in results] == ["sleep 0.001"]
    keys = {"command", "mean", "stddev", "median", "user", "system", "min", "max", "times"}
    assert keys <= set(results[0]) and len(results[0]["times"]) == 4
    assert results[0]["min"] <= results[0]["median"] <= results[0]["max"] < 1  # seconds
    header = (tmp_path / "h.csv").read_text().splitlines()[0]
    assert header.startswith("command,mean,stddev,median,user,system,min,max")
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["comparisons"] == []
    (own,) = document["measurements"]
    assert own["variant"] == "A" and own["ci_low"] <= own["value"] <= own["ci_high"]


@pytest.mark.integration
@pytest.mark.parametrize(("metric", "unit"), [("rss", "kB"), ("instructions", "instructions")])
def test_one_variant_alone_gets_its_own_figure(tmp_path: Path, metric: str, unit: str) -> None:
    """The rss and instructions lenses measure a lone variant too (their descriptors say so):
    its own peak RSS or count with an interval, no ratio."""
    if metric == "instructions" and shutil.which("valgrind") is None:
        pytest.skip("the instructions lens needs valgrind")
    done = perflab(
        "run", "--stmt", "x = [0] * 1000", "-v", "A", "--metric", metric, *FAST,
        "--json", "r.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "per iteration [95% CI]" in done.stdout and "ratio [" not in done.stdout
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["comparisons"] == []
    (own,) = document["measurements"]
    assert (own["metric"], own["variant"], own["unit"]) == (metric, "A", unit)
    assert 0 < own["ci_low"] <= own["value"] <= own["ci_high"]


@pytest.mark.integration
def test_two_commands_as_words_are_two_variants(tmp_path: Path) -> None:
    done = perflab(
        "--runs", "3", "--warmup", "0", *FAST[:2], "--json", "r.json", "true", "sleep 0.001",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert [v["cmd"] for v in document["variants"]] == ["true", "sleep 0.001"]
    (comparison,) = document["comparisons"]
    assert (comparison["baseline"], comparison["variant"]) == ("cmd1", "cmd2")
    assert len(document["measurements"]) == 2


@pytest.mark.parametrize(
    ("table_on_terminal", "said_in_full"),
    [(True, False), (False, True)],
    ids=["table on the terminal", "table in a file or pipe"],
)
def test_a_failure_is_said_once_where_it_is_read(
    table_on_terminal: bool, said_in_full: bool
) -> None:
    """On one terminal the run's notes (above) hold the failure and stderr only names the
    variant; a table written elsewhere is not 'above', so stderr says the failure in full."""
    from rich.console import Console

    from perflab.cli.options import OutputOptions
    from perflab.cli.run import report_failures
    from perflab.records.errors import BenchmarkFailedError
    from perflab.records.kinds import RunStatus
    from perflab.records.model import Benchmark, Experiment, Variant
    from perflab.records.results import RunResult
    from perflab.records.run_facts import MachineInfo

    failure = BenchmarkFailedError("the setup raised", variant="B", detail="ZeroDivisionError")
    result = RunResult(
        run_id=1,
        status=RunStatus.INCOMPLETE,
        created_at="2026-11-27T00:00:00+00:00",
        experiment=Experiment(
            benchmarks=(Benchmark("b", stmt="1/0"),), variants=(Variant("A"), Variant("B"))
        ),
        machine=MachineInfo.from_json({}),
        comparisons=(),
        notes=(),
        variant_info={},
        differences=(),
        failures=(failure,),
    )
    output = OutputOptions(store=Path("s.db"), json_path=None, markdown_path=None, quiet=False)
    # two files (not the test's own streams, which may be one: `2>&1`)
    out = Console(file=io.StringIO(), force_terminal=table_on_terminal, record=True, width=120)
    err = Console(file=io.StringIO(), force_terminal=True, record=True, width=120)
    report_failures(result, output, out, err)
    said = err.export_text()
    assert ("the setup raised" in said) is said_in_full
    assert ("notes above" in said) is not said_in_full


@pytest.mark.integration
def test_main_in_process_leaves_the_host_programs_children_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program calling main() in-process (a notebook, a test session) keeps its own children:
    only the `perflab` process itself adopts orphans and stops every child it has at the end."""
    monkeypatch.chdir(tmp_path)
    host_child = subprocess.Popen(["sleep", "60"])
    try:
        assert main(["run", "--stmt", "pass", "-v", "A", "-v", "B", *FAST]) == 0
        assert host_child.poll() is None
    finally:
        host_child.kill()
        host_child.wait()
