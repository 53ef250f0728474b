"""`perflab history --html --markdown` from the command line: every output says what changed
before the trend and the rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli_commands import perflab
from tests.support.git_repo import git
from tests.support.merged_repo import BUILD, CULPRIT_SUBJECT, make_merged_repo

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (shutil.which("valgrind") and shutil.which("cc") and shutil.which("git")),
        reason="needs valgrind, cc and git",
    ),
]


def test_history_says_what_changed_first_in_every_format(tmp_path: Path) -> None:
    repo = make_merged_repo(tmp_path / "repo")
    done = perflab(
        "history", "good..main", "--cmd", "./prog", "--build", BUILD,
        "--cache-dir", str(tmp_path / "cache"), "--store", str(tmp_path / "p.db"),
        "--html", str(tmp_path / "h.html"), "--markdown", str(tmp_path / "h.md"),
        cwd=repo,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # a commit whose build failed: not measured
    # said before each run, not after: the series' parts, then the change point's comparison
    assert "perflab: measuring commits 1-" in done.stderr
    assert "perflab: confirming a change point: " in done.stderr
    culprit = git(repo, "rev-parse", "--short=10", "main~2")
    broken = git(repo, "rev-parse", "--short=10", "main~4")  # "break the build"
    headline = "1 change point in instructions per iteration beyond 2.0% across 9 commits"
    out = done.stdout
    assert out.index(headline) < out.index(f"not measured (1): {broken}") < out.index("value")
    markdown = (tmp_path / "h.md").read_text()
    assert markdown.splitlines()[2].startswith(f"**{headline}")
    assert markdown.index(culprit) < markdown.index("<details>")  # the change point, open
    page = (tmp_path / "h.html").read_text()
    at = [page.index(headline), page.index(CULPRIT_SUBJECT), page.index("<svg")]
    assert at == sorted(at) and page.index("<svg") < page.index('<th class="num">value</th>')
    assert "M instructions</text>" in page and f">{culprit[:7]}</text>" in page  # both axes
    # the same history on standard output (-): the page itself, from the stored runs, with no
    # folder for the change points' own pages and no table beside it
    pages_before = sorted(tmp_path.glob("*.html"))
    again = perflab(
        "history", "good..main", "--cmd", "./prog", "--build", BUILD,
        "--cache-dir", str(tmp_path / "cache"), "--store", str(tmp_path / "p.db"),
        "--html", "-", cwd=repo,
    )  # fmt: skip
    assert again.returncode == 3, again.stderr
    assert again.stdout.lstrip().lower().startswith("<!doctype html")
    assert headline in again.stdout and "wrote" not in again.stderr
    assert sorted(tmp_path.glob("*.html")) == pages_before
