"""The user's git repository, read only: refs to commits and trees, ranges, dirtiness.

Nothing here changes the user's working tree, index, stash or HEAD: every command is a query
(`rev-parse`, `rev-list`, `status`, `diff-tree`) run through the process seam.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from shlex import quote

from perflab.machine.proc import Completed, LaunchSpec, ProcessRunner
from perflab.records.errors import ConfigError, PerflabError

# a git command on a local repository; one that hangs fails with a message instead of stopping
# the run
GIT_TIMEOUT_S = 120.0


class GitError(PerflabError):
    """A git command failed (a ref that does not exist, a patch that does not apply ...)."""

    exit_code = 3


@dataclass(frozen=True)
class ResolvedRef:
    """A ref as it was when the run was planned: the commit and the tree it names."""

    ref: str
    commit: str
    tree: str
    subject: str = ""

    @property
    def short(self) -> str:
        return self.commit[:10]


def git_environment() -> dict[str, str]:
    """perflab's environment without variables that would point git at another repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


def run_git(
    runner: ProcessRunner, cwd: str | Path, *args: str, timeout_s: float = GIT_TIMEOUT_S
) -> Completed:
    return runner.run(
        LaunchSpec(argv=("git", *args), env=git_environment(), cwd=str(cwd)), timeout_s=timeout_s
    )


def find_repository(runner: ProcessRunner, start: str | Path) -> str:
    """The top level of the repository containing `start`."""
    done = run_git(runner, start, "rev-parse", "--show-toplevel")
    bare = run_git(runner, start, "rev-parse", "--is-bare-repository") if not done.ok else None
    if bare is not None and bare.stdout.strip() == "true":
        raise ConfigError(
            f"{str(start)!r} is a bare git repository (no working tree), so git= refs are not "
            "checked out from it",
            hint="run perflab in a clone of it (git clone BARE DIR; cd DIR)",
        )
    if not done.ok:
        raise ConfigError(
            f"{str(start)!r} is not inside a git repository, so git= refs cannot be resolved",
            hint="run perflab from inside the repository (or give cwd of an experiment file "
            "inside it)",
            detail=done.stderr.strip() or None,
        )
    return done.stdout.strip()


def check_ref_text(ref: str, *, variant: str | None = None) -> str:
    """No branch or tag name begins with '-' (git refuses to make one), and git would read
    such a word as an option: refuse it before git sees it."""
    if ref.startswith("-"):
        raise ConfigError(
            f"git ref {ref!r} begins with '-': no branch, tag or commit can, and git would read "
            "it as an option",
            hint="give a branch, tag or commit of this repository (git log --oneline shows them)",
            variant=variant,
        )
    return ref


