"""perflab's exit statuses (cli/exits.py) agree with its errors' own and with what a shell
reports for a signal."""

from __future__ import annotations

import signal

from perflab.cli import exits
from perflab.records.errors import BenchmarkFailedError, ConfigError, PerflabError, StoreError


def test_an_errors_status_is_the_one_the_commands_document() -> None:
    assert exits.EXIT_BAD_INPUT == PerflabError.exit_code == ConfigError.exit_code
    assert exits.EXIT_DAMAGED_STORE == StoreError.exit_code
    assert exits.EXIT_NOT_MEASURED == BenchmarkFailedError.exit_code


def test_a_signal_ends_with_the_status_a_shell_gives_it() -> None:
    assert exits.EXIT_INTERRUPTED == 128 + signal.SIGINT
    assert exits.EXIT_BROKEN_PIPE == 128 + signal.SIGPIPE


def test_an_answer_is_told_apart_from_a_failure() -> None:
    answers = {exits.EXIT_VERDICT, exits.EXIT_REGRESSION, exits.EXIT_NOT_FOUND}
    assert exits.EXIT_OK not in answers
    assert answers.isdisjoint({exits.EXIT_BAD_INPUT, exits.EXIT_NOT_MEASURED})
