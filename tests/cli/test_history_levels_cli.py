"""`perflab history --metric time` run again after new commits, through the real command line: the
new run measures the newest commit the store holds again, first, and the series is put on one
level through it (JSON `run_scales`, `levelled_value`); a third history, all read back from the
store, levels its runs alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_commands import CI_VARIABLES, FAST, perflab
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not (shutil.which("cc") and shutil.which("git")), reason="needs cc and git"),
]

PROG_C = "int main(void) { volatile unsigned s = 0; for (int i = 0; i < 2000000; i++) s += i; }\n"
BUILD = "cc -O1 -o prog prog.c"


def _history(repo: Path, tmp_path: Path, name: str) -> dict[str, Any]:
    out = tmp_path / name
    done = perflab(
        # a threshold no noise reaches (a 4x ratio was seen): no direct comparison adds runs
        "history", "good..main", "--metric", "time", "--threshold", "1000%", "--cmd", "./prog",
        "--build", BUILD, "--runs", "3", *FAST, "--cache-dir", str(tmp_path / "cache"),
        "--store", str(tmp_path / "p.db"), "--json", str(out), "-q",
        cwd=repo, without=CI_VARIABLES,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def test_a_history_run_again_levels_its_new_run_through_the_commit_it_shares(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"prog.c": PROG_C, ".gitignore": "prog\n"})
    git(repo, "tag", "good")
    tip = commit(repo, "a comment", {"prog.c": "/* 1 */\n" + PROG_C})
    first = _history(repo, tmp_path, "h1.json")
    assert [p["run_id"] for p in first["points"]] == [1, 1] and first["run_scales"] == []
    for number in (2, 3):
        commit(repo, f"comment {number}", {"prog.c": f"/* {number} */\n" + PROG_C})
    second = _history(repo, tmp_path, "h2.json")
    # the two new commits measured in a run of their own, with the old tip measured again
    assert second["measured_now"] == 2
    assert [p["run_id"] for p in second["points"]] == [1, 1, 2, 2]
    [scale] = second["run_scales"]
    assert (scale["run_id"], scale["against_run"], scale["shared_commit"]) == (2, 1, tip)
    assert scale["shared_ratio"] > 0  # under load: any ratio
    # scaled where the old tip's two figures differ beyond the series' noise, else as measured
    new = second["points"][2]
    if scale["moved"]:
        assert scale["scale"] == pytest.approx(scale["shared_ratio"])
        assert new["levelled_value"] == pytest.approx(new["value"] * scale["scale"])
    else:
        assert scale["scale"] == 1.0 and new["levelled_value"] is None
    assert any("through the commits consecutive runs share" in n for n in second["notes"])
    # all read back: the old tip's latest figure is now the second run's, levelled alike
    third = _history(repo, tmp_path, "h3.json")
    assert third["measured_now"] == 0
    assert [p["run_id"] for p in third["points"]] == [1, 2, 2, 2]
    [again] = third["run_scales"]
    assert (again["run_id"], again["against_run"]) == (2, 1)
    # the same two figures of the old tip (the noise, read from other neighbours, may differ)
    assert again["shared_ratio"] == pytest.approx(scale["shared_ratio"])
