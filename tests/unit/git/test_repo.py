"""The user's repository read (git/repo.py) on FakeRepository: refs to commits and trees, ranges
as a stack measures them (merges along the first-parent line), the line a bisect searches,
dirtiness and patches, and each refusal with its fix."""

from __future__ import annotations

import pytest

from perflab.git.repo import (
    GitError,
    ResolvedRef,
    changed_paths,
    check_ref_text,
    dirty_summary,
    find_repository,
    first_parent_line,
    merged_branch,
    range_commits,
    resolve_ref,
    split_range,
    working_tree_patch,
)
from perflab.machine.fake_processes import FakeRunner
from perflab.records.errors import ConfigError
from tests.support.fake_git import FakeRepository


def git(repo: FakeRepository) -> FakeRunner:
    return FakeRunner().on_run(r"^git ", repo)


@pytest.fixture
def repo() -> FakeRepository:
    repository = FakeRepository()
    repository.line("base", "a", "b")
    return repository


def test_a_ref_resolves_to_its_commit_tree_and_subject(repo: FakeRepository) -> None:
    tip = repo.refs["HEAD"]
    repo.refs["main"] = tip
    found = resolve_ref(git(repo), repo.path, "main")
    assert found == ResolvedRef("main", tip, repo.commits[tip].tree, "b")
    assert found.short == tip[:10]
    assert resolve_ref(git(repo), repo.path, tip[:8]).commit == tip
    assert resolve_ref(git(repo), repo.path, "main~2").subject == "base"


def test_a_ref_that_is_not_there_or_reads_as_an_option_is_refused(repo: FakeRepository) -> None:
    with pytest.raises(GitError, match="git ref 'nope' does not exist in /repo") as raised:
        resolve_ref(git(repo), repo.path, "nope")
    assert "git log --oneline" in (raised.value.hint or "")
    runner = git(repo)
    with pytest.raises(ConfigError, match="begins with '-'"):
        resolve_ref(runner, repo.path, "--all")
    assert runner.calls == []  # refused before git sees it
    assert check_ref_text("main") == "main"


def test_the_repository_is_its_top_level_and_a_bare_one_is_refused() -> None:
    assert find_repository(git(FakeRepository(path="/src/app")), "/src/app/lib") == "/src/app"
    bare = (
        FakeRunner()
        .on_run(r"show-toplevel", returncode=128, stderr="fatal: this operation needs a work tree")
        .on_run(r"is-bare-repository", stdout="true\n")
    )
    with pytest.raises(ConfigError, match="is a bare git repository"):
        find_repository(bare, "/srv/app.git")
    outside = FakeRunner().on_run(r"show-toplevel", returncode=128).on_run(r"is-bare", stdout="")
    with pytest.raises(ConfigError, match="is not inside a git repository"):
        find_repository(outside, "/tmp")


def test_a_working_tree_is_dirty_with_its_status_lines_whole(repo: FakeRepository) -> None:
    assert dirty_summary(git(repo), repo.path) is None
    repo.uncommitted = "diff --git a/changed.py b/changed.py\n"
    assert dirty_summary(git(repo), repo.path) == " M changed.py"
    assert working_tree_patch(git(repo), repo.path) == repo.uncommitted
    assert changed_paths(" M a.py\nR  old.py -> new.py\n?? x\nM ") == [
        "a.py",
        "old.py -> new.py",
        "x",
    ]


@pytest.mark.parametrize(
    ("text", "ends"), [("a..b", ("a", "b")), ("..b", ("HEAD", "b")), ("a..", ("a", "HEAD"))]
)
def test_a_range_is_two_ends_head_where_left_out(text: str, ends: tuple[str, str]) -> None:
    assert split_range(text) == ends


@pytest.mark.parametrize("text", ["main", "a...b"])
def test_what_is_not_a_two_dot_range_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="is not a range A..B"):
        split_range(text)


def test_a_range_is_its_commits_after_the_base_oldest_first(repo: FakeRepository) -> None:
    base, a, b = (repo.resolve(f"HEAD~{n}") for n in (2, 1, 0))
    found = range_commits(git(repo), repo.path, f"{base}..{b}")
    assert found.base.commit == base
    assert [c.commit for c in found.commits] == [a, b]
    assert not found.first_parent and found.merges == ()
    with pytest.raises(ConfigError, match="has no commits"):
        range_commits(git(repo), repo.path, f"{b}..{base}")


def test_a_range_from_a_commit_off_the_line_is_refused_with_the_merge_base() -> None:
    repo = FakeRepository()
    (base,) = repo.line("base")
    side = repo.commit("side", parents=(base,))
    repo.refs["HEAD"] = base
    (tip,) = repo.line("tip")
    with pytest.raises(ConfigError, match="is not the parent of the first commit") as raised:
        range_commits(git(repo), repo.path, f"{side}..{tip}")
    assert "git merge-base" in (raised.value.hint or "")


def merged() -> tuple[FakeRepository, dict[str, str]]:
    """main: base - merge(base+feature) - after; feature: base - f1 - f2."""
    repo = FakeRepository()
    (base,) = repo.line("base")
    f1, f2 = repo.line("f1", "f2")
    merge = repo.commit("merge feature", parents=(base, f2))
    after = repo.commit("after", parents=(merge,))
    return repo, {"base": base, "f1": f1, "f2": f2, "merge": merge, "after": after}


def test_a_range_with_merges_is_followed_along_its_first_parent_line() -> None:
    repo, c = merged()
    found = range_commits(git(repo), repo.path, f"{c['base']}..{c['after']}")
    assert found.first_parent and found.merges == (c["merge"],)
    assert [r.commit for r in found.commits] == [c["merge"], c["after"]]
    with pytest.raises(ConfigError, match="contains merge commits") as raised:
        range_commits(git(repo), repo.path, f"{c['base']}..{c['after']}", first_parent=False)
    assert "--first-parent" in (raised.value.hint or "")


def test_a_merge_names_the_range_it_merged() -> None:
    repo, c = merged()
    assert merged_branch(git(repo), repo.path, c["merge"]) == (c["base"], c["f2"])
    assert merged_branch(git(repo), repo.path, c["after"]) is None


def test_the_line_a_bisect_searches_is_the_first_parent_line_after_good() -> None:
    repo, c = merged()
    good, bad = (resolve_ref(git(repo), repo.path, c[k]) for k in ("base", "after"))
    line = first_parent_line(git(repo), repo.path, good, bad)
    assert line == [(c["merge"], "merge feature"), (c["after"], "after")]
    with pytest.raises(ConfigError, match="is not an ancestor of"):
        first_parent_line(git(repo), repo.path, bad, good)
    with pytest.raises(ConfigError, match="are the same commit"):
        first_parent_line(git(repo), repo.path, good, good)
