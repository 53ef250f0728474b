"""`perflab bisect` and `perflab history` from the command line, with the instructions lens:
the change sought (slower by default, --faster), the commit inside a merge, reports that lead
with the answer and hold the search path, and reuse read from the store itself (a rerun
measures nothing new; another store measures again; a file beside the store is not believed)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab
from tests.support.git_repo import commit, git
from tests.support.merged_repo import BUILD, CULPRIT_SUBJECT, PROG_C, make_merged_repo

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
        reason="needs valgrind, cc and git",
    ),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_merged_repo(tmp_path_factory.mktemp("merged") / "repo")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def runs_in(store: Path) -> int:
    with sqlite3.connect(store) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


def test_bisect_goes_inside_the_merge_and_a_rerun_measures_nothing(
    repo: Path, cache: Path, tmp_path: Path
) -> None:
    store = tmp_path / "p.db"
    common = ["--cmd", "./prog", "--build", BUILD, "--cache-dir", str(cache), "--store",
              str(store), "--metric", "instructions"]  # fmt: skip
    done = perflab("bisect", "main~3", "main", "--json", str(tmp_path / "b.json"),
                   "--markdown", str(tmp_path / "b.md"), "--html", str(tmp_path / "b.html"),
                   *common, cwd=repo)  # fmt: skip
    assert done.returncode == 0, done.stderr
    inner = git(repo, "rev-parse", "main~2^2~1")
    document = json.loads((tmp_path / "b.json").read_text())
    assert document["culprit"] == {"commit": inner, "subject": "a second loop"}
    assert document["merges"][0]["subject"] == CULPRIT_SUBJECT
    assert list(document)[0] == "answer" and inner[:10] in document["answer"]
    merge = git(repo, "rev-parse", "main~2")
    inside = [s for s in document["steps"] if s["inside"] == merge]
    assert [s["subject"] for s in inside] == ["docs: the second loop", "a second loop"]
    assert all(s["state"] == "bad" and s["ratio"] > 1.5 for s in inside)
    # the Markdown: the answer first, then the search path, then the evidence run
    text = (tmp_path / "b.md").read_text()
    answer = text.index(f"first bad commit: {inner[:10]} a second loop (inside {merge[:10]}")
    path = text.index("| # | commit | subject | line |")
    assert answer < path < text.index("### perflab run")
    assert f"inside {merge[:10]}" in text[path:]
    page = (tmp_path / "b.html").read_text()
    assert "a second loop" in page and 'href="b-evidence.html"' in page
    assert (tmp_path / "b-evidence.html").exists()
    for name in ("b.json", "b.md", "b.html", "b-evidence.html"):
        assert f"perflab: wrote {tmp_path / name}" in done.stderr
    assert f"perflab bisect: first bad commit: {inner[:10]}" in done.stderr

    # a rerun reads every step, and the evidence, from the store; -q still says the answer
    runs = runs_in(store)
    again = perflab("bisect", "main~3", "main", "--json", str(tmp_path / "c.json"), "-q",
                    *common, cwd=repo)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stderr.strip().splitlines() == [
        f"perflab bisect: first bad commit: {inner[:10]} a second loop (inside {merge[:10]} "
        f"{CULPRIT_SUBJECT})"
    ]
    assert runs_in(store) == runs
    rerun = json.loads((tmp_path / "c.json").read_text())
    assert rerun["measured_now"] == 0 and all(s["reused"] for s in rerun["steps"])
    assert rerun["culprit"] == document["culprit"]
    assert rerun["evidence_run"] == document["evidence_run"]


def test_bisect_finds_a_faster_commit_only_when_asked(tmp_path: Path, cache: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    work = "#define N 200000\n#define EXTRA {}\n"
    files = {"prog.c": PROG_C, "work.h": work.format(200000), ".gitignore": "prog\n"}
    commit(repo, "a program", files)
    git(repo, "tag", "good")
    commit(repo, "docs: a README", {"README": "a program\n"})
    faster = commit(repo, "drop the second loop", {"work.h": work.format(0)})
    commit(repo, "docs: more README", {"README": "a faster program\n"})
    common = ["--cmd", "./prog", "--build", "cc -O1 -o prog prog.c", "--cache-dir", str(cache),
              "--store", str(tmp_path / "p.db"), "--metric", "instructions"]  # fmt: skip
    slower = perflab("bisect", "good", "main", *common, cwd=repo)
    assert slower.returncode == 1, slower.stderr  # slower is sought by default: none
    assert "BAD is not worse than GOOD by more than the threshold" in slower.stdout
    found = perflab("bisect", "good", "main", "--faster", "--json", "-", *common, cwd=repo)
    assert found.returncode == 0, found.stdout + found.stderr
    document = json.loads(found.stdout)
    assert document["direction"] == "faster"
    assert document["culprit"] == {"commit": faster, "subject": "drop the second loop"}
    assert document["steps"][0]["ratio"] < 0.75
    changed = perflab("bisect", "good", "main", "--changed", "--json", "-", *common, cwd=repo)
    assert changed.returncode == 0 and json.loads(changed.stdout)["culprit"]["commit"] == faster
    both = perflab("bisect", "good", "main", "--faster", "--changed", *common, cwd=repo)
    assert both.returncode == 2 and "give one" in both.stderr


def test_history_reads_what_each_store_holds(repo: Path, cache: Path, tmp_path: Path) -> None:
    folder = tmp_path / "stores"
    common = ["--cmd", "./prog", "--build", BUILD, "--cache-dir", str(cache),
              "--metric", "instructions"]  # fmt: skip

    def history(store: str) -> dict[str, object]:
        done = perflab("history", "good..main~5", "--store", str(folder / store),
                       "--json", "-", *common, cwd=repo)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    first = history("a.db")
    assert first["measured_now"] == 4 and first["reused"] == 0
    assert history("a.db")["measured_now"] == 0  # the same store: read from it
    # a file planted beside the stores is not believed: only a store's own runs are
    planted = {"x" * 64: {"value": 1.0, "unit": "instructions", "run_id": 1}}
    (folder / "history-index.json").write_text(json.dumps(planted))
    # so another store beside them, holding nothing yet, has every commit measured into it
    # (one history run answers both: neither the full store nor the file is read)
    other = history("b.db")
    assert other["measured_now"] == 4 and other["reused"] == 0
    assert (folder / "b.db").is_file()


COMBINED_C = """#include <stdio.h>
#include "work.h"
#ifndef EXTRA
#define EXTRA 0
#endif
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < 200000; i++) s += (unsigned)i * 7u;
    for (int i = 0; i < EXTRA; i++) s ^= (unsigned)i;
    printf("%u\\n", s);
    return 0;
}
"""


def test_a_merge_whose_branch_alone_is_not_slower_says_how_to_look_inside(
    tmp_path: Path, cache: Path
) -> None:
    """Only the merge is slower (the branch's loop needs a size main defined after the branch
    left): the answer stays at the merge, says why, and gives the command that looks inside."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = {"prog.c": PROG_C.replace("EXTRA", "0"), "work.h": "#define N 200000\n",
             ".gitignore": "prog\n"}  # fmt: skip
    commit(repo, "a program", first)
    git(repo, "tag", "good")
    git(repo, "checkout", "-q", "-b", "loop")
    commit(repo, "a loop sized by EXTRA", {"prog.c": COMBINED_C})
    git(repo, "checkout", "-q", "main")
    commit(repo, "sizes: EXTRA", {"work.h": "#define N 200000\n#define EXTRA 200000\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch 'loop'", "loop")
    merge = git(repo, "rev-parse", "HEAD")
    common = ["--cmd", "./prog", "--build", "cc -O1 -o prog prog.c", "--cache-dir", str(cache),
              "--store", str(tmp_path / "p.db"), "--metric", "instructions"]  # fmt: skip
    done = perflab("bisect", "good", "main", "--json", "-", *common, cwd=repo)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["culprit"]["commit"] == merge and document["merges"] == []
    not_inside = document["not_inside"]
    assert "BAD is not worse than GOOD" in not_inside
    base = git(repo, "rev-parse", "--short=10", "good")  # where the branch left main
    second = git(repo, "rev-parse", "--short=10", "main^2")
    assert f"perflab bisect {base} {second} --cmd ./prog" in not_inside
    assert "--metric instructions" in not_inside


def test_the_evidence_reuses_the_step_that_compared_the_culprit_with_its_parent(
    tmp_path: Path, cache: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    work = "#define N 200000\n#define EXTRA {}\n"
    files: dict[str, str | None] = {
        "prog.c": PROG_C,
        "work.h": work.format(0),
        ".gitignore": "prog\n",
    }
    commit(repo, "a program", files)
    git(repo, "tag", "good")
    # one commit after GOOD: one step, BAD's, which compares the culprit with its parent
    slower = commit(repo, "a second loop", {"work.h": work.format(200000)})
    store = tmp_path / "p.db"
    common = ["--cmd", "./prog", "--build", "cc -O1 -o prog prog.c", "--cache-dir", str(cache),
              "--store", str(store), "--metric", "instructions", "--budget", "1"]  # fmt: skip
    done = perflab("bisect", "good", "main", "--json", str(tmp_path / "b.json"), *common, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads((tmp_path / "b.json").read_text())
    assert document["culprit"] == {"commit": slower, "subject": "a second loop"}
    # the step's run is the instructions evidence; only the time lens it lacked is measured
    (step,) = document["steps"]
    searched, measured = document["evidence_runs"]
    assert searched == {"run_id": step["run_id"], "metrics": ["instructions"], "source": "search"}
    assert measured["metrics"] == ["time"] and measured["source"] == "measured"
    assert document["evidence_run"] == step["run_id"]
    assert runs_in(store) == 2
    assert f"run {step['run_id']}, measured during the search (instructions)" in done.stdout
