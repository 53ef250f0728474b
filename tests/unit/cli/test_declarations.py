"""cli.declarations: a command declared once (its text and its own options) becomes a subcommand
that takes `run`'s options too."""

from __future__ import annotations

import argparse

from perflab.cli.declarations import (
    EACH_EXAMPLE,
    RunLikeCommand,
    add_run_like_commands,
    each_option,
    option,
)


def test_a_declared_command_takes_run_s_options_and_its_own() -> None:
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--budget")
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    text = "walk a range\n\nEvery commit, in turn.\n\nexample:\n  perflab walk a..b"
    walk = RunLikeCommand("walk", text, (option("range_text"), each_option()))
    add_run_like_commands(commands, run, (walk,))
    args = parser.parse_args(["walk", "a..b", "--budget", "3", "--each", "python=x"])
    assert (args.command, args.range_text, args.budget, args.each) == (
        "walk",
        "a..b",
        "3",
        "python=x",
    )
    assert walk.texts() == (
        "walk a range",
        "Every commit, in turn.",
        "example:\n  perflab walk a..b",
    )


def test_every_each_option_shows_one_example() -> None:
    assert EACH_EXAMPLE in each_option().keywords["help"]
