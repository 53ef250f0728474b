"""`perflab check`, `history` and `bisect` with `--pytest`, through the real command line, on a
repository made here whose pytest-benchmark suite has two benchmarks and a commit that makes
one of them do sixteen times the work (far beyond the threshold of 20%: two worker generations
at a load of 13 read four times the work as 4.52 [0.516, 39.6], and sixteen times stays beyond
it, so the time lens on a one-second budget settles it on a busy machine): check gates the
suite as one family and names the one that regressed; history keeps a series per benchmark,
finds the change in that one only and draws a trend per benchmark; bisect follows the one
benchmark -k selects, and asks for one when -k selects several."""

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
    pytest.mark.skipif(not shutil.which("git"), reason="needs git"),
]

SUITE = """
import work


def test_steady(benchmark):
    benchmark(work.steady, 300)


def test_changed(benchmark):
    benchmark(work.changed, 300)
"""
WORK = """
def steady(n):
    return sum(i * 7 for i in range(n))


def changed(n):
    return sum(i * 7 for i in range({n}))
"""
NEW = """

def test_new(benchmark):
    benchmark(work.steady, 10)
"""
CHANGED = "test_bench.py::test_changed"
ADDED = "test_bench.py::test_new"
STEADY = "test_bench.py::test_steady"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base, then `slower`: `changed` does sixteen times the work, and a benchmark is added
    (both tagged)."""
    repo = tmp_path_factory.mktemp("suite") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"test_bench.py": SUITE, "work.py": WORK.format(n="n")})
    git(repo, "tag", "base")
    commit(repo, "sixteen times the work",
           {"work.py": WORK.format(n="16 * n"), "test_bench.py": SUITE + NEW})  # fmt: skip
    git(repo, "tag", "slower")
    return repo


def without_valgrind(tmp: Path) -> str:
    """A PATH holding git alone: the workflows measure time and instructions beside the lens
    asked for where valgrind is installed; without it, time alone, which keeps this test short."""
    folder = tmp / "bin"
    folder.mkdir(exist_ok=True)
    if not (folder / "git").exists():
        (folder / "git").symlink_to(str(shutil.which("git")))
    return str(folder)


def perflab(repo: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_commands.perflab(
        *args, "--pytest", "test_bench.py", "--metric", "time", "--budget", "1",
        "--min-generations", "2", "--threshold", "20%", "--store", str(tmp / "p.db"),
        "--cache-dir", str(tmp / "cache"), "-q", cwd=repo, timeout_s=300,
        env={"PATH": without_valgrind(tmp)}, without=CI_VARIABLES,
    )  # fmt: skip


def test_check_gates_the_suite_and_names_the_benchmark_that_regressed(
    repo: Path, tmp_path: Path
) -> None:
    done = perflab(repo, tmp_path, "check", "--base", "base", "--head", "slower",
                   "--json", str(tmp_path / "c.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr  # the added benchmark does not fail the check
    assert f"failed at the base alone, not compared (added or mended by the change): {ADDED}" in (
        done.stderr
    )
    assert "regression: 1 of 3 benchmarks" in done.stderr, done.stderr
    assert CHANGED in done.stderr and STEADY not in done.stderr.split("regression:")[1], done.stderr
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["regressed"] == [CHANGED]
    assert document["benchmarks"] == 3
    names = {c["benchmark"] for c in document["run"]["comparisons"]}
    assert names == {CHANGED, STEADY}


def test_history_keeps_a_series_per_benchmark(repo: Path, tmp_path: Path) -> None:
    """The two commits measured in one run (times of separate runs drift with a busy
    machine), the change compared directly in a second."""
    done = perflab(repo, tmp_path, "history", "base..slower", "--json", str(tmp_path / "h.json"),
                   "--html", str(tmp_path / "h.html"))  # fmt: skip
    # the added benchmark fails at the base, so the run measuring both commits compares none of
    # its: its series is named, not measured (status 3), beside the others
    assert done.returncode == 3, done.stderr
    assert f"{ADDED}: 2 of 2 commits not measured" in done.stderr
    document = json.loads((tmp_path / "h.json").read_text())
    series = {s["benchmark"]: s for s in document["series"]}
    assert set(series) == {CHANGED, STEADY, ADDED}
    assert all(len(s["points"]) == 2 for s in series.values())
    assert [p["value"] for p in series[ADDED]["points"]] == [None, None]
    assert [c["after_subject"] for c in series[CHANGED]["changes"]] == ["sixteen times the work"]
    # the direct comparison's ratio (its interval, on a one-second budget, widens on a busy machine)
    assert series[CHANGED]["changes"][0]["ratio"] > 2
    assert not any(change["confirmed"] for change in series[STEADY]["changes"])
    # the page: the line naming what changed, then a trend per benchmark measured, the one
    # that changed first, its change point linked to the direct comparison's report
    page = (tmp_path / "h.html").read_text()
    assert page.index("1 of 3 benchmarks changed") < page.index(f"<h2>{CHANGED}</h2>")
    assert page.index(f"<h2>{CHANGED}</h2>") < page.index(f"<h2>{STEADY}</h2>")
    assert page.count("<polyline") == 2  # the added benchmark has no value to draw
    assert 'href="h-change1.html"' in page and (tmp_path / "h-change1.html").exists()


def test_bisect_asks_for_one_benchmark_when_the_suite_selects_several(
    repo: Path, tmp_path: Path
) -> None:
    done = perflab(repo, tmp_path, "bisect", "base", "slower")
    assert done.returncode == 2, done.stderr
    assert "bisect follows one benchmark, and --pytest test_bench.py selects 3" in done.stderr
    assert f"-k test_changed ({CHANGED})" in done.stderr
    assert "perflab history base..slower --pytest test_bench.py" in done.stderr
    assert "Traceback" not in done.stderr


def test_bisect_follows_the_benchmark_selected(repo: Path, tmp_path: Path) -> None:
    """One step (the line after base is the change alone) and the evidence run: the shortest
    bisection that runs the suite's benchmark at both commits; test_steady, unchanged, would
    have found no commit."""
    done = perflab(repo, tmp_path, "bisect", "base", "slower", "-k", "test_changed",
                   "--json", str(tmp_path / "b.json"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "b.json").read_text())
    assert document["benchmark"] == CHANGED
    assert document["culprit"]["subject"] == "sixteen times the work"
    assert [s["state"] for s in document["steps"]] == ["bad"]
    assert document["evidence_run"] is not None


def test_a_suite_kept_outside_the_repository_is_the_same_file_for_every_commit(
    repo: Path, tmp_path: Path
) -> None:
    """A team's benchmarks beside the repository (not in it): each commit's checkout runs that
    one file, importing the commit's code (PYTHONPATH=. in each checkout)."""
    outside = tmp_path / "benchmarks" / "test_outside.py"
    outside.parent.mkdir()
    outside.write_text(SUITE)
    done = cli_commands.perflab(
        "history", "base..slower", "--pytest", str(outside), "-k", "changed", "--each",
        "env.PYTHONPATH=.", "--metric", "time", "--budget", "1", "--min-generations", "2",
        "--threshold", "20%", "--store", str(tmp_path / "p.db"), "--cache-dir",
        str(tmp_path / "cache"), "--json", str(tmp_path / "h.json"), "-q", cwd=repo,
        timeout_s=300, env={"PATH": without_valgrind(tmp_path)}, without=CI_VARIABLES,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (series,) = json.loads((tmp_path / "h.json").read_text())["series"]
    assert series["benchmark"].endswith("test_outside.py::test_changed")
    assert [c["after_subject"] for c in series["changes"]] == ["sixteen times the work"]
