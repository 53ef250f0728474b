"""Bad input on the command line exits non-zero with a message, never a traceback."""

from __future__ import annotations

import pytest


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
