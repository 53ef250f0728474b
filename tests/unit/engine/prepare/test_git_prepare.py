"""Preparing variants, with git and builds scripted: a plain variant passes unchanged or runs its
build once; a git= variant runs in its built checkout, with its provenance; the working tree's
changes are warned about once, only at HEAD's commit and only when no variant measures them; a
command's missing program and a missing patch are refused with what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from perflab.engine.prepare.git_prepare import (
    WORKING_TREE_PATCH,
    PreparedVariant,
    VariantPreparer,
    measures_working_tree,
    uncommitted_note,
)
from perflab.git.repo import GitError
from perflab.machine.fake_processes import FakeRunner
from perflab.machine.proc import Completed, LaunchSpec
from perflab.records.errors import BenchmarkFailedError
from perflab.records.model import Benchmark, Severity, Variant
from tests.support.fake_git import FakeCheckouts, FakeRepository

STATEMENT = Benchmark(name="f", stmt="f()")
TOOL = Benchmark(name="tool", cmd="./bin/tool --fast")


@pytest.mark.parametrize(
    ("applied", "measured"),
    [
        ((), False),
        (("fix.patch",), False),
        ((f"/tmp/x/{WORKING_TREE_PATCH}",), True),
        (("abc123", WORKING_TREE_PATCH), True),
        ((f"{WORKING_TREE_PATCH}.old",), False),
    ],
)
def test_measures_working_tree_when_a_variant_applies_checks_patch(
    applied: tuple[str, ...], measured: bool
) -> None:
    variants = [Variant(name="base", git="main"), Variant(name="head", git="HEAD", apply=applied)]
    assert measures_working_tree(variants) is measured


def test_the_uncommitted_note_names_the_commit_and_the_first_changed_files() -> None:
    status = "".join(f" M file{i}.py\n" for i in range(7)) + "R  old.py -> new.py\n"
    note = uncommitted_note("/repo", Variant(name="head", git="HEAD"), "abc1234", status)
    assert note.severity is Severity.WARNING and note.variant == "head"
    assert "/repo has uncommitted changes" in note.message
    assert "git=HEAD means the commit abc1234 as committed" in note.message
    assert note.message.endswith("(changed: file0.py, file1.py, file2.py, file3.py, file4.py)")
    assert note.hint is not None and "apply=my.patch" in note.hint


# ---- plain variants


class Builds:
    """The build step run under the reaper, scripted: its exit status, and it counts runs."""

    def __init__(self, returncode: int = 0) -> None:
        self.returncode = returncode
        self.count = 0

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        self.count += 1
        return Completed(spec.argv, self.returncode, "compiling\n", "error: no rule\n", 1)


def _plain(builds: Builds, tmp_path: Path) -> VariantPreparer:
    runner = FakeRunner().on_run("build_reaper", builds)
    return VariantPreparer(runner, repository=None, cache_dir=tmp_path / "cache")


def test_a_plain_variant_without_a_build_is_measured_as_it_is(tmp_path: Path) -> None:
    builds = Builds()
    variant = Variant(name="a", python="/envs/a/bin/python", cwd=str(tmp_path))
    assert _plain(builds, tmp_path).prepare(variant, STATEMENT) == PreparedVariant(variant)
    assert builds.count == 0


def test_a_plain_variants_build_runs_once_per_run(tmp_path: Path) -> None:
    builds = Builds()
    preparer = _plain(builds, tmp_path)
    variant = Variant(name="a", cwd=str(tmp_path), build="make")
    first = preparer.prepare(variant, STATEMENT)
    assert preparer.prepare(variant, STATEMENT) is first
    assert (first.variant, first.provenance, first.notes) == (variant, {"build": "make"}, ())
    assert builds.count == 1


def test_a_failed_build_is_refused_with_its_output_and_not_run_again(tmp_path: Path) -> None:
    builds = Builds(returncode=2)
    preparer = _plain(builds, tmp_path)
    variant = Variant(name="a", cwd=str(tmp_path), build="make")
    for _ in range(2):
        with pytest.raises(BenchmarkFailedError) as raised:
            preparer.prepare(variant, STATEMENT)
        error = raised.value
        assert error.message.startswith("the build step 'make'")
        assert error.variant == "a" and error.detail is not None and "no rule" in error.detail
    assert builds.count == 1


# ---- git= variants: the user's repository and the build cache's checkouts scripted


class Git:
    """git as perflab runs it: queries of the user's repository go to `repo`, the build cache's
    commands (clone, worktrees, refs) to `checkouts`."""

    def __init__(self, repo: FakeRepository, checkouts: FakeCheckouts) -> None:
        self.repo = repo
        self.checkouts = checkouts

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        args = list(spec.argv[1:])
        asks_repo = (
            args[0] in ("show", "status")
            or args[:3] == ["rev-parse", "--verify", "--quiet"]
            or args[:2] == ["rev-parse", "--is-shallow-repository"]
            or (args[0] == "diff" and args[-1] == "HEAD")
        )
        return (self.repo if asks_repo else self.checkouts)(spec, stdin)


def make_tool(checkout: Path) -> int:
    (checkout / "bin").mkdir(exist_ok=True)
    (checkout / "bin" / "tool").write_text("#!/bin/sh\n")
    (checkout / "bin" / "tool").chmod(0o755)
    return 0


class CheckoutBuilds(Builds):
    def __init__(self, makes_tool: bool = True) -> None:
        super().__init__()
        self.makes_tool = makes_tool

    def __call__(self, spec: LaunchSpec, stdin: str | None) -> Completed:
        if self.makes_tool:
            make_tool(Path(spec.cwd or "."))
        return super().__call__(spec, stdin)


def _git(
    tmp_path: Path, builds: Builds | None = None, **options: bool
) -> tuple[VariantPreparer, FakeRepository]:
    checkouts = FakeCheckouts(tmp_path / "repo")
    repo = FakeRepository(path=str(checkouts.repository))
    repo.line("first", "second")
    runner = FakeRunner().on_run("build_reaper", builds or CheckoutBuilds())
    runner.on_run(r"^git ", Git(repo, checkouts))
    preparer = VariantPreparer(
        runner, repository=repo.path, cache_dir=tmp_path / "cache", **options
    )
    return preparer, repo


def test_a_git_variant_runs_in_its_built_checkout_with_its_provenance(tmp_path: Path) -> None:
    preparer, repo = _git(tmp_path)
    first = repo.resolve("HEAD~1")
    assert first is not None
    variant = Variant(name="old", git="HEAD~1", build="make", env={"K": "1"}, python="bin/tool")
    try:
        prepared = preparer.prepare(variant, STATEMENT)
    finally:
        preparer.close()
    checkout = prepared.provenance["checkout"]
    assert prepared.variant == Variant(
        name="old", python=f"{checkout}/bin/tool", env={"K": "1"}, cwd=checkout
    )
    assert Path(checkout).parent == tmp_path / "cache"
    assert {k: prepared.provenance[k] for k in ("ref", "commit", "subject", "build", "cached")} == {
        "ref": "HEAD~1",
        "commit": first,
        "subject": "first",
        "build": "make",
        "cached": False,
    }
    assert prepared.provenance["changes"] == [] and prepared.notes == ()


def test_uncommitted_changes_are_warned_about_once_at_heads_commit(tmp_path: Path) -> None:
    preparer, repo = _git(tmp_path)
    repo.uncommitted = "diff --git a/changed.py b/changed.py\n"
    try:
        older = preparer.prepare(Variant(name="old", git="HEAD~1"), STATEMENT)
        head = preparer.prepare(Variant(name="head", git="HEAD"), STATEMENT)
        again = preparer.prepare(Variant(name="head2", git="HEAD", env={"X": "1"}), STATEMENT)
    finally:
        preparer.close()
    assert older.notes == () and again.notes == ()
    [note] = head.notes
    assert note.variant == "head" and "(changed: changed.py)" in note.message


def test_no_warning_when_the_run_measures_the_working_tree(tmp_path: Path) -> None:
    preparer, repo = _git(tmp_path, working_tree_measured=True)
    repo.uncommitted = "diff --git a/changed.py b/changed.py\n"
    try:
        assert preparer.prepare(Variant(name="head", git="HEAD"), STATEMENT).notes == ()
    finally:
        preparer.close()


@pytest.mark.parametrize(
    ("build", "says"),
    [
        ("make", "does not exist in the checkout of HEAD (%s) after its build"),
        (
            None,
            "does not exist in the checkout of HEAD (%s), and no build command was given",
        ),
    ],
    ids=["build-made-none", "no-build"],
)
def test_a_commands_program_missing_from_the_checkout_is_refused(
    tmp_path: Path, build: str | None, says: str
) -> None:
    preparer, repo = _git(tmp_path, CheckoutBuilds(makes_tool=False))
    head = repo.resolve("HEAD")
    assert head is not None
    try:
        with pytest.raises(BenchmarkFailedError) as raised:
            preparer.prepare(Variant(name="head", git="HEAD", build=build), TOOL)
    finally:
        preparer.close()
    assert raised.value.message == "./bin/tool " + says % head[:10]
    assert raised.value.variant == "head"


def test_a_commands_program_the_build_made_is_found(tmp_path: Path) -> None:
    preparer, _ = _git(tmp_path)
    try:
        prepared = preparer.prepare(Variant(name="head", git="HEAD", build="make"), TOOL)
    finally:
        preparer.close()
    assert Path(prepared.variant.cwd or "", "bin", "tool").is_file()


@pytest.mark.parametrize(
    ("variant", "says"),
    [
        (Variant(name="v", git="HEAD", apply=("missing.patch",)), "patch file 'missing.patch'"),
        (Variant(name="v", git="no-such-branch"), "no-such-branch"),
    ],
    ids=["missing-patch", "unknown-ref"],
)
def test_what_cannot_be_resolved_is_refused_naming_the_variant(
    tmp_path: Path, variant: Variant, says: str
) -> None:
    preparer, _ = _git(tmp_path)
    try:
        with pytest.raises(GitError) as raised:
            preparer.prepare(variant, STATEMENT)
    finally:
        preparer.close()
    assert says in raised.value.message and raised.value.variant == "v"
