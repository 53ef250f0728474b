"""hyperfine's options on the shorthand of commands (issue 38, item 2): parsed into perflab's
settings and parameter grid, bad input refused with a message."""

from __future__ import annotations

import pytest

from perflab.cli.main import parse_command_line
from perflab.cli.parameters import scan_values
from perflab.records.errors import ConfigError
from perflab.records.settings import Settings


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


def test_no_shell_splits_the_words_and_expands_nothing() -> None:
    from perflab.measure.commands import command_argv

    assert command_argv("echo 'a b' $HOME") == ("/bin/sh", "-c", "echo 'a b' $HOME")
    assert command_argv("echo 'a b' $HOME", shell="none") == ("echo", "a b", "$HOME")


def test_the_options_are_settings_with_help() -> None:
    from perflab.cli.options import shorthand_parser

    args = parse_command_line(["-i", "-N", "--show-output", "--runs", "1", "true"])
    settings = {k: getattr(args, k) for k in ("ignore_failure", "shell", "show_output", "runs")}
    assert settings == {"ignore_failure": True, "shell": "none", "show_output": True, "runs": 1}
    text = " ".join(shorthand_parser().format_help().split())
    for said in (
        "-i, --ignore-failure",
        "-N commands: no shell",
        "--shell auto|none",
        "--show-output",
        "1: a quick look",
        "--parameter-scan NAME MIN MAX",
        "-D STEP, --parameter-step-size STEP",
        "--parameter-list NAME VALUES",
    ):
        assert said in text, said


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--shell", "bash", "true"], "shell must be auto or none, not 'bash'"),
        (["--runs", "0", "true"], "runs must be at least 1"),
        (["--parameter-scan", "n", "3", "1", "true"], "MAX is smaller"),
        (["-i", "run", "--stmt", "pass"], "is a perflab command"),
    ],
)
def test_bad_input_exits_non_zero_with_a_message_and_no_traceback(
    words: list[str], said: str, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from perflab.cli.main import main

    code = main([*words, "--store", f"{tmp_path}/s.db"])
    err = capsys.readouterr().err
    assert code != 0 and said in " ".join(err.split()) and "Traceback" not in err


def test_the_time_lens_measures_a_failing_command_with_ignore_failure_and_says_so() -> None:
    from perflab.lenses.time.commands import failure_ignored
    from perflab.measure.commands import CommandRun

    def run(returncode: int | None, timed_out: bool = False) -> CommandRun:
        return CommandRun(
            wall_ns=1000,
            returncode=returncode,
            timed_out=timed_out,
            user_ns=0,
            sys_ns=0,
            maxrss_kb=0,
            cpu=None,
            stderr_tail="",
        )

    ignore = Settings(ignore_failure=True).ignore_failure
    assert failure_ignored(run(3), ignore_failure=ignore)
    assert not failure_ignored(run(0), ignore_failure=ignore)  # nothing to ignore
    # killed by a signal: not the command's time
    assert not failure_ignored(run(-9), ignore_failure=ignore)
    assert not failure_ignored(run(None, timed_out=True), ignore_failure=ignore)
    assert not failure_ignored(run(3), ignore_failure=Settings().ignore_failure)


def test_one_run_is_shown_without_an_interval() -> None:
    """--runs 1: one group has no spread; the table says so instead of [0 ns, inf s]."""
    import math

    from perflab.lenses.fragments import measurement_table
    from perflab.records.kinds import Metric
    from perflab.records.model import Measurement

    def measured(groups: int, low: float, high: float) -> Measurement:
        return Measurement(
            benchmark="b",
            metric=Metric.TIME,
            variant="A",
            value=1e6,
            ci_low=low,
            ci_high=high,
            unit="ns",
            n_groups=groups,
            group_name="batch",
            mean=1e6,
            stddev=math.nan,
            median=1e6,
            min=1e6,
            max=1e6,
            times=(1e6,) * groups,
        )

    (once,) = measurement_table([measured(1, 0.0, math.inf)]).rows
    assert "(one run: no interval)" in once[2].text and "inf" not in once[2].text
    (twice,) = measurement_table([measured(2, 0.9e6, 1.1e6)]).rows
    assert "[" in twice[2].text
