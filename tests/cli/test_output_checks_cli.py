"""`perflab run --check EXPR` / `--check-output` end to end: a variant that computes something
else is `invalid` (and fails `--fail-on invalid`); equal outputs leave verdicts alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_commands import FAST, perflab

pytestmark = pytest.mark.integration

# the variant with WRONG=1 gets the last element wrong, as a kernel stepping past its data would
SETUP = """
import os
data = [float(i) for i in range(1000)]
wrong = bool(os.environ.get("WRONG"))
def scale(values):
    out = [v * 0.5 for v in values]
    if wrong:
        out[-1] = 0.0
    return out
"""


def _run(
    tmp_path: Path, *args: str, stmt: str = "scale(data)", setup: str = SETUP
) -> tuple[int, dict, str]:
    done = perflab(
        *("run", "--stmt", stmt, "--setup", setup, "--json", "out.json"),
        *("--store", "s.db", "--markdown", "out.md", *FAST, *args),
        cwd=tmp_path,
    )
    report = json.loads((tmp_path / "out.json").read_text()) if done.returncode < 2 else {}
    return done.returncode, report, done.stdout + done.stderr


def test_a_variant_computing_another_result_is_invalid(tmp_path: Path) -> None:
    code, report, output = _run(
        tmp_path,
        *("-v", "right", "-v", "fast_but_wrong env.WRONG=1", "-v", "same env.OTHER=1"),
        *("--check", "scale(data)", "--fail-on", "invalid"),
    )
    assert code == 1, output  # --fail-on invalid
    verdicts = {c["variant"]: c for c in report["comparisons"]}
    wrong = verdicts["fast_but_wrong"]
    assert wrong["verdict"] == "invalid"
    assert wrong["output_check"]["where"] == "element [999]"
    assert (wrong["output_check"]["baseline"], wrong["output_check"]["variant"]) == ("499.5", "0.0")
    assert verdicts["same"]["verdict"] != "invalid"
    assert "output_check" not in verdicts["same"]
    messages = [n["message"] for n in report["notes"]]
    assert any("computes something else" in m and "element [999]" in m for m in messages)
    assert "invalid" in (tmp_path / "out.md").read_text()
    assert "element [999]" in output  # the terminal names the first differing element


def test_equal_outputs_leave_the_verdicts_alone(tmp_path: Path) -> None:
    code, report, output = _run(
        tmp_path, "-v", "a", "-v", "b env.OTHER=1", "--check", "scale(data)", "--fail-on", "invalid"
    )
    assert code == 0, output
    assert all(c["verdict"] != "invalid" for c in report["comparisons"])
    assert any("computed the same value" in n["message"] for n in report["notes"])


def test_a_check_that_raises_is_an_error_naming_the_variant(tmp_path: Path) -> None:
    code, _, output = _run(
        tmp_path, "-v", "a", "-v", "b env.WRONG=1", "--check", "scale(data)[0] / (1 - wrong)"
    )
    assert code == 3, output
    assert "--check expression" in output and "ZeroDivisionError" in output
    assert "variant 'b'" in output


def test_a_value_that_changes_within_one_variant_is_not_deterministic(tmp_path: Path) -> None:
    code, report, output = _run(
        tmp_path, "-v", "a", "-v", "b env.OTHER=1", "--check", "__import__('random').random()"
    )
    assert code == 0, output
    notes = [n for n in report["notes"] if "not deterministic" in n["message"]]
    assert notes and "seed" in notes[0]["hint"]
    assert all(c["verdict"] != "invalid" for c in report["comparisons"])


def test_check_output_compares_what_commands_print(tmp_path: Path) -> None:
    done = perflab(
        *("run", "--cmd", "echo 42", "-v", "a", "-v", "b cmd='echo 43'", "-v", "c env.X=1"),
        *("--check-output", "--json", "out.json", "--store", "s.db", *FAST),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    verdicts = {
        c["variant"]: c["verdict"]
        for c in json.loads((tmp_path / "out.json").read_text())["comparisons"]
    }
    assert verdicts["b"] == "invalid"
    assert verdicts["c"] != "invalid"


def test_unseeded_randomness_differs_between_processes_of_one_variant(tmp_path: Path) -> None:
    """A setup drawing unseeded random numbers gives each process other data: the same value
    in one worker before and after measuring, another in the next; that is not a variant
    computing something else."""
    code, report, output = _run(
        tmp_path,
        *("-v", "a", "-v", "b env.OTHER=1", "--check", "x * 2"),
        stmt="x * 2",
        setup="import random; x = random.random()",
    )
    assert code == 0, output
    notes = [n for n in report["notes"] if "not deterministic" in n["message"]]
    assert {n["variant"] for n in notes} == {"a", "b"}
    assert "two processes of the same variant" in notes[0]["message"]
    assert "seed" in notes[0]["hint"] and "--check-rtol" in notes[0]["hint"]
    assert all(c["verdict"] != "invalid" for c in report["comparisons"])


def test_an_uncomparable_value_names_the_variant_its_type_and_the_fix(tmp_path: Path) -> None:
    code, _, output = _run(
        tmp_path,
        *("-v", "a", "-v", "b env.OTHER=1", "--check", "r"),
        stmt="r",
        setup="class Result: pass\nr = Result()",
    )
    assert code == 3, output
    assert "variant 'a'" in output
    assert "cannot be compared" in output and "Result" in output
    assert "__repr__" in output  # how to make it comparable


def test_check_output_file_compares_the_file_each_command_writes(tmp_path: Path) -> None:
    """The same stdout everywhere; only the file differs (b writes 43)."""
    write = "sh -c 'echo done; echo ${V:-42} > out.txt'"
    done = perflab(
        *("run", "--cmd", write, "-v", "a", "-v", "b env.V=43", "-v", "c env.X=1"),
        *("--check-output", "out.txt", "--json", "out.json", "--store", "s.db", *FAST),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    verdicts = {c["variant"]: c for c in report["comparisons"]}
    assert verdicts["b"]["verdict"] == "invalid"
    assert verdicts["b"]["output_check"]["expression"] == "file out.txt"
    assert verdicts["c"]["verdict"] != "invalid"
    assert report["settings"]["check_output_file"] == "out.txt"
