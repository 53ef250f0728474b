"""The commits of an experiment's git= variants, carried to a node that lacks the repository.

On the driver, `bundle_commits` resolves every ref the variants name (git= at each benchmark's
parameters, and the commits of apply=) to a full commit id and packs those commits, with their
history, into one `git bundle`. It writes nothing into the user's repository: the bundle is made
in a temporary repository that borrows the user's objects (`objects/info/alternates`) and holds
the only refs, and is removed at once.

On a node, `unpack_commits` adds the bundle's objects to the node's copy of the driver's
repository (`<build cache>/repositories/<key>.git`, bare, one per driver repository, no refs, gc
off) under a lock, unless every commit is there already, and returns the experiment with each
ref replaced by its commit, `repository` pointing at the copy, and a plan note saying how the
commits got there. The copy's path does not change from one bundle to the next, so the build
cache's keys (repository, tree, build command) do not either: a node builds a tree once,
whichever run's bundle brought it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perflab.git.cache_entry import default_cache_dir
from perflab.git.repo import (
    GitError,
    dirty_summary,
    find_repository,
    git_environment,
    run_git,
)
from perflab.machine.own_files import own_folder, replace_file
from perflab.machine.proc import LaunchSpec, ProcessRunner, SubprocessRunner
from perflab.machine.scratch import private_folder
from perflab.records.errors import ConfigError
from perflab.records.model import Experiment, Variant

# packing or indexing a large history takes longer than one git query
BUNDLE_TIMEOUT_S = 1800.0
BUNDLING = "bundle the commits of the git= variants"
REPOSITORIES = "repositories"  # under the build cache: the nodes' copies of driver repositories
BUNDLES = "bundles"  # under the driver's build cache: bundles made, by repository and commits
# bundles kept in the build cache, most recently used: recent commit sets reuse theirs, and old
# bundles (whole histories) do not pile up
KEPT_BUNDLES = 8


@dataclass(frozen=True)
class CommitBundle:
    """A `git bundle` of the commits an experiment needs, and the commit each ref named on the
    driver (a node never resolves a ref itself: its copy has no branches, and "main" may have
    moved since)."""

    data: bytes
    commits: Mapping[str, str]  # a ref as the experiment writes it -> its full commit id
    origin: str  # the driver's repository (its top level)
    digest: str  # sha256 of `data`
    head: str = ""  # the driver's HEAD commit when bundled
    uncommitted: str | None = None  # `git status --porcelain` of its working tree, if changed
    size_bytes: int = 0  # of `data`, kept when the data travels apart (empty `data`)


# ---- on the driver


def bundle_commits(
    experiment: Experiment,
    runner: ProcessRunner | None = None,
    *,
    cache_dir: str | Path | None = None,
) -> CommitBundle | None:
    """The bundle of the experiment's git= commits; None when no variant names a ref (or none
    resolves: each such variant then fails on its node as it would here). With `cache_dir`,
    a bundle of the same commits made before is reused from there."""
    runner = runner or SubprocessRunner()
    refs = _named_refs(experiment)
    if not refs:
        return None
    origin = os.path.realpath(experiment.repository or find_repository(runner, os.getcwd()))
    commits = _resolved(runner, origin, refs)
    if not commits:
        return None
    data = _cached_bundle(runner, origin, sorted(set(commits.values())), cache_dir)
    head = run_git(runner, origin, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    return CommitBundle(
        data=data,
        commits=commits,
        origin=origin,
        digest=hashlib.sha256(data).hexdigest(),
        head=head.stdout.strip() if head.ok else "",
        uncommitted=dirty_summary(runner, origin),
        size_bytes=len(data),
    )


def _cached_bundle(
    runner: ProcessRunner, origin: str, commits: list[str], cache_dir: str | Path | None
) -> bytes:
    """The bundle of `commits`, from `cache_dir` when one of the same commits of the same
    repository was made before (commit ids fix their whole history, so it cannot be stale);
    the KEPT_BUNDLES most recently used are kept."""
    if cache_dir is None:
        return _bundle(runner, origin, commits)
    key = hashlib.sha256("\n".join([origin, *commits]).encode()).hexdigest()[:24]
    folder = Path(cache_dir) / BUNDLES
    path = folder / f"{key}.bundle"
    with contextlib.suppress(OSError):
        data = path.read_bytes()
        os.utime(path)  # recently used: pruned last
        return data
    data = _bundle(runner, origin, commits)
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        # a linked `bundles` folder is refused: old bundles are removed from it below
        own_folder(Path(cache_dir), folder)
        replace_file(path, data)
        newest_first = sorted(
            folder.glob("*.bundle"), key=lambda p: p.stat().st_mtime, reverse=True
        )
        for old in newest_first[KEPT_BUNDLES:]:
            old.unlink(missing_ok=True)
    return data


def _named_refs(experiment: Experiment) -> list[str]:
    """Each git= of each variant at each benchmark's parameters, and each apply= that is not a
    patch file: what the node would otherwise resolve in the repository."""
    refs: dict[str, None] = {}
    for benchmark in experiment.benchmarks:
        for template in experiment.variants:
            variant = template.at(benchmark.params)
            if not variant.git:
                continue
            refs[variant.git] = None
            for change in variant.apply:
                if not _is_patch_file(change):
                    refs[change] = None
    return list(refs)


def _is_patch_file(change: str) -> bool:
    return os.path.isfile(change) or change.endswith((".patch", ".diff"))


def _resolved(runner: ProcessRunner, repository: str, refs: list[str]) -> dict[str, str]:
    commits = {}
    for ref in refs:
        done = run_git(runner, repository, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if done.ok and done.stdout.strip():
            commits[ref] = done.stdout.strip()
    return commits


def _bundle(runner: ProcessRunner, repository: str, commits: list[str]) -> bytes:
    """`git bundle create --all` in a temporary repository whose only refs are `commits` and
    whose objects are the user's (borrowed, never copied into it)."""
    found = run_git(runner, repository, "rev-parse", "--git-common-dir")
    if not found.ok:
        raise GitError(f"cannot find the git directory of {repository}", detail=found.stderr)
    objects = os.path.join(repository, found.stdout.strip(), "objects")
    with private_folder("bundle") as scratch:
        borrowing = os.path.join(scratch, "repository.git")
        _git_or_fail(runner, scratch, "init", "--quiet", "--bare", borrowing, doing=BUNDLING)
        Path(borrowing, "objects", "info", "alternates").write_text(os.path.abspath(objects) + "\n")
        for number, commit in enumerate(commits):
            _git_or_fail(
                runner, borrowing, "update-ref", f"refs/perflab/{number}", commit, doing=BUNDLING
            )
        bundle = os.path.join(scratch, "commits.bundle")
        _git_or_fail(
            runner,
            borrowing,
            "bundle",
            "create",
            "--quiet",
            bundle,
            "--all",
            doing=BUNDLING,
            hint="a shallow clone lacks the history a bundle carries: git fetch --unshallow, "
            "then run again",
        )
        return Path(bundle).read_bytes()


