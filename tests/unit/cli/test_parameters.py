"""hyperfine's parameter options on the shorthand of commands (--parameter-scan,
--parameter-list): parsed into perflab's parameter grid, bad ones refused with a message."""

from __future__ import annotations

import pytest

from perflab.cli.main import parse_command_line
from perflab.cli.parameters import scan_values
from perflab.records.errors import ConfigError


def test_a_scan_counts_in_decimal_steps_up_to_max() -> None:
    assert scan_values("1", "3", "1") == ["1", "2", "3"]
    assert scan_values("0.1", "0.3", "0.1") == ["0.1", "0.2", "0.3"]
    assert scan_values("0", "1", "0.4") == ["0", "0.4", "0.8"]
    assert scan_values("1", "20", "9.5") == ["1", "10.5", "20"]


@pytest.mark.parametrize(
    ("low", "high", "step", "said"),
    [
        ("3", "1", "1", "MAX is smaller"),
        ("1", "3", "0", "must be positive"),
        ("a", "3", "1", "MIN 'a' is not a number"),
        ("1", "inf", "1", "MAX 'inf' is not a number"),
        ("0", "1", "0.0001", "at most 1,000"),
    ],
)
def test_a_bad_scan_is_refused(low: str, high: str, step: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        scan_values(low, high, step)


def test_parameters_become_the_grid_with_hyperfine_placeholders() -> None:
    scan = ["--parameter-scan", "n", "1", "2"]
    args = parse_command_line([*scan, "--parameter-list", "mode", "a,b", "sleep 0.0{n} {mode}"])
    assert args.params == ["n=1,2", "mode=a,b"]
    assert args.cmd == "sleep 0.0${n} ${mode}"


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["-D", "2", "true"], "--parameter-scan, which is not given"),
        (["--parameter-list", "n", "1,,2", "true"], "empty value"),
        (["--parameter-list", "1n", "1", "true"], "not a name"),
        (["--parameter-list", "n", "1", "--parameter-list", "n", "2", "true"], "more than once"),
    ],
)
def test_bad_parameters_are_refused(words: list[str], said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_command_line(words)
