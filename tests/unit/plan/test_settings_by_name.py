"""One settings schema: the CLI, experiment files, the API and the JSON all derive from it."""

from __future__ import annotations

import dataclasses

import pytest

from perflab import api
from perflab.cli.options import build_parser, run_options
from perflab.lenses.registry import declared_options
from perflab.plan.experiment_file import experiment_from_mapping
from perflab.plan.settings_by_name import RETIRED, setting_default, setting_keys, user_setting_specs
from perflab.records.errors import ConfigError
from perflab.records.kinds import Metric
from perflab.records.settings import RETIRED_SETTINGS, Settings, setting_specs
from perflab.store.codec import experiment_from_json, experiment_to_json

CHANGED = Settings(
    metrics=(Metric.TIME, Metric.INSTRUCTIONS, Metric.COUNTERS, Metric.ASM),
    budget_s=3.5,
    strict_budget=True,
    target_precision=0.02,
    equivalence_band=0.03,
    confidence=0.9,
    pin=False,
    cpu=0,
    min_generations=3,
    sample_target_ms=2.0,
    warmup_blocks=1,
    shell="none",
    show_output=True,
    ignore_failure=True,
    prepare="sync",
    runs=5,
    min_runs=3,
    max_runs=9,
    preempted="exclude",
    sample_timeout_s=9.0,
    build_timeout_s=30.0,
    seed=7,
    check="f(x)",
    check_rtol=0.001,
    check_output=True,
    check_output_file="out.bin",
    ray=True,
    ray_address="head.example:6379",
    share_caches=True,
).with_options(
    analysis_cache=False,
    events=("task-clock", "page-faults"),
    region="main",
    cache_sim=True,
    symbols=("foo{1,2}", "bar"),
    layers=(("python", "libpython"), ("torch", "libtorch")),
)


def _value(settings: Settings, name: str) -> object:
    """A core field's or a lens option's value (its declared default when not given)."""
    options = declared_options()
    return options[name].value(settings) if name in options else getattr(settings, name)


def test_every_user_setting_has_a_file_key_and_an_api_name() -> None:
    specs = setting_specs()
    assert set(specs) == {f.name for f in dataclasses.fields(Settings)} - {"lens_options"}
    keys = setting_keys()
    assert set(keys.values()) == api.SETTINGS_FIELDS
    assert set(api.SETTINGS_FIELDS) == set(user_setting_specs()) - {"paired_layout"}
    assert "paired_layout" not in api.SETTINGS_FIELDS  # internal
    # every value in CHANGED differs from the default, so the round trips below test each field
    for name in api.SETTINGS_FIELDS - set(RETIRED):
        assert _value(CHANGED, name) != setting_default(name), name


def test_json_round_trip() -> None:
    assert Settings.from_json(CHANGED.to_json()) == CHANGED
    assert CHANGED.to_json()["layers"] == [["python", "libpython"], ["torch", "libtorch"]]


def test_retired_settings_are_accepted_and_stored_alike() -> None:
    assert set(RETIRED) == set(RETIRED_SETTINGS)


def test_lens_options_are_stored_where_they_always_were() -> None:
    """The stored JSON keeps every lens option beside the core fields, and the retired
    min_measurements_anyway (false): older readers find the fields they knew, and older
    stored settings load, their lens options the lenses' own."""
    stored = CHANGED.to_json()
    assert stored["events"] == ["task-clock", "page-faults"]
    assert stored["cache_sim"] is True and stored["analysis_cache"] is False
    assert stored["min_measurements_anyway"] is False
    assert "lens_options" not in stored
    older = {**stored, "min_measurements_anyway": True}
    assert Settings.from_json(older) == CHANGED
    # every declared option is stored, given or not
    made = api.make_experiment(cmd="true", variants=["A", "B"]).settings.to_json()
    assert set(declared_options()) <= set(made)
    assert made["cache_sim"] is False and made["region"] is None and made["layers"] == []


