"""The time lens and the engine with real workers, real commands and a real store."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.engine import RunServices, run_experiment
from perflab.records.errors import BenchmarkFailedError, ConfigError, StoreError
from perflab.records.kinds import Metric, RunStatus, Verdict
from perflab.records.model import Experiment
from perflab.store import SqliteStore
from tests.support.fast_settings import FAST

pytestmark = pytest.mark.integration


def experiment(**kwargs: object) -> Experiment:
    made = make_experiment(**kwargs)  # type: ignore[arg-type]
    return dataclasses.replace(made, settings=dataclasses.replace(FAST, metrics=(Metric.TIME,)))


@pytest.mark.usefixtures("private_cpu_locks")  # it checks the run takes the default CPU
def test_a_a_statement_is_interleaved_pinned_and_stored(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "s.db")
    result = run_experiment(experiment(stmt="sum(range(100))", variants=["A", "B"]), store=store)
    assert result.status is RunStatus.COMPLETE
    (comparison,) = result.comparisons
    assert comparison.metric is Metric.TIME and comparison.variant == "B"
    assert comparison.ci_low <= comparison.ratio <= comparison.ci_high
    assert 0.5 < comparison.ratio < 2
    run = store.load_run(result.run_id)
    samples = [s for s in run.samples if s.metric is Metric.TIME]
    # every block holds one sample of each variant; the order alternates (ABBA)
    by_block: dict[tuple[int, int], list[str]] = {}
    for sample in samples:
        by_block.setdefault((sample.generation, sample.block), []).append(sample.variant)
    assert all(sorted(v) == ["A", "B"] for v in by_block.values())
    firsts = [v[0] for k, v in sorted(by_block.items()) if k[0] == 0]
    assert firsts[0] != firsts[1]
    # the minimum two generations; a third where the plan's share held it (on a loaded machine
    # the costs it plans with are scaled up, and the share is never below the minimum's)
    generations = {s.generation for s in samples}
    assert {0, 1} <= generations == set(range(len(generations)))
    pinned = result.machine.pinned_cpu
    assert pinned == max(os.sched_getaffinity(0))
    assert {s.cpu for s in samples} == {pinned}
    assert result.differences == ()


def test_variant_interpreter_without_perflab_and_a_real_difference(bare_python: Path) -> None:
    exp = experiment(
        stmt="sum(range(n))",
        setup="import os; n = int(os.environ['N'])",
        variants=[
            f"small python={bare_python} env.N=100",
            f"large python={bare_python} env.N=3000",
        ],
    )
    result = run_experiment(exp)
    (comparison,) = result.comparisons
    assert comparison.verdict is Verdict.SLOWER
    # sum(range(3000)) leaves the small-int fast path: ~30x the work, more per element; at load
    # 8-9 on 2 vCPUs the ratio was measured at 207-279 (with this code and the code before it)
    assert 10 < comparison.ratio < 1000
    assert result.variant_info["small"].executable == str(bare_python)
    assert any("env N" in d for d in result.differences)


def test_commands_alternate_and_compare() -> None:
    exp = experiment(cmd="true", variants=["A", "B cmd='sh -c true'"])
    result = run_experiment(exp)
    (comparison,) = result.comparisons
    assert comparison.unit == "ns"
    command_a = result.variant_info["A"].commands["true"]
    assert command_a["executable"].endswith("/true")
    assert len(command_a["executable_sha256"]) == 64
    assert result.variant_info["B"].commands["true"]["command"] == "sh -c true"
    assert comparison.baseline_value > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"stmt": "1/0"}, BenchmarkFailedError, "statement raised"),
        ({"stmt": "pass", "setup": "import no_such_module"}, BenchmarkFailedError, "setup raised"),
        ({"stmt": "import os; os._exit(7)"}, BenchmarkFailedError, "exited with status 7"),
        ({"cmd": "false"}, BenchmarkFailedError, "exited with status 1"),
        ({"cmd": "sh -c 'kill -SEGV $$'"}, BenchmarkFailedError, "signal 11"),
        ({"cmd": "/no/such/program"}, BenchmarkFailedError, "cannot start command"),
    ],
)
def test_failures_name_the_variant_and_the_cause(
    kwargs: dict[str, str], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as caught:
        run_experiment(experiment(variants=["A", "B"], **kwargs)).raise_on_failure()
    assert caught.value.variant in ("A", "B")  # type: ignore[attr-defined]
    assert caught.value.benchmark  # type: ignore[attr-defined]


def test_statement_traceback_is_shown() -> None:
    with pytest.raises(BenchmarkFailedError) as caught:
        run_experiment(experiment(stmt="{}['missing']", variants=["A", "B"])).raise_on_failure()
    assert "KeyError: 'missing'" in (caught.value.detail or "")


def test_hanging_samples_time_out() -> None:
    exp = experiment(cmd="sleep 5", variants=["A", "B"])
    exp = dataclasses.replace(exp, settings=dataclasses.replace(exp.settings, sample_timeout_s=0.5))
    with pytest.raises(BenchmarkFailedError, match="timed out"):
        run_experiment(exp).raise_on_failure()
    exp = experiment(stmt="import time; time.sleep(5)", variants=["A", "B"])
    exp = dataclasses.replace(exp, settings=dataclasses.replace(exp.settings, sample_timeout_s=1))
    with pytest.raises(BenchmarkFailedError, match="did not answer"):
        run_experiment(exp).raise_on_failure()


def test_missing_interpreter_and_directory() -> None:
    with pytest.raises(ConfigError, match="does not exist or is not executable"):
        run_experiment(experiment(stmt="pass", variants=["A", "B python=/no/such/python"]))
    with pytest.raises(ConfigError, match="working directory"):
        run_experiment(experiment(stmt="pass", variants=["A", "B cwd=/no/such/dir"]))


def test_build_step_runs_once_and_its_failure_is_reported(tmp_path: Path) -> None:
    marker = tmp_path / "built"
    exp = experiment(cmd="true", variants=["A", f"B build='touch {marker}'"])
    run_experiment(exp)
    assert marker.exists()
    # a failing build leaves its variant out (the others are measured) and is reported
    result = run_experiment(
        experiment(cmd="true", variants=["A", "B build='echo oops; exit 2'", "C"])
    )
    assert result.status is RunStatus.INCOMPLETE
    (failure,) = result.failures
    assert failure.variant == "B" and "build step" in failure.message
    assert "oops" in (failure.detail or "")
    assert [(c.baseline, c.variant) for c in result.comparisons] == [("A", "C")]
    with pytest.raises(BenchmarkFailedError, match="build step"):
        result.raise_on_failure()


def test_a_failing_benchmark_keeps_what_the_others_measured(tmp_path: Path) -> None:
    exp = make_experiment(
        stmt="1 if n < 2 else 1/0", setup="n = $n", params={"n": [1, 2]}, variants=["A", "B"]
    )
    exp = dataclasses.replace(exp, settings=FAST)
    store = SqliteStore.open(tmp_path / "s.db")
    result = run_experiment(exp, store=store)
    assert result.status is RunStatus.INCOMPLETE
    assert result.error and "statement raised" in result.error
    assert [c.benchmark for c in result.comparisons] == [exp.benchmarks[0].name]
    assert any("failed" in n.message for n in result.notes)


def test_interruption_marks_the_run_incomplete_and_keeps_samples(tmp_path: Path) -> None:
    class InterruptAfterFirstGeneration:
        def update(self, **_: object) -> None:
            raise KeyboardInterrupt

    store = SqliteStore.open(tmp_path / "s.db")
    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            experiment(stmt="pass", variants=["A", "B"]),
            store=store,
            services=RunServices(progress=InterruptAfterFirstGeneration()),
        )
    run = store.load_run("latest")
    assert run.status is RunStatus.INCOMPLETE and run.error == "interrupted"
    assert len(run.samples) > 0


def test_default_python_is_perflabs_own() -> None:
    result = run_experiment(experiment(stmt="pass", variants=["A", "B"]))
    assert result.variant_info["A"].python_version == sys.version.split()[0]


def test_minimums_beyond_the_budget_are_noted() -> None:
    exp = experiment(stmt="import time; time.sleep(0.02)", variants=["A", "B"])
    exp = dataclasses.replace(exp, settings=dataclasses.replace(exp.settings, budget_s=0.05))
    result = run_experiment(exp)
    # the plan knew before measuring that the minimums do not fit (the benchmark's budget note
    # says so); the time lens's own overrun note comes only when it also overran its share
    messages = [note.message for note in result.notes]
    assert any(
        "of the budget 0.05 s" in m and "the minimums were measured anyway" in m for m in messages
    ), messages


def test_a_statement_that_prints_does_not_block_the_worker() -> None:
    # 100 kB per sample overflows a pipe nobody reads within the first sample
    result = run_experiment(experiment(stmt="print('x' * 100_000)", variants=["A", "B"]))
    assert result.failures == () and result.comparisons


def test_an_interpreter_that_is_not_python_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="did not start perflab's worker"):
        run_experiment(experiment(stmt="pass", variants=["A", "B python=/bin/true"]))
    with pytest.raises(ConfigError, match="does not exist or is not executable"):
        run_experiment(experiment(stmt="pass", variants=["A", f"B python={tmp_path}"]))


def test_sigterm_marks_the_run_incomplete_and_leaves_no_worker(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    # the budget's probe runs the set-up first (and leaves a mark): only the measuring
    # workers sit in a 30 s set-up, once the run is stored
    setup = (
        "import os, time\n"
        "if os.path.exists('probed'): time.sleep(30)\n"
        "else: open('probed', 'w').close()"
    )
    # (the minimums measured anyway: on a loaded machine the budget's plan may refuse to start)
    process = subprocess.Popen(
        [sys.executable, "-m", "perflab.cli.main", "run", "--stmt", "pass", "--setup",
         setup, "-v", "A", "-v", "B", "--quiet"],
        cwd=tmp_path, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not (run_stored(tmp_path) and workers_in(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)  # wait until the workers sit in their 30 s setup
    assert workers_in(tmp_path), "the workers never started"
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 130
    run = SqliteStore.open(tmp_path / ".perflab" / "perflab.db").load_run("latest")
    assert run.status is RunStatus.INCOMPLETE
    time.sleep(0.5)
    assert workers_in(tmp_path) == []


def run_stored(directory: Path) -> bool:
    path = directory / ".perflab" / "perflab.db"
    try:
        return path.exists() and bool(SqliteStore.open(path, create=False).list_runs())
    except StoreError:
        return False


def workers_in(directory: Path) -> list[int]:
    """Statement workers still running whose working directory is `directory`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) != directory:
                continue
            if b"statement_worker" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def test_commands_get_a_padding_per_block_equalised_across_variants(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    exp = experiment(
        cmd=f"sh -c 'echo $X ${{#PERFLAB_LAYOUT_PADDING}} >> {log}'",
        variants=["A env.X=a", "B env.X=abcdefghij"],
    )
    store = SqliteStore.open(tmp_path / "s.db")
    result = run_experiment(exp, store=store)
    lines = [line.split() for line in log.read_text().splitlines()]
    lines = lines[len(lines) % 2 :]  # the budget's probe ran the baseline once before
    assert len(lines) >= 4
    blocks = [dict(lines[i : i + 2]) for i in range(0, len(lines), 2)]
    # within a block the strings end at the same size: A's padding is 9 bytes longer
    assert all(int(b["a"]) - int(b["abcdefghij"]) == 9 for b in blocks)
    assert len({b["a"] for b in blocks}) > 1  # drawn anew per block
    (command,) = result.variant_info["A"].commands.values()
    assert command["layout"]["environment_padding"]["drawn_per"] == "block"
    run = store.load_run(result.run_id)
    (units,) = [a for a in run.artifacts if a.kind == "time-command-units"]
    assert json.loads(units.content)["blocks_per_unit"] >= 1
