from pathlib import Path

import pytest

from perflab.api import make_experiment
from perflab.plan.experiment_file import load_experiment
from perflab.plan.specs import expand_grid, parse_metrics, parse_variant
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind, Metric


def test_variant_words_are_split_like_a_shell() -> None:
    variant = parse_variant(
        "after python=/envs/after/bin/python env.ATEN_CPU_CAPABILITY=avx2 "
        "'cmd=./bench --n 10' cwd=build build=\"make -j2\""
    )
    assert variant.name == "after"
    assert variant.python == "/envs/after/bin/python"
    assert variant.env == {"ATEN_CPU_CAPABILITY": "avx2"}
    assert variant.cmd == "./bench --n 10"
    assert variant.cwd == "build"
    assert variant.build == "make -j2"
    assert parse_variant("A").env == {}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty"),
        ("A colour=red", "unknown key 'colour'"),
        ("A python", "is not KEY=VALUE"),
        ("python=/x", "must start with a name"),
        ("A 'unclosed", "cannot split"),
        ("A env.=1", "unknown key"),
    ],
)
def test_bad_variants_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_variant(spec)
    assert caught.value.hint


def test_experiment_needs_distinct_variants_and_one_is_measured_alone() -> None:
    assert [v.name for v in make_experiment(stmt="pass", variants=["A"]).variants] == ["A"]
    assert [v.name for v in make_experiment(cmd="true").variants] == ["A"]
    both = make_experiment(stmt="pass", metrics="time,instructions,rss").settings.metrics
    assert both == ("time", "instructions", "rss")
    with pytest.raises(
        ConfigError, match="time, instructions and rss lenses only.* for counters\n"
    ):
        make_experiment(stmt="pass", metrics="time,counters")
    with pytest.raises(ConfigError, match="repeated: A"):
        make_experiment(stmt="pass", variants=["A", "A"])
    with pytest.raises(ConfigError, match="nothing to measure"):
        make_experiment(variants=["A", "B"])


def test_metrics() -> None:
    assert parse_metrics("time,instructions,time") == (Metric.TIME, Metric.INSTRUCTIONS)
    with pytest.raises(ConfigError, match="unknown metric 'speed'"):
        parse_metrics("time,speed")


def test_grid_substitutes_only_known_parameters() -> None:
    benchmarks = expand_grid(
        "add",
        stmt="f(x, {'k': 1})",
        setup="x = make($n); y = '$HOME'",
        cmd=None,
        params={"n": ["1", "100"]},
    )
    assert [b.name for b in benchmarks] == ["add[n=1]", "add[n=100]"]
    assert benchmarks[1].setup == "x = make(100); y = '$HOME'"
    assert benchmarks[0].stmt == "f(x, {'k': 1})"
    assert benchmarks[0].kind is BenchmarkKind.STATEMENT


def test_experiment_file(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        """
[settings]
metrics = ["time"]
budget = 5
equivalence_band = 0.02

[params]
n = [10, 1000]

[[variant]]
name = "before"

[[variant]]
name = "after"
env = { OMP_NUM_THREADS = "1" }
cwd = "sub"

[[benchmark]]
name = "sum"
stmt = "sum(range($n))"

[[benchmark]]
name = "true"
cmd = "true"
params = { n = [1] }
"""
    )
    experiment = load_experiment(path)
    assert [b.name for b in experiment.benchmarks] == ["sum[n=10]", "sum[n=1000]", "true[n=1]"]
    assert experiment.settings.budget_s == 5
    assert experiment.settings.equivalence_band == 0.02
    assert experiment.variants[1].env == {"OMP_NUM_THREADS": "1"}
    assert experiment.variants[1].cwd == str(tmp_path / "sub")
    overridden = make_experiment(path, budget_s=9, variants=["X", "Y"])
    assert overridden.settings.budget_s == 9
    assert [v.name for v in overridden.variants] == ["X", "Y"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[variant]]\nname='A'\n", "no \\[\\[benchmark\\]\\]"),
        ("not toml at all [", "not valid TOML"),
        ("[settings]\nbudgett = 3\n", "unknown setting 'budgett'"),
        ("[settings]\nbudget = -1\n", "budget must be positive"),
        ("[[variant]]\nname='A'\n[[variant]]\nname='B'\nflavour='x'\n", "unknown key"),
        (
            "[[variant]]\nname='A'\n[[variant]]\nname='B'\n[[benchmark]]\nname='x'\n",
            "neither stmt nor cmd",
        ),
        ("color = 1\n", "unknown top-level key"),
    ],
)
def test_malformed_experiment_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_experiment(path)


def test_missing_experiment_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_experiment(tmp_path / "nope.toml")


def test_layers_are_validated() -> None:
    from perflab.plan.specs import parse_layer

    assert parse_layer("kernel=at::native") == ("kernel", "at::native")
    with pytest.raises(ConfigError, match="NAME=REGEX"):
        parse_layer("kernel")
    with pytest.raises(ConfigError, match="not a regular expression"):
        make_experiment(stmt="pass", variants=["A", "B"], layers=[("bad", "(unclosed")])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('pin = "no"', "'pin' must be a boolean"),
        ('cpu = "1"', "'cpu' must be a whole number"),
        ('budget = "3"', "'budget' must be a number"),
        ("budget = true", "'budget' must be a number"),
    ],
)
def test_setting_types_are_checked(tmp_path: Path, setting: str, message: str) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        f"[settings]\n{setting}\n[[variant]]\nname='A'\n[[variant]]\nname='B'\n"
        "[[benchmark]]\nname='x'\nstmt='pass'\n"
    )
    with pytest.raises(ConfigError, match=message):
        load_experiment(path)


def test_errors_name_the_variant_once() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_variant("B foo=1")
    assert str(caught.value).count("'B'") == 1
    with pytest.raises(ConfigError, match="unknown metric 'speed'"):
        parse_metrics("speed")


def test_a_variants_python_is_relative_to_the_file_unless_its_cwd_is_given(
    tmp_path: Path,
) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        """
[[variant]]
name = "a"
python = "envs/a/bin/python"

[[variant]]
name = "b"
python = "envs/b/bin/python"
cwd = "sub"

[[benchmark]]
name = "x"
stmt = "pass"
"""
    )
    a, b = load_experiment(path).variants
    assert a.python == str(tmp_path / "envs/a/bin/python")
    assert (b.python, b.cwd) == ("envs/b/bin/python", str(tmp_path / "sub"))
