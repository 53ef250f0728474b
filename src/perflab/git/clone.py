"""perflab's own clone of a user's repository, in the build cache: every cached checkout is a
linked worktree of it, so the user's repository never gains a worktree, a ref, an object or a
line of config from a run.

The clone is bare and copies nothing: its objects are the user's, read through git's alternates
(`objects/info/alternates` names the user's object folder). Each run brings it up to date with
the user's repository before checking anything out: its branches and tags (a build's
`git describe` sees what it would see in the user's clone), its shallow boundary, and where
missing objects come from: the remotes' URLs (relative submodule URLs resolve against
`origin`'s), the `submodule.*.url` the user set, and a partial clone's promisor remote.

It lives at `<cache>/clones/<name>`, where `<name>` hashes the repository's path: a folder no
entry can be (entries are `<cache>/<key>` beside their `<key>.json`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import uuid
from pathlib import Path

from perflab.git.repo import GitError, git_environment, run_git
from perflab.machine.own_files import remove_tree, replace_file
from perflab.machine.proc import LaunchSpec, ProcessRunner

CLONES = "clones"
# what the clone mirrors of the user's refs: what builds read (describe, tags); not remotes
MIRRORED_REFS = ("refs/heads", "refs/tags")
# what the clone takes of the user's config: where objects and submodules come from
MIRRORED_CONFIG = (
    r"^(core\.repositoryformatversion|extensions\.partialclone|submodule\..*\.url"
    r"|remote\..*\.(url|promisor|partialclonefilter))$"
)


def clone_folder(root: Path, repository: str) -> Path:
    """Where the clone of `repository` lives in the cache at `root`."""
    name = hashlib.sha256(os.path.realpath(repository).encode()).hexdigest()[:20]
    return root / CLONES / name


def prepare_clone(runner: ProcessRunner, repository: str, folder: Path) -> None:
    """The clone of `repository` at `folder`, made when missing (in a new folder renamed into
    place, so a half-made clone is never used) and brought up to date. The caller holds the
    clone's lock exclusive: one run changes it at a time."""
    objects = _objects_folder(runner, repository)
    if _is_clone(folder):
        _update(runner, repository, objects, folder)
        return
    remove_tree(folder)  # a clone missing its files is no clone: made again
    new_folder = folder.with_name(f"{folder.name}.new-{uuid.uuid4().hex[:12]}")
    try:
        init = ("init", "-q", "--bare", *_object_format(runner, repository), str(new_folder))
        done = run_git(runner, folder.parent, *init)
        if not done.ok:
            raise GitError(
                f"cannot make perflab's clone of {repository} at {folder}",
                detail=(done.stdout + done.stderr).strip() or None,
                hint="perflab's cache folder must be writable (or pass --cache-dir DIR)",
            )
        # no automatic gc: the clone holds only the objects of changes applied, and a gc would
        # start in the middle of a run
        run_git(runner, new_folder, "config", "gc.auto", "0")
        _update(runner, repository, objects, new_folder)
        os.rename(new_folder, folder)
    except BaseException:
        remove_tree(new_folder)
        raise


def _object_format(runner: ProcessRunner, repository: str) -> tuple[str, ...]:
    """`--object-format=sha256` for a repository of sha256 ids (alternates of another hash
    cannot be read), else nothing (git's default, sha1)."""
    shown = run_git(runner, repository, "rev-parse", "--show-object-format").stdout.strip()
    return ("--object-format=sha256",) if shown == "sha256" else ()


def _is_clone(folder: Path) -> bool:
    """A real folder holding a repository: a link planted there is never used (perflab would
    write refs and config, and remove worktrees, where it points)."""
    try:
        real = stat.S_ISDIR(os.lstat(folder).st_mode)
    except OSError:
        return False
    return real and (folder / "HEAD").is_file() and (folder / "objects").is_dir()


