"""A Google Benchmark binary as perflab benchmarks, on its captured output (Google Benchmark
1.7.1, tests/golden/data/gbench): the listing, the filter that runs one benchmark alone, the
lenses that see the whole process, and the errors said with a hint. Reading the time from its
JSON report is tool_output/test_gbench.py's."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from perflab.lenses.registry import region_metrics
from perflab.machine.fake_processes import FakeRunner
from perflab.plan.gbench_suite import (
    gbench_benchmark,
    gbench_filter,
    gbench_lens_notes,
    gbench_suite,
    parse_listing,
    select,
)
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric, TimeReport
from perflab.records.model import Experiment, Variant
from perflab.records.settings import Settings
from perflab.store.codec import experiment_from_json, experiment_to_json

DATA = Path(__file__).resolve().parents[2] / "golden" / "data" / "gbench"


def test_the_listing_keeps_google_benchmarks_names() -> None:
    names = parse_listing((DATA / "list_tests.txt").read_text())
    assert names == [
        "BM_Sum", "BM_Add/8/64", "BM_Add/64/512", "BM_Copy<int>", "BM_Copy<std::string>",
        "Sorted/Search",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("BM_Add/64/512", "^BM_Add/64/512$"),
        ("BM_Copy<std::string>", "^BM_Copy<std::string>$"),
        ("BM_x<int, 8>/real_time", "^BM_x<int, 8>/real_time$"),
        ("BM_f(a.b)[1]*+?{2}|^$\\", r"^BM_f\(a\.b\)\[1]\*\+\?\{2}\|\^\$\\$"),
        ("BM_q<'a', 8>/2", "^BM_q<'a', 8>/2$"),
    ],
)
def test_the_filter_selects_the_name_alone(name: str, expected: str) -> None:
    assert gbench_filter(name) == expected


def test_each_benchmark_runs_the_variants_binary_with_its_filter() -> None:
    suite = select([("a, b", ["BM_Add/8/64", "BM_Copy<int>"])], "./build/bench")
    add = suite.benchmarks[0]
    assert add.name == "BM_Add/8/64" and add.reports is TimeReport.GBENCH
    assert add.command_for(Variant("a")) == "./build/bench '--benchmark_filter=^BM_Add/8/64$'"
    own = add.command_for(Variant("b", cmd="./old/bench --benchmark_min_time=0.1"))
    assert shlex.split(own) == [
        "./old/bench", "--benchmark_min_time=0.1", "--benchmark_filter=^BM_Add/8/64$",
    ]  # fmt: skip
    assert suite.notes == ()


def test_a_benchmark_only_some_binaries_have_is_said_and_left_out() -> None:
    suite = select([("old", ["BM_Sum", "BM_Gone"]), ("new", ["BM_Sum", "BM_New"])], "./build/bench")
    assert [b.name for b in suite.benchmarks] == ["BM_Sum"]
    (note,) = suite.notes
    assert "2 benchmark(s) some variants' binaries lack" in note
    assert "BM_Gone (only old)" in note and "BM_New (only new)" in note
    with pytest.raises(ConfigError, match="no benchmark is in every variant's binary"):
        select([("old", ["BM_Gone"]), ("new", ["BM_New"])], "./build/bench")


def test_each_distinct_binary_is_listed_once_without_a_shell() -> None:
    runner = FakeRunner()
    runner.on_run(r"^\./old/bench --benchmark_list_tests", stdout="BM_Sum\nBM_Gone\n")
    runner.on_run(r"^\./build/bench --benchmark_list_tests", stdout="BM_Sum\n")
    variants = [Variant("old", cmd="./old/bench"), Variant("a"), Variant("b")]
    suite = gbench_suite("./build/bench", variants, runner, pattern="BM_(Sum|Gone)")
    assert [b.name for b in suite.benchmarks] == ["BM_Sum"]
    assert "BM_Gone (only old)" in suite.notes[0]
    assert [call.argv for call, _ in runner.calls] == [
        ("./old/bench", "--benchmark_list_tests", "--benchmark_filter=BM_(Sum|Gone)"),
        ("./build/bench", "--benchmark_list_tests", "--benchmark_filter=BM_(Sum|Gone)"),
    ]


@pytest.mark.parametrize(
    ("reply", "pattern", "message"),
    [
        ({"returncode": 127, "stderr": "No such file"}, None, "cannot run './bench': not found"),
        ({}, None, "listed no benchmarks: is it a Google Benchmark binary?"),
        ({"stderr": (DATA / "no_match.stderr").read_text()}, "x", "matches --filter 'x'"),
        ({"stderr": "Could not compile benchmark re: Mismatched"}, "(", "not a regular exp"),
        ({"returncode": -11}, None, "could not list its benchmarks: it was killed by signal 11"),
    ],
)
def test_a_binary_that_cannot_list_is_refused_with_a_hint(
    reply: dict[str, object], pattern: str | None, message: str
) -> None:
    runner = FakeRunner().on_run(r"--benchmark_list_tests", **reply)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")) as raised:
        gbench_suite("./bench", [Variant("a"), Variant("b")], runner, pattern=pattern)
    assert raised.value.hint


def test_the_lenses_that_see_the_whole_process_are_said() -> None:
    region = region_metrics()
    assert gbench_lens_notes(region, region=region) == ()
    (note,) = gbench_lens_notes([Metric.TIME, Metric.PROFILE, Metric.ASM], region=region)
    assert "the profile, asm lens(es) see the whole process" in note
    assert note.endswith("the time, instructions and memory lenses see its iterations alone")


def test_a_stored_run_keeps_how_its_benchmarks_are_timed() -> None:
    experiment = Experiment(
        benchmarks=(gbench_benchmark("BM_Add/8/64", "./bench"),),
        variants=(Variant("a"),),
        settings=Settings(),
    )
    stored = json.loads(json.dumps(experiment_to_json(experiment)))
    assert experiment_from_json(stored) == experiment


def test_a_suite_whose_variants_are_all_built_first_is_listed_here() -> None:
    runner = FakeRunner().on_run(r"--benchmark_list_tests", returncode=127)
    variants = [Variant("old", git="main"), Variant("new", git="HEAD")]
    with pytest.raises(ConfigError, match="cannot run './build/bench': not found") as raised:
        gbench_suite("./build/bench", variants, runner)
    assert raised.value.variant is None and "build it here once" in str(raised.value.hint)
    assert runner.calls[0][0].cwd is None
