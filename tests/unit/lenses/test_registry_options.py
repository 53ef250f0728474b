"""A lens's options are its descriptor's: the CLI options, the experiment-file keys, the API's
keywords and the stored JSON follow from its declaration, with no change to the core
settings (records/model.py) or the command line's code."""

from __future__ import annotations

import dataclasses

import pytest

from perflab import api
from perflab.cli.options import build_parser, run_options
from perflab.engine.reusable_runs import what_is_measured
from perflab.lenses import registry
from perflab.lenses.registry import lens_option
from perflab.plan.experiment_file import experiment_from_mapping
from perflab.records.errors import ConfigError, RetiredSettingWarning
from perflab.records.kinds import Metric
from perflab.records.settings import LensOption, SettingKind, Settings, SettingSpec

ROUNDS = LensOption(
    "rounds",
    3,
    SettingSpec(
        SettingKind.WHOLE,
        "time: rounds of the new lens option",
        key="rounds",
        flags=("--rounds",),
        check=lambda v: None if v >= 1 else "rounds must be at least 1",
    ),
)


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The time lens declares one more option, as a lens added tomorrow would."""
    time, *others = registry.DESCRIPTORS
    with_rounds = dataclasses.replace(time, options=(*time.options, ROUNDS))
    monkeypatch.setattr(registry, "DESCRIPTORS", (with_rounds, *others))


@pytest.mark.usefixtures("declared")
def test_a_declared_option_is_a_flag_a_key_a_keyword_and_a_stored_field() -> None:
    args = build_parser().parse_args(
        ["run", "--cmd", "true", "-v", "A", "-v", "B", "--rounds", "5"]
    )
    given = run_options(args).settings
    assert given == {"rounds": 5}
    by_flag = api.make_experiment(cmd="true", variants=["A", "B"], **given).settings
    by_keyword = api.make_experiment(cmd="true", variants=["A", "B"], rounds=5).settings
    by_key = experiment_from_mapping(
        {
            "settings": {"rounds": 5},
            "variant": [{"name": "A"}, {"name": "B"}],
            "benchmark": [{"name": "b", "cmd": "true"}],
        }
    ).settings
    assert by_flag == by_keyword == by_key
    assert lens_option(by_flag, "rounds") == 5
    assert by_flag.to_json()["rounds"] == 5
    assert Settings.from_json(by_flag.to_json()) == by_flag
    # not given: the declared default, stored too
    plain = api.make_experiment(cmd="true", variants=["A", "B"]).settings
    assert lens_option(plain, "rounds") == 3 and plain.to_json()["rounds"] == 3
    with pytest.raises(ConfigError, match="rounds must be at least 1"):
        api.make_experiment(cmd="true", variants=["A", "B"], rounds=0)


def test_an_option_not_given_has_its_lens_s_default() -> None:
    assert lens_option(Settings(), "cache_sim") is False
    assert lens_option(Settings(), "analysis_cache") is True
    simulated = Settings().with_options(cache_sim=True, events=["cycles"])
    assert lens_option(simulated, "cache_sim") is True
    assert simulated.option("events") == ("cycles",)  # lists become tuples: records are frozen


def test_an_option_of_a_lens_not_selected_is_refused() -> None:
    with pytest.raises(ConfigError, match="--cache-sim is an option of the instructions lens"):
        api.make_experiment(cmd="true", variants=["A", "B"], cache_sim=True)
    # the memory lens reads the instructions lens's --region too
    memory = api.make_experiment(cmd="true", variants=["A", "B"], metrics="memory", region="kernel")
    assert lens_option(memory.settings, "region") == "kernel"


def test_the_retired_keyword_is_accepted_with_a_warning() -> None:
    with pytest.warns(RetiredSettingWarning, match="does nothing"):
        experiment = api.make_experiment(
            cmd="true", variants=["A", "B"], min_measurements_anyway=True
        )
    assert experiment.settings == api.make_experiment(cmd="true", variants=["A", "B"]).settings
    assert Metric.TIME in experiment.settings.metrics


def test_runs_differing_only_in_an_amount_option_measure_the_same_quantity() -> None:
    """history and bisect reuse a stored run when it measured the same quantity: the analysis
    cache decides how much is computed, not what; --cache-sim changes what is counted."""
    base = api.make_experiment(cmd="true", variants=["A", "B"], metrics="instructions")
    no_cache = dataclasses.replace(base, settings=base.settings.with_options(analysis_cache=False))
    simulated = dataclasses.replace(base, settings=base.settings.with_options(cache_sim=True))
    assert what_is_measured(no_cache) == what_is_measured(base)
    assert what_is_measured(simulated) != what_is_measured(base)
    # an older run's settings without an option had that option's default
    older = dataclasses.replace(base, settings=dataclasses.replace(base.settings, lens_options=()))
    assert what_is_measured(older) == what_is_measured(base)
