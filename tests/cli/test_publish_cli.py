"""`perflab publish` through the real command line: after `perflab history` on a small
repository made here (its second commit triples a loop), the site's front page names that commit and
links its comparison's report; publishing again writes nothing; `--serve` serves the front
page on 127.0.0.1 and stops cleanly on Ctrl-C."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from perflab.analyse.run import analyse_run
from perflab.cli.main import main
from perflab.publish import SiteRuns, read_site
from tests.support import cli_commands
from tests.support.git_repo import commit, git
from tests.support.published_runs import store as store  # noqa: F401 (a fixture: a store written here)

PROG_C = """#include <stdio.h>
#include "work.h"
int main(void) {
    volatile unsigned s = 0;
    for (int i = 0; i < N; i++) s += (unsigned)i * 7u;
    printf("%u\\n", s);
    return 0;
}
"""
BUILD = "cc -O1 -o prog prog.c"
SLOWER = "triple the <loop> & more"


def perflab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The store is the one each command names, never a developer's PERFLAB_STORE."""
    return cli_commands.perflab(*args, cwd=cwd, without=("PERFLAB_STORE",))


@pytest.mark.integration
@pytest.mark.skipif(
    not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
    reason="needs valgrind, cc and git",
)
def test_history_then_publish_names_the_change_point_and_links_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "base", {"prog.c": PROG_C, "work.h": "#define N 20000\n", ".gitignore": "prog\n"})
    git(repo, "tag", "good")
    culprit = commit(repo, SLOWER, {"work.h": "#define N 60000\n"})
    commit(repo, "another comment", {"prog.c": "/* a loop */\n" + PROG_C})
    store_path = tmp_path / "p.db"
    history = perflab(
        "history", "good..main", "--metric", "instructions", "--cmd", "./prog", "--build", BUILD,
        "--runs", "5", "--budget", "1", "--cache-dir", str(tmp_path / "cache"),
        "--store", str(store_path),
        cwd=repo,
    )  # fmt: skip
    assert history.returncode == 0, history.stderr
    assert "1 change point" in history.stdout

    site = tmp_path / "site"
    done = perflab("publish", "--out", str(site), "--store", str(store_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"perflab: wrote \d+ pages, 0 unchanged", done.stdout), done.stdout
    front = (site / "index.html").read_text()
    row = front[front.index(culprit[:10]) :]
    assert "triple the &lt;loop&gt; &amp; more" in row[:2000]
    run_link = re.search(r'<a href="(run-\d+\.html)">' + culprit[:10], front)
    assert run_link is not None and (site / run_link.group(1)).is_file()

    # again, in this process (the same command line, without a second interpreter's start)
    assert main(["publish", "--out", str(site), "--store", str(store_path)]) == 0
    said = capsys.readouterr().out
    assert "perflab: wrote 0 pages" in said and "0 runs analysed" in said


def test_serve_previews_the_site_on_localhost_and_stops_on_ctrl_c(
    store: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    server = subprocess.Popen(
        [sys.executable, "-m", "perflab.cli.main", "publish", "--out", str(site), "--store",
         str(store), "--serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = ""
        for line in server.stdout:
            found = re.search(r"serving .* at (http://127\.0\.0\.1:\d+/)", line)
            if found:
                url = found.group(1)
                break
        assert url, server.stderr.read() if server.stderr else ""
        with urllib.request.urlopen(url, timeout=30) as response:
            page = response.read().decode()
        assert response.status == 200 and "recent change points" in page
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
        assert "stopped serving" in server.stdout.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_bad_input_is_said_with_its_fix_and_status_2(
    store: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing = ["publish", "--out", str(tmp_path / "s"), "--store", str(tmp_path / "none.db")]
    assert main(missing) == 2
    assert "there is no perflab store" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("")
    assert main(["publish", "--out", str(tmp_path / "a-file"), "--store", str(store)]) == 2
    assert "cannot make" in capsys.readouterr().err
    port = ["publish", "--out", str(tmp_path / "s"), "--store", str(store), "--port", "70000"]
    assert main(port) == 2
    assert "is not a port" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # refused before anything was written


FIGURES = ("ratio", "ci_low", "ci_high", "verdict", "baseline_value", "variant_value", "unit")


def test_a_publish_from_kept_figures_and_one_that_analyses_show_what_show_says(
    store: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    site = tmp_path / "site"
    assert main(["publish", "--out", str(site), "--store", str(store)]) == 0
    analysed = read_site(store).trends  # every run analysed now, nothing read from a folder
    kept = SiteRuns.read(store, site)  # the figures the first publish kept (figures only)
    assert read_site(store, runs=kept).trends == analysed and kept.analysed == 0
    # the figures of the whole analysis, as `show` derives them: the same to the bit
    whole = SiteRuns.read(store, figures=lambda run: analyse_run(run).comparisons)
    assert read_site(store, runs=whole).trends == analysed
    assert [whole.figures(r) for r in (1, 2)] == [kept.figures(r) for r in (1, 2)]
    values: dict[tuple[int, str], set[float]] = {}
    for run_id in (1, 2):
        report = tmp_path / f"show-{run_id}.json"
        assert main(["show", str(run_id), "--store", str(store), "--json", str(report)]) == 0
        shown = json.loads(report.read_text())["comparisons"]
        figures = [c.to_json() for c in kept.figures(run_id).comparisons]
        assert len(figures) == len(shown) > 0
        for site_row, show_row in zip(figures, shown, strict=True):
            assert {k: site_row[k] for k in FIGURES} == {k: show_row[k] for k in FIGURES}
            found = values.setdefault((run_id, show_row["benchmark"]), set())
            found |= {show_row["baseline_value"], show_row["variant_value"]}
    # each trend's point is a value `show` gives for that benchmark in the point's run
    points = [(t.benchmark, p) for t in analysed for p in t.history.points if p.value is not None]
    assert points
    for benchmark, point in points:
        assert point.run_id is not None and point.value in values[(point.run_id, benchmark)]
    capsys.readouterr()
