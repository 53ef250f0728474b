"""--check-output FILE (pure, with a fake runner): each variant's command writes the file it
names, whose content is compared instead of stdout; a command that does not write it fails with
the variant's name and what to do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab.cli.options import build_parser, run_options
from perflab.engine.prepare import output_check
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.measure.lens import LensContext, MemorySink, NullProgress
from perflab.records.errors import BenchmarkFailedError, VariantsFailed
from perflab.records.model import Benchmark, Experiment, Variant
from perflab.records.settings import Settings

# what this file tests, though most names it imports are other packages' (cross/test_layout.py)
SUBJECT = "perflab.engine.prepare.output_check"


def _context(tmp_path: Path, runner: FakeRunner, written: str | None) -> LensContext:
    experiment = Experiment(
        (Benchmark("bench", cmd="./bench"),),
        (Variant("a", cwd=str(tmp_path)), Variant("b", cwd=str(tmp_path), env={"V": "2"})),
        Settings(check_output=True, check_output_file=written),
    )
    return LensContext(experiment, runner, MemorySink(), NullProgress(), None, "python3")


def _writer(tmp_path: Path) -> FakeRunner:
    """A command writing its variant's V into out.bin (as bytes that are not UTF-8)."""

    def reply(spec: LaunchSpec, stdin: str | None) -> Completed:
        (tmp_path / "out.bin").write_bytes(b"\xff" + spec.env.get("V", "1").encode())
        return Completed(spec.argv, 0, "the same on stdout\n", "", 1)

    return FakeRunner().on_run(r"bench", reply)


def test_the_file_each_variant_writes_is_what_is_compared(tmp_path: Path) -> None:
    context = _context(tmp_path, _writer(tmp_path), "out.bin")
    output_check.check_outputs(context.experiment.benchmarks[0], context)
    assert isinstance(context.sink, MemorySink)
    values = {a.variant: json.loads(a.content) for a in context.sink.artifacts}
    assert values["a"]["expression"] == "file out.bin"
    assert values["a"]["after_setup"] == {
        "kind": "exact",
        "type": "file (bytes, in hex)",
        "text": "ff31",
    }
    assert values["b"]["after_setup"]["text"] == "ff32"


def test_a_command_that_does_not_write_the_file_fails_naming_the_variant(tmp_path: Path) -> None:
    runner = FakeRunner().on_run(r"bench", stdout="42\n")
    context = _context(tmp_path, runner, "missing.txt")
    with pytest.raises(BenchmarkFailedError, match="did not write 'missing.txt'") as error:
        output_check.check_outputs(context.experiment.benchmarks[0], context)
    assert error.value.variant == "a"
    assert error.value.hint is not None and "relative to the variant's cwd" in error.value.hint


def test_a_stale_file_from_before_is_not_taken_for_the_output(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("from yesterday")
    context = _context(tmp_path, FakeRunner().on_run(r"bench"), "old.txt")
    with pytest.raises(BenchmarkFailedError, match="did not change"):
        output_check.check_outputs(context.experiment.benchmarks[0], context)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["--check-output"], {"check_output": True}),
        (["--check-output", "out.txt"], {"check_output": True, "check_output_file": "out.txt"}),
        ([], {}),
    ],
)
def test_check_output_takes_an_optional_file(given: list[str], expected: dict[str, object]) -> None:
    args = build_parser().parse_args(["run", "--cmd", "./bench", "-v", "a", "-v", "b", *given])
    settings = run_options(args).settings
    assert {k: v for k, v in settings.items() if k.startswith("check_output")} == expected


def test_a_variant_whose_command_crashes_leaves_the_others_checked(tmp_path: Path) -> None:
    """Only the failing variant is left out: the others' outputs are stored (and measured on)."""

    def reply(spec: LaunchSpec, stdin: str | None) -> Completed:
        crashed = spec.env.get("V") == "2"
        return Completed(spec.argv, -11 if crashed else 0, "42\n", "", 1)

    experiment = Experiment(
        (Benchmark("bench", cmd="./bench"),),
        (
            Variant("a", cwd=str(tmp_path)),
            Variant("b", cwd=str(tmp_path), env={"V": "2"}),
            Variant("c", cwd=str(tmp_path), env={"V": "3"}),
        ),
        Settings(check_output=True),
    )
    sink = MemorySink()
    runner = FakeRunner().on_run(r"bench", reply)
    context = LensContext(experiment, runner, sink, NullProgress(), None, "python3")
    with pytest.raises(VariantsFailed) as error:
        output_check.check_outputs(experiment.benchmarks[0], context)
    assert [f.variant for f in error.value.failures] == ["b"]
    assert "signal 11" in error.value.failures[0].message
    assert sorted(a.variant for a in sink.artifacts) == ["a", "c"]