def _git_or_fail(
    runner: ProcessRunner,
    cwd: str | Path,
    *args: str,
    doing: str,
    hint: str | None = None,
    timeout_s: float = BUNDLE_TIMEOUT_S,
) -> None:
    done = run_git(runner, cwd, *args, timeout_s=timeout_s)
    if not done.ok:
        raise GitError(
            f"cannot {doing}: git {args[0]} {done.describe_failure()}",
            hint=hint,
            detail=(done.stdout + done.stderr).strip()[-2000:] or None,
        )


# ---- on a node


def unpack_commits(
    experiment: Experiment,
    bundle: CommitBundle | None,
    *,
    cache_dir: str | Path | None = None,
    runner: ProcessRunner | None = None,
    fetch: Callable[[], bytes] | None = None,
) -> Experiment:
    """The experiment as this node measures it: with a bundle, its commits in the node's copy
    of the driver's repository, each ref replaced by its commit, `repository` the copy, and a
    plan note (the engine writes it into the run) saying how the commits got here; without
    one, as it is. A bundle without its data gets it from `fetch`, only when the copy lacks
    a commit."""
    if bundle is None:
        return experiment
    runner = runner or SubprocessRunner()
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    copy = node_repository(root, bundle.origin)
    _own(root, copy)
    with _locked(copy.with_suffix(".lock")):
        _ensure_repository(runner, copy)
        added = bool(_missing(runner, copy, bundle))
        if added:
            if not bundle.data and fetch is not None:
                bundle = replace(bundle, data=fetch())
            _add_bundle(runner, copy, bundle)
        _ensure_head(runner, copy, bundle)
    return replace(
        _pinned(experiment, bundle.commits),
        repository=str(copy),
        plan_notes=(*experiment.plan_notes, _arrival_note(bundle, copy, added=added)),
    )