def test_experiment_file_keys() -> None:
    raw = {
        "metrics": "time,instructions,counters,asm",
        "budget": 3.5,
        "strict_budget": True,
        "min_measurements_anyway": True,  # retired: accepted, with a warning
        "precision": 0.02,
        "equivalence_band": 0.03,
        "confidence": 0.9,
        "pin": False,
        "cpu": 0,
        "min_generations": 3,
        "sample_ms": 2,
        "warmup_blocks": 1,
        "shell": "none",
        "show_output": True,
        "ignore_failure": True,
        "prepare": "sync",
        "runs": 5,
        "min_runs": 3,
        "max_runs": 9,
        "preempted": "exclude",
        "sample_timeout": 9,
        "build_timeout": 30,
        "seed": 7,
        "events": ["task-clock", "page-faults"],
        "check": "f(x)",
        "check_rtol": 0.001,
        "check_output": True,
        "check_output_file": "out.bin",
        "ray": True,
        "ray_address": "head.example:6379",
        "share_caches": True,
        "analysis_cache": False,
        "region": "main",
        "cache_sim": True,
        "symbols": ["foo{1,2}", "bar"],
        "layers": {"python": "libpython", "torch": "libtorch"},
    }
    assert set(raw) == set(setting_keys())
    with pytest.warns(FutureWarning, match="min_measurements_anyway .* does nothing"):
        experiment = experiment_from_mapping(
            {
                "settings": raw,
                "variant": [{"name": "A"}, {"name": "B"}],
                "benchmark": [{"name": "b", "cmd": "true"}],
            }
        )
    assert experiment.settings == CHANGED
    assert experiment_from_json(experiment_to_json(experiment)) == experiment


def test_command_line_options() -> None:
    args = build_parser().parse_args(
        [
            "run", "--cmd", "true", "-v", "A", "-v", "B",
            "-m", "time,instructions,counters,asm", "--budget", "3.5",
            "--strict-budget", "--min-measurements-anyway", "--precision", "0.02",
            "--band", "0.03", "--confidence", "0.9", "--no-pin", "--cpu", "0",
            "--min-generations", "3", "--sample-ms", "2", "--sample-timeout", "9", "--seed", "7",
            "--build-timeout", "30", "--preempted", "exclude", "--warmup", "1",
            "-N", "--show-output", "-i",
            "--prepare", "sync", "--runs", "5", "--min-runs", "3", "--max-runs", "9",
            "--check", "f(x)", "--check-rtol", "0.001", "--check-output", "out.bin",
            "--ray", "head.example:6379", "--share-caches",
            "--no-analysis-cache",
            "--events", "task-clock,page-faults", "--region", "main", "--cache-sim",
            "--symbol", "foo{1,2}", "--symbol", "bar",
            "--layer", "python=libpython", "--layer", "torch=libtorch",
        ]
    )  # fmt: skip
    options = run_options(args)
    with pytest.warns(FutureWarning, match="--min-measurements-anyway"):
        experiment = api.make_experiment(cmd="true", variants=["A", "B"], **options.settings)
    assert experiment.settings == CHANGED


def test_options_not_given_are_not_settings() -> None:
    args = build_parser().parse_args(["run", "--cmd", "true", "-v", "A", "-v", "B"])
    assert run_options(args).settings == {}


def test_api_accepts_text_lists_and_tables() -> None:
    experiment = api.make_experiment(
        cmd="true",
        variants=["A", "B"],
        metrics=["time", "instructions", "counters", "asm"],
        events="task-clock, page-faults",
        symbols=["foo{1,2}", "bar"],
        layers={"python": "libpython", "torch": "libtorch"},
    )
    for name in ("events", "symbols", "layers"):
        assert _value(experiment.settings, name) == _value(CHANGED, name), name


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"budget_s": 0}, "budget must be positive"),
        ({"layers": ["broken"]}, "is not NAME=REGEX"),
        ({"layers": {"x": "("}}, "is not a regular expression"),
        ({"metrics": "speed"}, "unknown metric"),
        ({"events": "task-clock"}, "--events is an option of the counters lens"),
    ],
)
def test_api_validates(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        api.make_experiment(cmd="true", variants=["A", "B"], **settings)  # type: ignore[arg-type]
