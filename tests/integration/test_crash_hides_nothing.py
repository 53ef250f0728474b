"""A crash hides nothing: a commit whose benchmark segfaults, in a history and in a run of three
variants, is recorded as failed with its reason while every other commit and variant is
measured, through the command line, with the instructions lens (deterministic counts whose
answer is known) and the time lens.

The repository (oldest first): a program; the same (a README); a segfault; fixed (the tree of
the second commit again); twice the work; the same (a README)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_commands import perflab
from tests.support.git_repo import commit, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
        reason="needs valgrind, cc and git",
    ),
]

PROG_C = """#include <stdio.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    CRASH
    printf("%u\\n", s);
    return 0;
}
"""
BUILD = "cc -O1 -o prog prog.c"
SUBJECTS = ["a program", "same", "segfault", "fixed", "twice the work", "same again"]


def _work(n: int, crash: bool = False) -> str:
    return f"#define N {n}\n#define CRASH {'*(volatile int*)0 = 0;' if crash else ''}\n"


def make_crash_repo(repo: Path) -> Path:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    files = {"prog.c": PROG_C, "work.h": _work(200000), ".gitignore": "prog\n"}
    commit(repo, SUBJECTS[0], files)
    git(repo, "tag", "good")
    commit(repo, SUBJECTS[1], {"README": "a program\n"})
    commit(repo, SUBJECTS[2], {"work.h": _work(200000, crash=True)})
    commit(repo, SUBJECTS[3], {"work.h": _work(200000)})
    commit(repo, SUBJECTS[4], {"work.h": _work(400000)})
    commit(repo, SUBJECTS[5], {"README": "a program that works twice\n"})
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_crash_repo(tmp_path_factory.mktemp("crash") / "repo")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def test_history_measures_every_commit_after_a_crash_and_finds_the_change(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    done = perflab(
        "history", "good..main", "--cmd", "./prog", "--build", BUILD,
        "--cache-dir", str(cache), "--store", str(tmp_path / "p.db"),
        "--json", str(tmp_path / "h.json"),
        cwd=repo,
    )  # fmt: skip
    # some commits failed: said in the exit status and named on stderr, after the tables
    assert done.returncode == 3, done.stderr
    assert "1 of 6 commits not measured (status 3)" in done.stderr
    assert "segfault: the command was killed by signal 11" in done.stderr
    assert "Traceback" not in done.stderr
    found = json.loads((tmp_path / "h.json").read_text())
    assert found["metric"] == "instructions"
    points = {p["subject"]: p for p in found["points"]}
    assert "signal 11" in points["segfault"]["skipped"]
    assert points["segfault"]["value"] is None
    base = points["a program"]["value"]
    # the same code measures the same after the crash as before it, twice the work twice
    assert points["same"]["value"] == base
    assert points["fixed"]["value"] == base
    assert points["twice the work"]["value"] == pytest.approx(1.9 * base, rel=0.05)
    assert points["same again"]["value"] == points["twice the work"]["value"]
    (change,) = found["changes"]
    assert change["after_subject"] == "twice the work"
    assert change["before"] == points["fixed"]["commit"]
    assert change["confirmed"] is True


def _run(
    repo: Path, cache: Path, tmp_path: Path, metric: str, *extra: str
) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / f"{metric}.json"
    done = perflab(
        "run", "--cmd", "./prog", "--build", BUILD, "--cache-dir", str(cache),
        "--variant", "before git=good", "--variant", "crash git=main~3",
        "--variant", "after git=main~1",
        "--metric", metric, "--budget", "4",
        "--store", str(tmp_path / "r.db"), "--json", str(out), "-q", *extra,
        cwd=repo,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(out.read_text()), done.stderr


@pytest.mark.parametrize(
    ("metric", "extra"),
    [("instructions", ()), ("time", ()), ("time", ("--check-output",))],
    ids=["instructions", "time", "time-checked"],
)
def test_a_variant_that_crashes_leaves_the_others_compared(
    repo: Path, cache: Path, tmp_path: Path, metric: str, extra: tuple[str, ...]
) -> None:
    status, document, stderr = _run(repo, cache, tmp_path, metric, *extra)
    assert status == 3, stderr  # the run is incomplete: a variant failed
    assert "variant 'crash'" in stderr and "signal 11" in stderr
    main = [c for c in document["comparisons"] if c["metric"] == metric and c.get("event") is None]
    assert [(c["baseline"], c["variant"]) for c in main] == [("before", "after")]
    failed = [n for n in document["notes"] if n.get("variant") == "crash"]
    assert failed and "signal 11" in failed[0]["message"]
    if metric == "instructions":
        (compared,) = main
        assert compared["ratio"] == pytest.approx(1.9, rel=0.05)
        assert compared["verdict"] == "slower"