def node_repository(cache_root: Path, origin: str) -> Path:
    """The node's copy of the driver repository `origin`: one per driver repository, so a
    tree's build-cache key stays the same from one run's bundle to the next."""
    key = hashlib.sha256(origin.encode()).hexdigest()[:20]
    return cache_root / REPOSITORIES / f"{key}.git"


def _own(root: Path, copy: Path) -> None:
    """The copy's folder is perflab's: no link on the way to it, and the copy no link (a
    bundle unpacked through one would write into another repository)."""
    try:
        own_folder(root, copy.parent)
        if os.path.islink(copy):
            raise OSError(errno.ELOOP, "a link where perflab keeps its copy", str(copy))
    except OSError as error:
        raise ConfigError(
            f"cannot use the node's copy of the repository at {copy}: "
            f"{error.strerror or error} ({error.filename})",
            hint="remove that path (perflab makes it again), or pass --cache-dir DIR",
        ) from error


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held exclusive: two cells on one node add a bundle one after the other."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _ensure_repository(runner: ProcessRunner, copy: Path) -> None:
    """A bare repository with automatic gc off: its objects are reachable from no ref, so a
    gc would prune them."""
    if copy.is_dir():
        return
    # a fresh folder of its own: a name planted beside the copy is never initialised
    scratch = Path(tempfile.mkdtemp(dir=copy.parent, prefix=f"{copy.name}.", suffix=".tmp"))
    doing = f"make the node's copy {copy} of the driver's repository"
    _git_or_fail(runner, copy.parent, "init", "--quiet", "--bare", str(scratch), doing=doing)
    _git_or_fail(runner, scratch, "config", "gc.auto", "0", doing=doing)
    scratch.rename(copy)


def _missing(runner: ProcessRunner, copy: Path, bundle: CommitBundle) -> list[str]:
    """The bundle's commits the copy lacks. A commit there has its whole history there too:
    objects only arrive as whole bundles."""
    wanted = sorted(set(bundle.commits.values()))
    checked = runner.run(
        LaunchSpec(
            argv=("git", "cat-file", "--batch-check=%(objectname) %(objecttype)"),
            env=git_environment(),
            cwd=str(copy),
        ),
        timeout_s=120.0,
        stdin_text="".join(f"{commit}\n" for commit in wanted),
    )
    present = {line.split()[0] for line in checked.stdout.splitlines() if line.endswith(" commit")}
    return [commit for commit in wanted if commit not in present]


