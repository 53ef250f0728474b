"""`perflab bisect`, `check` and `history` take --metric as `run` does (one lens, "time,
instructions", a repeated --metric; the first decides), through the real command line, on a
two-commit repository made here whose change costs more instructions and takes less time: each
answer says that the lenses disagree, and the CI's default gate does not fail the speed-up."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import cli_commands
from tests.support.cli_commands import CI_VARIABLES
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
        reason="needs valgrind, cc and git",
    ),
]

PROG_C = """#include <stdio.h>
#include <unistd.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    if (WAIT_US) usleep(WAIT_US);
    printf("%u\\n", s);
    return 0;
}
"""
BUILD = "cc -O1 -o prog prog.c"
CHANGE = "more work, no wait"  # three times the loop, without the 30 ms sleep


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("lenses") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"prog.c": PROG_C, "work.h": "#define N 20000\n#define WAIT_US 30000\n",
                          ".gitignore": "prog\n"})  # fmt: skip
    git(repo, "tag", "good")
    commit(repo, CHANGE, {"work.h": "#define N 60000\n#define WAIT_US 0\n"})
    return repo


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One store per measurement that several tests make alike (the command and its lenses):
    the first of them measures, the others read its runs back as a user's second bisect or
    history does, so each form of --metric is still parsed and answered through the real
    command line. A test run alone measures for itself. (`check` always measures afresh.)"""
    folder = tmp_path_factory.mktemp("stores")
    return {
        key: folder / f"{key.replace(' ', '-')}.db"
        for key in ("bisect time", "bisect instructions", "history time")
    }


