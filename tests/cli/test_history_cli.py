"""perflab bisect and perflab check from the command line, on a repository with merged pull
requests made here, with the instructions lens."""

from __future__ import annotations

import json
import shutil
import subprocess
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


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_merged_repo(tmp_path_factory.mktemp("merged") / "repo")


def test_bisect_from_the_command_line(repo: Path, tmp_path: Path) -> None:
    common = ["--cmd", "./prog", "--build", BUILD, "--cache-dir", str(tmp_path / "cache"),
              "--store", str(tmp_path / "p.db")]  # fmt: skip
    done = perflab("bisect", "good", "main", "--threshold", "2%", "--json", "b.json", *common,
                   cwd=repo)  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the merge found on the first-parent line, then the commit inside the branch it merged
    inner = git(repo, "rev-parse", "--short=10", "main~2^2~1")
    assert f"first bad commit: {inner} a second loop" in done.stdout
    assert CULPRIT_SUBJECT in done.stdout
    assert "skipped" in done.stderr and "break the build" in done.stderr  # said as it went
    document = json.loads((repo / "b.json").read_text())
    assert document["culprit"]["subject"] == "a second loop"
    assert document["first_parent_culprit"]["subject"] == CULPRIT_SUBJECT
    assert document["measured_commits"] < document["commits_in_line"] + 1
    assert git(repo, "status", "--porcelain") == "?? b.json"

    bad = perflab("bisect", "good", "main", "--threshold", "abc", *common, cwd=repo)
    assert bad.returncode == 2 and "'abc' is not a number" in bad.stderr
    assert "Traceback" not in bad.stderr
    swapped = perflab("bisect", "main", "good", *common, cwd=repo)
    assert swapped.returncode == 2 and "is not an ancestor of" in swapped.stderr
    missing = perflab("bisect", "nope", "main", *common, cwd=repo)
    assert missing.returncode == 3 and "'nope' does not exist" in missing.stderr


def test_check_from_the_command_line(repo: Path, tmp_path: Path) -> None:
    common = ["--cmd", "./prog", "--build", BUILD, "--cache-dir", str(tmp_path / "cache"),
              "--store", str(tmp_path / "p.db")]  # fmt: skip
    # the instructions lens measures each commit once whatever
    # the budget, so a loaded machine does not refuse the gate
    ci = {"GITHUB_ACTIONS": "true"}
    git(repo, "checkout", "-q", "pr/slower")
    try:
        slower = perflab("check", "--base", "main", "--markdown", str(tmp_path / "c.md"),
                         "--html", str(tmp_path / "r.html"), *common, cwd=repo, env=ci)  # fmt: skip
        docs = perflab("check", "--base", "main", "--head", "pr/docs", *common, cwd=repo, env=ci)
        unfetched = perflab("check", *common, cwd=repo, env={**ci, "GITHUB_BASE_REF": "main"})
    finally:
        git(repo, "checkout", "-q", "main")
    assert slower.returncode == 1, slower.stderr
    assert "perflab check: regression" in slower.stderr
    assert "GITHUB_ACTIONS is set" in slower.stderr
    comment = (tmp_path / "c.md").read_text()
    assert comment.startswith("### perflab check: ❌ regression")
    assert "(r.html)" in comment and (tmp_path / "r.html").exists()
    assert docs.returncode == 0, docs.stderr
    assert "perflab check: passed" in docs.stderr
    assert unfetched.returncode == 3
    assert "'origin/main' is not in this clone" in unfetched.stderr
    assert "git fetch origin main" in unfetched.stderr


def test_the_example_repository_of_the_docs(tmp_path: Path) -> None:
    """examples/history/make_repo.sh makes the history docs/git.md and docs/ci.md show."""
    script = Path(__file__).resolve().parents[2] / "examples" / "history" / "make_repo.sh"
    example = tmp_path / "example"
    subprocess.run([str(script), str(example)], check=True, capture_output=True)
    subjects = git(example, "log", "--first-parent", "--format=%s", "good..main").splitlines()
    assert subjects[::-1] == [
        "docs: a README",
        "Merge pull request #1 from a/tidy",
        "tidy: a comment",
        "break the build",
        "fix the build",
        CULPRIT_SUBJECT,
        "docs: more README",
        "tidy: another comment",
    ]
    git(example, "merge-base", "--is-ancestor", "main", "pr/slower")
    git(example, "merge-base", "--is-ancestor", "main", "pr/docs")