def _add_bundle(runner: ProcessRunner, copy: Path, bundle: CommitBundle) -> None:
    """The bundle's objects into the copy (`git bundle unbundle` writes a pack, no ref)."""
    file = copy.with_name(f"{copy.name}.{bundle.digest[:16]}.bundle")
    replace_file(file, bundle.data)
    try:
        _git_or_fail(
            runner,
            copy,
            "bundle",
            "unbundle",
            str(file),
            doing=f"unpack the driver's bundle into {copy}",
            hint="the node's disk may be full; removing that folder makes it again",
        )
    finally:
        file.unlink(missing_ok=True)
    missing = _missing(runner, copy, bundle)
    if missing:
        raise GitError(
            f"the bundle from the driver lacks commit {missing[0][:10]} after unpacking it "
            f"into {copy}",
            hint="remove that folder (the node's copy of the repository) and run again",
        )


def _ensure_head(runner: ProcessRunner, copy: Path, bundle: CommitBundle) -> None:
    """HEAD names a commit: the preparer compares each git= commit with HEAD (a bare copy has
    no working tree, so none is ever found dirty)."""
    head = run_git(runner, copy, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not head.ok:
        first = min(bundle.commits.values())
        _git_or_fail(
            runner, copy, "update-ref", "--no-deref", "HEAD", first, doing=f"set HEAD in {copy}"
        )


def _pinned(experiment: Experiment, commits: Mapping[str, str]) -> Experiment:
    """Each git= and apply= ref replaced by the commit it named on the driver, at each
    benchmark's parameters (a cell has one benchmark; a variant whose ref differs between the
    benchmarks of a larger experiment cannot be pinned once, and is refused)."""
    variants = []
    for template in experiment.variants:
        pinned = [_pin(template, b.params, commits) for b in experiment.benchmarks] or [template]
        if any(p != pinned[0] for p in pinned):
            raise ConfigError(
                f"variant {template.name}'s git= depends on the benchmark's parameters: its "
                "commits are pinned per cell",
                hint="unpack the commits of one cell (one benchmark) at a time",
                variant=template.name,
            )
        variants.append(pinned[0])
    return replace(experiment, variants=tuple(variants))


def _pin(template: Variant, params: Mapping[str, str], commits: Mapping[str, str]) -> Variant:
    variant = template.at(params)
    if not variant.git:
        return template
    apply = tuple(
        commits.get(change, original)
        for original, change in zip(template.apply, variant.apply, strict=True)
    )
    return replace(template, git=commits.get(variant.git, template.git), apply=apply)


def _arrival_note(bundle: CommitBundle, copy: Path, *, added: bool) -> str:
    mib = bundle.size_bytes / 2**20
    there = (
        "a folder at that path exists here too, unused"
        if os.path.isdir(bundle.origin)
        else "it is not on this node"
    )
    commits = len(set(bundle.commits.values()))
    if not added:
        return (
            f"the {commits} commit(s) of the git= variants were already all in the node's copy "
            f"{copy} of the driver's repository {bundle.origin} ({there}): the driver's git "
            f"bundle ({mib:.1f} MiB, {bundle.digest[:12]}) was not needed here"
        )
    return (
        f"the {commits} commit(s) of the git= variants came from the driver as a git bundle "
        f"({mib:.1f} MiB, {bundle.digest[:12]}), unpacked into the node's copy {copy} of the "
        f"driver's repository {bundle.origin} ({there})"
    )


def named_provenance(
    info: Mapping[str, Any], variant: Variant | None, commits: Mapping[str, str]
) -> dict[str, Any]:
    """A variant's provenance as a node recorded it, with the refs the user gave in place of
    the commits they were pinned to (`ref` "HEAD~1", not its SHA; an apply= commit's change by
    its name); `commit` and each change's `source` keep the full commit id."""
    named = dict(info)
    if variant is None or not variant.git:
        return named
    if named.get("ref") == commits.get(variant.git):
        named["ref"] = variant.git
    by_commit = {commits[change]: change for change in variant.apply if change in commits}
    changes = named.get("changes")
    if isinstance(changes, list):
        named["changes"] = [
            {**change, "name": by_commit.get(str(change.get("name")), change.get("name"))}
            if isinstance(change, dict) and change.get("kind") == "commit"
            else change
            for change in changes
        ]
    return named