def perflab(
    *args: str, cwd: Path, cache: Path, store: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    done = cli_commands.perflab(
        *args, "--cmd", "./prog", "--build", BUILD, "--runs", "5", "--cache-dir", str(cache),
        "--store", str(store), cwd=cwd, env=env, without=CI_VARIABLES,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert "follows one metric" not in done.stderr
    return done


LENSES = {
    "time": ("--metric", "time"),
    "instructions": ("--metric", "instructions"),
    "comma": ("--metric", "instructions,time"),
    "time first": ("--metric", "time,instructions"),  # `history` raised a ValueError on it
    "repeated": ("--metric", "instructions", "--metric", "time"),
}


@pytest.mark.parametrize("lenses", ["time", "instructions", "repeated"])
def test_bisect_takes_metric(
    repo: Path, cache: Path, stores: dict[str, Path], tmp_path: Path, lenses: str
) -> None:
    out = tmp_path / "b.json"
    store = stores["bisect time" if lenses == "time" else "bisect instructions"]
    done = perflab("bisect", "good", "main", *LENSES[lenses], "--json", str(out),
                   cwd=repo, cache=cache, store=store)  # fmt: skip
    assert f"perflab: wrote {out}" in done.stderr
    document = json.loads(out.read_text())
    if lenses == "time":  # less time: not worse than GOOD
        assert done.returncode == 1, done.stderr
        assert document["metric"] == "time" and document["culprit"] is None
        return
    assert done.returncode == 0, done.stderr
    assert document["metric"] == "instructions"
    assert document["culprit"]["subject"] == CHANGE
    # the culprit against its parent, with time beside: the answer says time disagrees
    assert document["disagreement"]["other_metric"] == "time"
    assert "more instructions, but " in done.stdout and "less time: the search follows" in (
        done.stdout
    )


def test_bisect_with_faster_finds_the_speed_up_that_costs_instructions(
    repo: Path, cache: Path, stores: dict[str, Path]
) -> None:
    """The question asked decides: by time the change is the first faster commit (with
    --faster), and by instructions no commit is faster (more instructions)."""
    faster = perflab("bisect", "good", "main", "--metric", "time", "--faster", "--json", "-",
                     cwd=repo, cache=cache, store=stores["bisect time"])  # fmt: skip
    assert faster.returncode == 0, faster.stderr
    document = json.loads(faster.stdout)
    assert document["direction"] == "faster" and document["culprit"]["subject"] == CHANGE
    assert document["steps"][0]["ratio"] < 0.9
    counted = perflab("bisect", "good", "main", "--metric", "instructions", "--faster",
                      cwd=repo, cache=cache, store=stores["bisect instructions"])  # fmt: skip
    assert counted.returncode == 1, counted.stderr
    assert "BAD is not faster than GOOD by more than the threshold" in counted.stdout


@pytest.mark.parametrize("lenses", ["time", "instructions", "time first"])
def test_history_takes_metric(
    repo: Path, cache: Path, stores: dict[str, Path], tmp_path: Path, lenses: str
) -> None:
    out, page = tmp_path / "h.json", tmp_path / "h.md"
    # time first: the time history's runs, the instructions beside them read back too
    store = tmp_path / "p.db" if lenses == "instructions" else stores["history time"]
    done = perflab("history", "good..main", *LENSES[lenses], "--json", str(out),
                   "--markdown", str(page), cwd=repo, cache=cache, store=store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"perflab: wrote {out}" in done.stderr and f"perflab: wrote {page}" in done.stderr
    document = json.loads(out.read_text())
    decider = "instructions" if lenses == "instructions" else "time"
    assert document["metric"] == decider
    (change,) = document["changes"]
    assert change["after_subject"] == CHANGE and change["confirmed"]
    assert change["disagreement"]["metric"] == decider
    assert f"follows {decider} (--metric)" in done.stdout


@pytest.mark.parametrize("lenses", ["time", "instructions", "comma"])
def test_check_takes_metric(repo: Path, cache: Path, tmp_path: Path, lenses: str) -> None:
    out = tmp_path / "c.json"
    done = perflab("check", "--base", "good", "--head", "main", *LENSES[lenses], "--json",
                   str(out), cwd=repo, cache=cache, store=tmp_path / "p.db")  # fmt: skip
    assert f"perflab: wrote {out}" in done.stderr
    document = json.loads(out.read_text())
    assert document["metrics"] == list(LENSES[lenses][1].split(","))
    if lenses == "time":
        assert done.returncode == 0 and "perflab check: passed: time" in done.stderr
        assert document["disagreement"] is None  # one lens: nothing beside it
    elif lenses == "instructions":
        assert done.returncode == 1 and "perflab check: regression: instructions" in done.stderr
    else:  # the gate follows instructions, and says time disagrees
        assert done.returncode == 1, done.stderr
        assert "but " in done.stderr and "less time: the gate follows instructions" in (done.stderr)


def test_the_ci_gate_does_not_fail_a_speed_up_on_instructions_alone(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    comment = tmp_path / "c.md"
    done = perflab("check", "--base", "good", "--head", "main", "--markdown", str(comment),
                   "--report-link", "https://ci.example/runs/1?a=(1)@everyone",
                   cwd=repo, cache=cache, store=tmp_path / "p.db",
                   env={"GITHUB_ACTIONS": "true"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the instructions lens gates (GITHUB_ACTIONS is set)" in done.stderr
    first, *rest = comment.read_text().splitlines()
    assert first.startswith("### perflab check: ⚠️ not failed: ")
    assert "more instructions, but " in first and "less time, decisively" in first
    text = "\n".join(rest)
    assert "| ./prog | instructions |" in text and "| ./prog | time |" in text
    assert "(base `good`, given with --base)" in text
    assert "(https://ci.example/runs/1?a=%281%29%40everyone)" in text
    bad_link = perflab("check", "--base", "good", "--report-link", "javascript:alert(1)",
                       cwd=repo, cache=cache, store=tmp_path / "p.db")  # fmt: skip
    assert bad_link.returncode == 2
    assert "--report-link 'javascript:alert(1)' is not an http:// or https:// URL" in (
        bad_link.stderr
    )


def test_check_tells_one_story_about_an_edited_tree_and_its_base(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    work_h = repo / "work.h"
    committed = work_h.read_text()
    work_h.write_text(committed.replace("N 60000", "N 90000"))
    try:
        done = perflab("check", "--base", "good", "--metric", "instructions", cwd=repo,
                       cache=cache, store=tmp_path / "p.db")  # fmt: skip
    finally:
        work_h.write_text(committed)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "as committed, without them" not in done.stderr + done.stdout
    (said,) = [line for line in done.stderr.splitlines() if "uncommitted" in line]
    assert said.startswith("perflab: head is the working tree: HEAD (")
    # no --base and no CI variable: the default, said as such (not "the CI's variables")
    unset = perflab("check", cwd=repo, cache=cache, store=tmp_path / "p.db")
    assert unset.returncode == 3
    assert "'origin/HEAD' is not in this clone (the default: no --base, and neither " in (
        unset.stderr
    )
    named = perflab("check", cwd=repo, cache=cache, store=tmp_path / "p.db",
                    env={"GITHUB_BASE_REF": "main"})  # fmt: skip
    assert "'origin/main' is not in this clone (from GITHUB_BASE_REF)" in named.stderr
