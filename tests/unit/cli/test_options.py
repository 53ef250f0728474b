"""argparse -> the typed options a run-like command calls the library with (cli/options.py)."""

from __future__ import annotations

from pathlib import Path

from perflab.cli.options import build_parser, run_options


def test_a_run_s_words_become_its_typed_options(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    args = build_parser().parse_args(
        ["run", "--stmt", "f()", "-v", "A", "-v", "B", "--store", str(store), "--budget", "5"]
    )
    options = run_options(args)
    assert (options.stmt, options.variants, options.cmd) == ("f()", ("A", "B"), None)
    assert options.settings["budget_s"] == 5 and options.output.store == store
