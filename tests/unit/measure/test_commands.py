"""How a command's words become the argv it runs: through a shell or split without one."""

from __future__ import annotations


def test_no_shell_splits_the_words_and_expands_nothing() -> None:
    from perflab.measure.commands import command_argv

    assert command_argv("echo 'a b' $HOME") == ("/bin/sh", "-c", "echo 'a b' $HOME")
    assert command_argv("echo 'a b' $HOME", shell="none") == ("echo", "a b", "$HOME")
