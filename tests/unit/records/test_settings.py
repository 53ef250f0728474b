"""A run's settings (records/settings.py): lens options beside the core fields, immutable and
stored by name; a newer perflab's options kept; the command blocks the runs settings ask for;
every problem said in words."""

from __future__ import annotations

from perflab.records.kinds import Metric
from perflab.records.settings import (
    RETIRED_SETTINGS,
    SettingKind,
    Settings,
    normalise_setting,
)


def test_lens_options_are_immutable_and_replaced_by_name() -> None:
    settings = Settings().with_options(events=["cycles"], symbols=["a"]).with_options(symbols=["b"])
    assert settings.option("events") == ("cycles",) and settings.option("symbols") == ("b",)
    assert settings.option("region", "all") == "all"  # not given: the caller's default
    assert settings.lens_options == (("events", ("cycles",)), ("symbols", ("b",)))


def test_stored_by_name_and_read_back_with_a_newer_perflabs_options_kept() -> None:
    settings = Settings(budget_s=20, metrics=(Metric.TIME, Metric.COUNTERS)).with_options(
        events=("cycles",)
    )
    stored = settings.to_json()
    assert stored["metrics"] == ["time", "counters"] and stored["events"] == ["cycles"]
    assert all(stored[name] == value for name, value in RETIRED_SETTINGS.items())
    assert Settings.from_json(stored) == settings
    newer = Settings.from_json({**stored, "future_option": [1, 2]})
    assert newer.option("future_option") == (1, 2)


def test_text_lists_and_tables_become_the_types_settings_hold() -> None:
    assert normalise_setting(SettingKind.METRICS, "time, counters,") == (
        Metric.TIME,
        Metric.COUNTERS,
    )
    assert normalise_setting(SettingKind.TEXTS, ["a", " b "]) == ("a", "b")
    assert normalise_setting(SettingKind.LAYERS, {"py": "^_Py"}) == (("py", "^_Py"),)
    assert normalise_setting(SettingKind.WHOLE, 3) == 3


def test_the_runs_settings_bound_a_commands_blocks() -> None:
    assert Settings(runs=1, warmup_blocks=2).min_command_blocks == 3  # one run: no interval
    assert Settings(runs=10, warmup_blocks=1).min_command_blocks == 11
    assert Settings(runs=10, warmup_blocks=1).max_command_blocks == 11
    assert Settings(min_runs=5, max_runs=50, warmup_blocks=0).min_command_blocks == 5
    assert Settings(min_runs=5, max_runs=50, warmup_blocks=0).max_command_blocks == 50
    default = Settings(warmup_blocks=1, min_generations=1)
    assert default.min_command_blocks == 3 and default.max_command_blocks is None


def test_every_problem_is_said() -> None:
    assert Settings().problems() == []
    said = Settings(min_runs=9, max_runs=3, warmup_blocks=-1).problems()
    assert "min_runs (9) is more than max_runs (3)" in said
    assert any("warmup_blocks (--warmup) cannot be negative" in p for p in said)
