"""The settings that would silently do nothing in an experiment are refused, as the settings
schema declares them."""

import pytest

from perflab import api
from perflab.plan.experiment_arguments import (
    SOURCE_KEYWORDS,
    BenchmarkSources,
    sources_and_settings,
)
from perflab.plan.suite_source import SuiteKind, SuiteSource
from perflab.records.errors import ConfigError
from perflab.records.kinds import BenchmarkKind
from perflab.records.settings import setting_specs

SUBJECT = "perflab.plan.experiment_arguments"

COMMAND_ONLY_VALUES = {
    "prepare": "sync",
    "runs": 5,
    "min_runs": 3,
    "max_runs": 9,
    "shell": "none",
    "show_output": True,
    "ignore_failure": True,
}


def test_the_schema_declares_which_settings_apply_to_commands_only() -> None:
    command_only = {n for n, s in setting_specs().items() if s.applies_to is BenchmarkKind.COMMAND}
    assert command_only == set(COMMAND_ONLY_VALUES)


@pytest.mark.parametrize(("name", "value"), sorted(COMMAND_ONLY_VALUES.items()))
def test_a_command_only_setting_is_refused_for_statements(name: str, value: object) -> None:
    with pytest.raises(ConfigError) as refused:
        api.make_experiment(stmt="pass", variants=["A", "B"], **{name: value})
    assert str(refused.value).startswith(
        "--prepare, --runs, --min-runs, --max-runs, --shell (-N), --show-output and "
        "--ignore-failure (-i) apply to commands (--cmd), and this experiment has none"
    )


@pytest.mark.parametrize(("name", "value"), sorted(COMMAND_ONLY_VALUES.items()))
def test_a_command_only_setting_is_accepted_for_commands(name: str, value: object) -> None:
    made = api.make_experiment(cmd="true", variants=["A", "B"], **{name: value})
    assert getattr(made.settings, name) == value


def test_the_suite_keywords_become_one_suite_record_and_the_rest_are_settings() -> None:
    keywords = {"pytest": "tests/", "pytest_filter": "sort", "budget_s": 3}
    sources, settings = sources_and_settings(None, keywords)
    assert sources.suite == SuiteSource(kind=SuiteKind.PYTEST, path="tests/", filter="sort")
    assert not sources.defined()  # a suite alone: no file, no inline benchmark
    assert settings == {"budget_s": 3}


def test_the_source_keywords_are_told_from_the_settings_by_name() -> None:
    assert {"stmt", "cmd", "params", "suite", "gbench_filter"} <= SOURCE_KEYWORDS
    assert not {"experiment_file", "build", "variants", "budget_s"} & SOURCE_KEYWORDS


def test_the_sources_given_as_one_record_make_the_keywords_experiment() -> None:
    record = BenchmarkSources(stmt="x = $n", setup="pass", name="assign", params={"n": [1, 2]})
    by_record = api.make_experiment(benchmarks=record, variants=["A", "B"], budget_s=2, cmd=None)
    by_keywords = api.make_experiment(
        stmt="x = $n", setup="pass", name="assign", params={"n": [1, 2]}, variants=["A", "B"],
        budget_s=2,
    )  # fmt: skip
    assert by_record == by_keywords and by_record.settings.budget_s == 2


def test_a_source_keyword_beside_the_record_is_refused() -> None:
    with pytest.raises(ConfigError, match="stmt cannot be given beside it"):
        api.make_experiment(benchmarks=BenchmarkSources(cmd="true"), stmt="pass")
    with pytest.raises(ConfigError, match="experiment_file cannot be given beside it"):
        api.make_experiment("perflab.toml", benchmarks=BenchmarkSources(cmd="true"))