def _objects_folder(runner: ProcessRunner, repository: str) -> Path:
    """The user's object folder (of the main repository, for a linked worktree too)."""
    done = run_git(runner, repository, "rev-parse", "--git-common-dir")
    objects = Path(os.path.realpath(os.path.join(repository, done.stdout.strip()))) / "objects"
    if not done.ok or not objects.is_dir():
        raise GitError(
            f"cannot find the objects of {repository} (looked in {objects})",
            detail=done.stderr.strip() or None,
            hint="run perflab in a git repository with its objects on this machine; "
            "`perflab cache prune` removes perflab's clone of a repository that moved",
        )
    return objects


def _update(runner: ProcessRunner, repository: str, objects: Path, clone: Path) -> None:
    """The clone's objects, shallow boundary, refs and submodule URLs set to the user's."""
    alternates = clone / "objects" / "info" / "alternates"
    # rewritten when the user's objects moved (the repository became a submodule's ...)
    if not alternates.is_file() or alternates.read_text().strip() != str(objects):
        alternates.parent.mkdir(parents=True, exist_ok=True)
        replace_file(alternates, f"{objects}\n".encode())
    shallow = objects.parent / "shallow"
    if shallow.is_file():
        replace_file(clone / "shallow", shallow.read_bytes())
    else:
        (clone / "shallow").unlink(missing_ok=True)
    _update_refs(runner, repository, clone)
    _update_config(runner, repository, clone)


def refs_of(runner: ProcessRunner, where: str | Path, *patterns: str) -> dict[str, str]:
    """Ref name -> object id of the repository at `where` (those under `patterns`, else all)."""
    listed = run_git(runner, where, "for-each-ref", "--format=%(objectname) %(refname)", *patterns)
    refs = {}
    for line in listed.stdout.splitlines():
        value, _, name = line.partition(" ")
        if name:
            refs[name] = value
    return refs


def _update_refs(runner: ProcessRunner, repository: str, clone: Path) -> None:
    """The clone's branches and tags made the user's, in one transaction (their objects are
    the user's: nothing is fetched)."""
    wanted = refs_of(runner, repository, *MIRRORED_REFS)
    held = refs_of(runner, clone, *MIRRORED_REFS)
    commands = [
        f"update {name} {value}\n" for name, value in wanted.items() if held.get(name) != value
    ]
    commands += [f"delete {name}\n" for name in held if name not in wanted]
    if not commands:
        return
    done = runner.run(
        _git_stdin(clone, "update-ref", "--no-deref", "--stdin"),
        timeout_s=120.0,
        stdin_text="".join(commands),
    )
    if not done.ok:
        raise GitError(
            f"cannot copy the branches and tags of {repository} into perflab's clone at {clone}",
            detail=done.stderr.strip() or None,
            hint="`perflab cache prune` removes the clone; the next run makes it again",
        )


def _update_config(runner: ProcessRunner, repository: str, clone: Path) -> None:
    """The user's settings that say where missing objects come from, set in the clone: the
    remotes' URLs (`origin`'s, else the user's repository, is what relative submodule URLs
    resolve against), the `submodule.*.url` the user set, and a partial clone's promisor
    remote (blobs it never fetched are fetched into the clone when a checkout needs them)."""
    wanted = _mirrored_config(runner, repository, "--local")
    if "remote.origin.url" not in wanted:
        wanted["remote.origin.url"] = os.path.realpath(repository)
    held = _mirrored_config(runner, clone, "--file", str(clone / "config"))
    for name, value in wanted.items():
        if held.get(name) != value:
            run_git(runner, clone, "config", "--file", str(clone / "config"), name, value)


def _mirrored_config(runner: ProcessRunner, where: str | Path, *scope: str) -> dict[str, str]:
    """The settings the clone takes from the user's repository, as one config file holds them."""
    listed = run_git(runner, where, "config", *scope, "--null", "--get-regexp", MIRRORED_CONFIG)
    settings = {}
    for item in listed.stdout.split("\0"):
        name, _, value = item.partition("\n")
        if name and value:
            settings[name] = value
    return settings


def _git_stdin(cwd: Path, *args: str) -> LaunchSpec:
    return LaunchSpec(argv=("git", *args), env=git_environment(), cwd=str(cwd))
