"""An asv suite's listing, with the listing helper scripted: each time_ benchmark at each
parameter combination is a benchmark, the suite's longest timeout bounds a sample, skipped
combinations and unmeasured kinds are said, peakmem_ and track_ benchmarks are measured by their
lens alone, a timeraw_ one is its code run by each variant's interpreter, and a listing that fails
says why."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.plan.asv_suite import HELPER, asv_suite, run_of
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric
from perflab.records.model import Variant

SUBJECT = "perflab.plan.asv_suite"


def _helper(*lists: Sequence[dict[str, Any]]) -> FakeRunner:
    """`python -m perflab_asv DIR LISTING [PATTERN]`: each run writes the next listing."""
    listings = iter(lists)

    def listed(spec: LaunchSpec, stdin: str | None) -> Completed:
        lines = "".join(json.dumps(entry) + "\n" for entry in next(listings))
        Path(spec.argv[4]).write_text(lines)
        return Completed(spec.argv, 0, "", "", 1)

    return FakeRunner().on_run(rf" -m {HELPER} ", listed)


def _bench(name: str, **more: Any) -> dict[str, Any]:
    key = name.partition("(")[0]
    return {"name": name, "key": key, "module": key.partition(".")[0], "dir": "benchmarks",
            **more}  # fmt: skip


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "benchmarks").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.usefixtures("suite_dir")
def test_each_time_benchmark_at_each_combination_is_a_benchmark() -> None:
    runner = _helper([
        _bench("bench_sort.time_sorted(10)", index=[0], timeout=60),
        _bench("bench_sort.time_sorted(100)", index=[1], timeout=120),
        _bench("bench_sort.time_sorted(1000)", index=[2], skipped=True),
        _bench("bench_sort.later_sorted", kind="later"),  # a kind no lens measures
    ])  # fmt: skip
    suite = asv_suite("benchmarks", [Variant("a")], runner, pattern="sorted")
    assert [b.name for b in suite.benchmarks] == [
        "bench_sort.time_sorted(10)",
        "bench_sort.time_sorted(100)",
    ]
    assert "'bench_sort', 'bench_sort.time_sorted', (1,)" in suite.benchmarks[1].setup
    assert all(b.measured_by is None for b in suite.benchmarks)  # the run's lenses
    assert suite.timeout_s == 120
    skipped, unmeasured = suite.notes
    assert "1 skipped" in skipped and "bench_sort.later_sorted" in unmeasured
    ((spec, _),) = runner.calls
    assert spec.argv[1:4] == ("-m", HELPER, "benchmarks") and spec.argv[-1] == "sorted"


@pytest.mark.usefixtures("suite_dir")
def test_a_benchmark_some_interpreters_list_is_kept_once() -> None:
    runner = _helper([_bench("b.time_x")], [_bench("b.time_x"), _bench("b.time_y")])
    variants = [Variant("a", python="/a/python"), Variant("b", python="/b/python")]
    suite = asv_suite("benchmarks", variants, runner)
    assert [b.name for b in suite.benchmarks] == ["b.time_x", "b.time_y"]


@pytest.mark.usefixtures("suite_dir")
def test_a_listing_that_fails_says_why_with_its_output() -> None:
    runner = FakeRunner().on_run(HELPER, returncode=1, stderr="Traceback ...\nSyntaxError: x")
    with pytest.raises(ConfigError, match="could not list the asv benchmarks") as raised:
        asv_suite("benchmarks", [Variant("a")], runner)
    assert raised.value.detail is not None and "SyntaxError" in raised.value.detail


def test_a_missing_directory_is_said_before_anything_runs(tmp_path: Path) -> None:
    runner = FakeRunner()
    with pytest.raises(ConfigError, match="no asv benchmark directory 'nowhere'"):
        asv_suite("nowhere", [Variant("a", cwd=str(tmp_path))], runner)
    assert not runner.calls


@pytest.mark.usefixtures("suite_dir")
def test_peakmem_and_track_benchmarks_are_measured_by_their_lens_alone() -> None:
    runner = _helper([
        _bench("b.time_x"),
        _bench("b.peakmem_x", kind="peakmem"),
        _bench("b.track_x", kind="track"),
    ])  # fmt: skip
    suite = asv_suite("benchmarks", [Variant("a")], runner)
    timed, peakmem, track = suite.benchmarks
    assert timed.measured_by is None
    assert peakmem.measured_by == (Metric("rss"),) and peakmem.stmt == timed.stmt
    assert track.measured_by == (Metric("track"),)
    assert "track_unit = getattr(_perflab_fn, 'unit', None)" in track.setup
    assert suite.kind_lenses == (("peakmem", (Metric("rss"),)), ("track", (Metric("track"),)))
    run = run_of(suite, (Metric.TIME, Metric.INSTRUCTIONS))
    assert run.notes == (
        "asv suite: its peakmem_ benchmarks are measured by the rss lens alone",
        "asv suite: its track_ benchmarks are measured by the track lens alone",
    )
    # the lenses the kinds need join the run's, which measure the others
    assert run.metrics == (Metric.TIME, Metric.INSTRUCTIONS, Metric("rss"), Metric("track"))
    assert run.benchmarks[0].measured_by == (Metric.TIME, Metric.INSTRUCTIONS)
    assert run.benchmarks[1:] == (peakmem, track)
    # the run's own lenses that measure them: nothing to add; what time_x returns is no value
    asked = run_of(suite, (Metric("rss"), Metric("track")))
    assert asked.metrics == (Metric("rss"), Metric("track"))
    assert asked.benchmarks == (replace(timed, measured_by=(Metric("rss"),)), peakmem, track)
    tracked = run_of(suite, (Metric("track"),))
    assert [b.name for b in tracked.benchmarks] == ["b.peakmem_x", "b.track_x"]
    assert "asv suite: no lens of the run measures these: b.time_x" in tracked.notes


@pytest.mark.usefixtures("suite_dir")
def test_one_variant_leaves_out_the_kinds_only_a_comparing_lens_measures() -> None:
    runner = _helper([_bench("b.time_x"), _bench("b.track_x", kind="track")])
    suite = asv_suite("benchmarks", [Variant("a")], runner)
    alone = (Metric.TIME, Metric("rss"))
    run = run_of(suite, (Metric.TIME,), alone)
    assert [b.name for b in run.benchmarks] == ["b.time_x"] and run.metrics == (Metric.TIME,)
    (note,) = run.notes
    assert note == "asv suite: one variant has nothing to compare these with: b.track_x"
    only_tracked = asv_suite(
        "benchmarks", [Variant("a")], _helper([_bench("b.track_x", kind="track")])
    )
    with pytest.raises(ConfigError, match="measured by the run's lenses in a run of one variant"):
        run_of(only_tracked, (Metric.TIME,), alone)


@pytest.mark.usefixtures("suite_dir")
def test_a_timeraw_benchmark_is_its_code_run_by_each_variants_interpreter() -> None:
    code = "import json; json.dumps([1, 2])"
    runner = _helper([_bench("b.timeraw_x", kind="timeraw", code=code)])
    suite = asv_suite("benchmarks", [Variant("a")], runner, default_python="/usr/bin/python3")
    (raw,) = suite.benchmarks
    assert raw.kind is BenchmarkKind.COMMAND and raw.measured_by is None
    assert raw.command_for(Variant("a")) == "/usr/bin/python3 -c 'import json; json.dumps([1, 2])'"
    other = Variant("b", python="/opt/py 3/bin/python")
    assert raw.command_for(other).startswith("'/opt/py 3/bin/python' -c ")


@pytest.mark.usefixtures("suite_dir")
def test_a_timeraw_benchmark_whose_listing_raised_runs_its_code_as_a_statement() -> None:
    runner = _helper([_bench("b.timeraw_x", kind="timeraw")])
    (raw,) = asv_suite("benchmarks", [Variant("a")], runner).benchmarks
    assert raw.stmt == "_perflab_asv.run_raw(_perflab_fn(*_perflab_args))"


def _failed(module: str, reason: str) -> dict[str, Any]:
    """The listing's entry of a module that failed to import, its traceback ending in `reason`
    (and the helper's hint after it)."""
    error = f"Traceback (most recent call last):\n  ...\n{reason}\nhint: install it"
    return {"name": module, "module": module, "dir": "benchmarks", "error": error}


CHECKOUTS = [Variant("main", git="A"), Variant("mine", git="B")]
NO_PYWT = "ModuleNotFoundError: No module named 'pywt'"


@pytest.mark.usefixtures("suite_dir")
def test_modules_a_stand_in_cannot_import_are_said_not_measured() -> None:
    # every variant is built, so the suite is listed before the builds by perflab's interpreter;
    # a module it cannot import would fail in the variants for a reason not theirs
    runner = _helper([_failed("dwt_benchmarks", NO_PYWT), _bench("other.time_x")])
    suite = asv_suite("benchmarks", CHECKOUTS, runner, default_python="/perflab/python")
    assert [b.name for b in suite.benchmarks] == ["other.time_x"]
    (note,) = suite.notes
    assert "1 module could not be imported by /perflab/python" in note
    assert f"dwt_benchmarks ({NO_PYWT})" in note


@pytest.mark.usefixtures("suite_dir")
def test_a_bench_that_selects_nothing_names_the_modules_that_failed_to_import() -> None:
    runner = _helper([_failed("dwt_benchmarks", NO_PYWT), _failed("swt_benchmarks", NO_PYWT)])
    with pytest.raises(ConfigError) as raised:
        asv_suite("benchmarks", CHECKOUTS, runner, pattern=r"time_dwt\(",
                  default_python="/perflab/python")  # fmt: skip
    message = raised.value.message
    assert message.startswith(
        r"no asv benchmark perflab measures in 'benchmarks' matching --bench 'time_dwt\\('"
    )
    assert "2 modules could not be imported by /perflab/python" in message
    assert f"dwt_benchmarks, swt_benchmarks ({NO_PYWT})" in message
    assert raised.value.hint is not None and "importable by /perflab/python" in raised.value.hint


@pytest.mark.usefixtures("suite_dir")
def test_a_variant_s_failed_module_that_bench_passes_over_is_said() -> None:
    runner = _helper([_failed("dwt_benchmarks", "SyntaxError: x"), _bench("other.time_x")])
    suite = asv_suite("benchmarks", [Variant("a")], runner, pattern="time_x")
    assert [b.name for b in suite.benchmarks] == ["other.time_x"]
    (note,) = suite.notes
    assert "--bench 'time_x' could not select among their benchmarks" in note
    assert "dwt_benchmarks (SyntaxError: x)" in note


@pytest.mark.usefixtures("suite_dir")
def test_a_variant_s_failed_module_that_bench_selects_fails_as_a_benchmark() -> None:
    runner = _helper([_failed("dwt_benchmarks", "SyntaxError: x"), _bench("other.time_x")])
    suite = asv_suite("benchmarks", [Variant("a")], runner)
    assert [b.name for b in suite.benchmarks] == ["dwt_benchmarks", "other.time_x"]
    assert not suite.notes


@pytest.mark.usefixtures("suite_dir")
def test_a_timeraw_benchmarks_setup_is_said_to_be_timed_with_its_code() -> None:
    # asv times the code alone inside the fresh process; a command is timed whole
    listed = _bench("b.timeraw_x", kind="timeraw", code="import json\nimport xml", raw_setup=True)
    suite = asv_suite("benchmarks", [Variant("a")], _helper([listed]))
    assert any("timed with their code" in n and "b.timeraw_x" in n for n in suite.notes)
