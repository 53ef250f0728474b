"""What the user types, parsed (plan/specs.py): variant specs, names, metrics, parameters, layers
and the grid of benchmarks they make; each refusal before anything runs, with its fix."""

from __future__ import annotations

import pytest

from perflab.plan.specs import (
    AVAILABLE_METRICS,
    check_keys_apply,
    check_variant_name,
    check_variants,
    expand_grid,
    parse_layer,
    parse_metrics,
    parse_param,
    parse_variant,
)
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.model import Benchmark, Variant


def test_a_variant_spec_is_a_name_and_shell_words_of_key_value() -> None:
    variant = parse_variant(
        "after python=/envs/after/bin/python env.OMP_NUM_THREADS=1 'cwd=/my dir' git=main "
        "apply=abc123,fix.patch"
    )
    assert variant == Variant(
        "after",
        python="/envs/after/bin/python",
        env={"OMP_NUM_THREADS": "1"},
        cwd="/my dir",
        git="main",
        apply=("abc123", "fix.patch"),
    )
    assert parse_variant("A") == Variant("A")


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("", "is empty"),
        ("python=/x", "must start with a name"),
        ("A nokey", "is not KEY=VALUE"),
        ("A colour=red", "unknown key 'colour'"),
        ("A env=x", "unknown key 'env'"),
        ("A python=", "python= has no value"),
        ("A 'unclosed", "cannot split variant"),
        ("A apply=fix.patch", "apply= applies changes on top of a git= ref"),
        ("A git=--all", "begins with '-'"),
        ("a;b", "cannot contain ';'"),
    ],
)
def test_a_spec_that_cannot_be_a_variant_is_refused(spec: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_variant(spec)


def test_a_variant_name_is_letters_digits_and_a_few_safe_marks() -> None:
    for name in ("after", "py3.12", "résumé", "x+y", "main@2024:1", "-O2"):
        assert check_variant_name(name, "here") == name
    with pytest.raises(ConfigError, match="cannot contain ' '"):
        check_variant_name("a b", "here")
    with pytest.raises(ConfigError, match="must be a string"):
        check_variant_name(3, "here")


def test_variants_are_at_least_one_and_named_apart() -> None:
    assert check_variants([Variant("A")]) == (Variant("A"),)
    with pytest.raises(ConfigError, match="at least one variant"):
        check_variants([])
    with pytest.raises(ConfigError, match="repeated: A"):
        check_variants([Variant("A"), Variant("B"), Variant("A")])


def test_a_key_that_changes_nothing_of_the_benchmarks_is_refused() -> None:
    statements, commands = [Benchmark("s", stmt="f()")], [Benchmark("c", cmd="prog")]
    with pytest.raises(ConfigError, match="cmd= applies to command benchmarks"):
        check_keys_apply([Variant("A", cmd="other")], statements)
    with pytest.raises(ConfigError, match="python= applies to statement benchmarks"):
        check_keys_apply([Variant("A", python="python3")], commands)
    with pytest.raises(ConfigError, match="env.X holds a NUL byte"):
        check_keys_apply([Variant("A", env={"X": "a\0b"})], commands)
    with pytest.raises(ConfigError, match="cmd holds a NUL byte"):
        check_keys_apply([Variant("A")], [Benchmark("c", cmd="a\0b")])
    check_keys_apply([Variant("A", cmd="x", python="py")], statements + commands)


def test_python_applies_to_a_command_its_interpreter_runs() -> None:
    # an asv suite of timeraw_ benchmarks alone: `python -c CODE`, run by each variant's python=
    raw = Benchmark("r", cmd="python3", cmd_args="-c pass", cmd_is_python=True)
    check_keys_apply([Variant("A", python="/opt/py/bin/python")], [raw])


def test_metrics_are_the_lenses_in_order_each_once() -> None:
    assert parse_metrics("time,instructions") == (Metric.TIME, Metric.INSTRUCTIONS)
    assert parse_metrics(["instructions", "time, instructions"]) == (
        Metric.INSTRUCTIONS,
        Metric.TIME,
    )
    with pytest.raises(ConfigError, match="unknown metric 'speed'") as raised:
        parse_metrics("time,speed")
    assert all(m.value in (raised.value.hint or "") for m in AVAILABLE_METRICS)
    with pytest.raises(ConfigError, match="no metric given"):
        parse_metrics(" , ")


def test_parameters_and_layers_are_name_equals_values() -> None:
    assert parse_param("n=1, 100,10000") == ("n", ["1", "100", "10000"])
    assert parse_layer("kernel=at::native|c10=x") == ("kernel", "at::native|c10=x")
    for bad in ("n", "1n=2", "n="):
        with pytest.raises(ConfigError, match="is not NAME=V1,V2"):
            parse_param(bad)
    with pytest.raises(ConfigError, match="is not NAME=REGEX"):
        parse_layer("=x")


def test_a_grid_is_one_benchmark_per_point_named_after_it() -> None:
    grid = expand_grid(
        "sort", stmt="sorted(x)", setup="x = list(range($n)) * ${k}", cmd=None,
        params={"n": ["10", "1000"], "k": ["2"]},
    )  # fmt: skip
    assert [b.name for b in grid] == ["sort[n=10,k=2]", "sort[n=1000,k=2]"]
    assert grid[1].setup == "x = list(range(1000)) * 2" and grid[1].params == {
        "n": "1000",
        "k": "2",
    }
    (plain,) = expand_grid("home", stmt=None, setup="", cmd="ls $HOME", params={})
    assert (plain.name, plain.cmd, plain.setup) == ("home", "ls $HOME", "pass")


@pytest.mark.parametrize(
    ("stmt", "cmd", "params", "said"),
    [
        (None, None, {}, "neither stmt nor cmd"),
        ("f()", "prog", {}, "both stmt and cmd"),
        ("f()", None, {"n": []}, "empty value list"),
    ],
)
def test_a_benchmark_that_is_not_one_is_refused(
    stmt: str | None, cmd: str | None, params: dict[str, list[str]], said: str
) -> None:
    with pytest.raises(ConfigError, match=said):
        expand_grid("b", stmt=stmt, setup="", cmd=cmd, params=params)