def resolve_ref(runner: ProcessRunner, repository: str, ref: str) -> ResolvedRef:
    """The commit (and tree) `ref` names in `repository`; GitError saying why when it names none."""
    check_ref_text(ref)
    done = run_git(runner, repository, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not done.ok or not done.stdout.strip():
        if is_shallow(runner, repository):
            raise GitError(
                f"git ref {ref!r} is not in {repository}, a shallow clone: the commit may be in "
                "the history it did not fetch",
                hint="fetch the history (git fetch --unshallow, or a deeper --depth) and run again",
            )
        raise GitError(
            f"git ref {ref!r} does not exist in {repository}",
            hint="give a branch, tag or commit of this repository (git log --oneline shows them)",
        )
    commit = done.stdout.strip()
    shown = run_git(runner, repository, "show", "-s", "--format=%T%n%s", commit)
    tree, _, subject = shown.stdout.partition("\n")
    return ResolvedRef(ref=ref, commit=commit, tree=tree.strip(), subject=subject.strip())


def is_shallow(runner: ProcessRunner, repository: str) -> bool:
    done = run_git(runner, repository, "rev-parse", "--is-shallow-repository")
    return done.stdout.strip() == "true"


def dirty_summary(runner: ProcessRunner, repository: str) -> str | None:
    """None when the working tree and index match HEAD, else `git status --porcelain` (its
    lines whole: the first two columns are the status, so stripping the text would cut a
    letter off the first file name)."""
    done = run_git(runner, repository, "status", "--porcelain", "--untracked-files=no")
    text = done.stdout.rstrip("\n")
    return text[:2000] if done.ok and text.strip() else None


def changed_paths(summary: str) -> list[str]:
    """The file names of `git status --porcelain` lines ("XY path", "R  old -> new")."""
    return [line[3:] for line in summary.splitlines() if len(line) > 3]


@dataclass(frozen=True)
class RangeCommits:
    """A range's commits as a stack or a history measures them: its base and the commits after
    it."""

    base: ResolvedRef
    commits: tuple[ResolvedRef, ...]  # oldest first
    # along the first-parent line: each commit measured against its first parent, so a merge
    # stands for the whole change it merged (a pull request)
    first_parent: bool = False
    merges: tuple[str, ...] = ()  # the commits of `commits` that are merges


def split_range(text: str) -> tuple[str, str]:
    start, dots, end = text.partition("..")
    if not dots or end.startswith("."):
        raise ConfigError(
            f"{text!r} is not a range A..B",
            hint="e.g. perflab stack main..HEAD (each commit after main, up to HEAD)",
        )
    return start or "HEAD", end or "HEAD"


def range_commits(
    runner: ProcessRunner, repository: str, text: str, *, first_parent: bool | None = None
) -> RangeCommits:
    """`A..B`: the commits reachable from B and not from A, oldest first, each measured
    against its parent. With merges in the range they must be followed along B's first-parent
    line (`first_parent` None chooses that by itself; False refuses merges): each merge is then
    one step, the effect of everything it merged. A must be the parent of the first commit."""
    start, end = split_range(text)
    base = resolve_ref(runner, repository, start)
    tip = resolve_ref(runner, repository, end)
    found = run_git(runner, repository, "rev-list", "--merges", f"{base.commit}..{tip.commit}")
    any_merges = bool(found.stdout.strip())
    if any_merges and first_parent is False:
        shas = [line[:10] for line in found.stdout.split()]
        raise ConfigError(
            f"the range {text} contains merge commits ({', '.join(shas)}): without "
            "--first-parent a stack is a line of commits, each measured against its parent",
            hint="add --first-parent (each merge measured against its first parent: the effect "
            "of what it merged), or give a range without merges",
        )
    follow = bool(first_parent) or any_merges
    walk = ("--first-parent",) if follow else ()
    listed = run_git(
        runner, repository, "rev-list", "--reverse", *walk, f"{base.commit}..{tip.commit}"
    )
    shas = listed.stdout.split()
    if not shas:
        raise ConfigError(
            f"the range {text} has no commits ({end} is already contained in {start})",
            hint="give OLDER..NEWER, e.g. main..HEAD",
        )
    commits = tuple(resolve_ref(runner, repository, sha) for sha in shas)
    parents = run_git(runner, repository, "rev-parse", f"{commits[0].commit}^")
    if parents.stdout.strip() != base.commit:
        if is_shallow(runner, repository):
            raise GitError(
                f"the range {text} reaches past the history this shallow clone holds "
                f"({repository})",
                hint="fetch the whole history (git fetch --unshallow) and run again",
            )
        raise _not_the_parent(start, end, text, follow=follow)
    span = f"{base.commit}..{tip.commit}"
    merges = _merges_on_line(runner, repository, span) if follow else ()
    return RangeCommits(base=base, commits=commits, first_parent=follow, merges=merges)


def _merges_on_line(runner: ProcessRunner, repository: str, span: str) -> tuple[str, ...]:
    """The merges on the range's first-parent line: each is one step, all it merged together."""
    found = run_git(runner, repository, "rev-list", "--merges", "--first-parent", span)
    return tuple(found.stdout.split())


def _not_the_parent(start: str, end: str, text: str, *, follow: bool) -> ConfigError:
    """A..B where A is not on B's (first-parent) line: the first step would not be measured
    against A."""
    line = "first-parent line" if follow else "history"
    return ConfigError(
        f"{start} is not the parent of the first commit of {text} ({start} is not on the "
        f"{line} of {end})",
        hint=f"use the merge base: perflab stack $(git merge-base {quote(start)} {quote(end)})"
        f"..{quote(end)}"
        + (", or a commit of git log --first-parent --oneline " + quote(end) if follow else ""),
    )


def first_parent_line(
    runner: ProcessRunner, repository: str, good: ResolvedRef, bad: ResolvedRef
) -> list[tuple[str, str]]:
    """The commits after `good` up to `bad` along `bad`'s first-parent line, oldest first, as
    (commit, subject); `good` must be an ancestor of `bad`."""
    ancestor = run_git(runner, repository, "merge-base", "--is-ancestor", good.commit, bad.commit)
    if ancestor.returncode != 0 and is_shallow(runner, repository):
        # the history between them may be what the clone did not fetch
        raise GitError(
            f"{good.ref} ({good.short}) is not in the history of {bad.ref} ({bad.short}) that "
            f"this clone holds: {repository} is a shallow clone",
            hint="fetch the whole history (git fetch --unshallow; GitHub Actions: "
            "actions/checkout with fetch-depth: 0) and run again",
        )
    if ancestor.returncode != 0 or good.commit == bad.commit:
        raise ConfigError(
            f"{good.ref} ({good.short}) is not an ancestor of {bad.ref} ({bad.short})"
            if good.commit != bad.commit
            else f"{good.ref} and {bad.ref} are the same commit ({good.short})",
            hint="give an older commit first: GOOD must be in the history of BAD "
            f"(git merge-base --is-ancestor {quote(good.ref)} {quote(bad.ref)} checks it)",
        )
    listed = run_git(
        runner,
        repository,
        "log",
        "--reverse",
        "--first-parent",
        "--format=%H%x00%s",
        f"{good.commit}..{bad.commit}",
    )
    line = []
    for text in listed.stdout.splitlines():
        commit, _, subject = text.partition("\0")
        line.append((commit, subject))
    return line


def commit_patch(runner: ProcessRunner, repository: str, commit: str) -> str:
    """The change a commit makes to its first parent, as a binary-safe patch."""
    done = run_git(
        runner, repository, "diff", "--binary", "--no-color", "--no-ext-diff", f"{commit}^", commit
    )
    if not done.ok:
        raise GitError(
            f"cannot read the change of commit {commit[:10]}",
            detail=done.stderr.strip() or None,
        )
    return done.stdout


def working_tree_patch(runner: ProcessRunner, repository: str) -> str:
    """The working tree's uncommitted changes to tracked files (staged or not) against HEAD,
    as a binary-safe patch: what `git apply` puts on a checkout of HEAD to make it."""
    done = run_git(runner, repository, "diff", "--binary", "--no-color", "--no-ext-diff", "HEAD")
    if not done.ok:
        raise GitError(
            "cannot read the working tree's changes (git diff HEAD)",
            detail=done.stderr.strip() or None,
        )
    return done.stdout


def merged_branch(runner: ProcessRunner, repository: str, commit: str) -> tuple[str, str] | None:
    """For a merge commit: the merge base of its first two parents and its second parent, the
    range that holds what it merged; None for a commit with one parent."""
    listed = run_git(runner, repository, "rev-list", "--parents", "-n", "1", commit)
    parents = listed.stdout.split()[1:]
    if not listed.ok or len(parents) < 2:
        return None
    base = run_git(runner, repository, "merge-base", parents[0], parents[1])
    if not base.ok or not base.stdout.strip():
        return None
    return base.stdout.strip(), parents[1]
