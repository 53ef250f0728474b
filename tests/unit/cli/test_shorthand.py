"""The shorthand's options (hyperfine's among them) are settings, each with its help."""

from __future__ import annotations

from perflab.cli.main import parse_command_line


def test_the_options_are_settings_with_help() -> None:
    from perflab.cli.shorthand import shorthand_parser

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


def test_a_first_word_that_is_a_command_is_that_command_and_dash_dash_a_program() -> None:
    from perflab.cli.shorthand import is_shorthand

    assert not is_shorthand(["list"], ["run", "list"])
    assert is_shorthand(["--", "list"], ["run", "list"])
    assert is_shorthand(["./bench one"], ["run", "list"])
