"""perflab's caches hold only what perflab made: an entry's description (`<key>.json`) that
names a folder outside the cache, a cache folder that is a link to another directory, a
temporary's name planted as a link: `cache prune`, a run, the bundle and analysis caches never
remove, write or run anything outside the cache, and the outside stays byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from perflab.git.bundle import BUNDLES, KEPT_BUNDLES, _cached_bundle
from perflab.git.cache import BuildCache
from perflab.git.cache_entry import CacheEntry, CacheStatus, cache_key, save_entry
from perflab.git.clone import clone_folder
from perflab.machine.proc import SubprocessRunner
from perflab.store.analysis_cache import FORMAT, AnalysisCache
from tests.support.cli_commands import FAST, perflab
from tests.support.git_repo import data_repo, git

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return data_repo(tmp_path)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Another user's folder: files perflab must never touch."""
    folder = tmp_path / "outside"
    (folder / "deep").mkdir(parents=True)
    (folder / "keep.txt").write_text("not perflab's\n")
    (folder / "deep" / "keep.bundle").write_bytes(b"\x00not a bundle of perflab's")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes() if path.is_file() else b"<dir>"
        for path in sorted(folder.rglob("*"))
    }


def describe(cache: Path, name: str, repo: Path, **fields: object) -> None:
    """A `<name>.json` entry description, as a hostile hand would write it."""
    cache.mkdir(parents=True, exist_ok=True)
    entry = {
        "key": name,
        "path": str(cache / name),
        "repository": str(repo),
        "ref": "main",
        "commit": git(repo, "rev-parse", "HEAD"),
        "tree": git(repo, "rev-parse", "HEAD^{tree}"),
        "build": None,
        "status": "checked-out",
        "created_at": 1.0,
        **fields,
    }
    (cache / f"{name}.json").write_text(json.dumps(entry))


def prune(cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = perflab("cache", "prune", "--cache-dir", str(cache), cwd=cwd)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.parametrize("kind", ["relative", "absolute"])
def test_prune_never_removes_a_folder_an_entry_names_outside_the_cache(
    repo: Path, outside: Path, tmp_path: Path, kind: str
) -> None:
    """`cache prune` with an entry description whose key names a folder outside the cache
    (`../outside`, or an absolute path): that folder stays byte for byte"""
    before = snapshot(outside)
    cache = tmp_path / "cache"
    key = "../outside" if kind == "relative" else str(outside)
    describe(cache, "0123456789abcdef0123", repo, key=key)
    prune(cache, tmp_path)
    assert snapshot(outside) == before


def test_prune_removes_a_cache_folder_that_is_a_link_as_a_link(
    repo: Path, outside: Path, tmp_path: Path
) -> None:
    """`cache prune` where an entry's folder, or a scratch `tmp-*` folder, is a link to a
    directory outside: the links go, what they point to stays byte for byte"""
    before = snapshot(outside)
    cache = tmp_path / "cache"
    key = "0123456789abcdef0123"
    describe(cache, key, repo)
    (cache / key).symlink_to(outside)
    (cache / "tmp-0123456789ab").symlink_to(outside)
    prune(cache, tmp_path)
    assert snapshot(outside) == before


def test_a_run_never_measures_in_a_folder_an_entry_names_outside_the_cache(
    repo: Path, tmp_path: Path
) -> None:
    """a cached entry for the very tree a variant asks for, whose description names a clone
    outside the cache as its checkout: the run checks out its own, and nothing runs there"""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    cache = tmp_path / "cache"
    key = cache_key(str(repo), git(repo, "rev-parse", "HEAD^{tree}"), None)
    describe(cache, key, repo, path=str(clone))
    done = perflab(
        "run", "--cmd", "touch planted-here", "-v", "A git=main", "-v", "B git=main",
        "--cache-dir", str(cache), "--store", str(tmp_path / "p.db"), *FAST, cwd=repo,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert not (clone / "planted-here").exists()


@pytest.mark.parametrize("planted", ["clones", "clone"])
def test_a_run_and_prune_never_use_a_clone_folder_that_is_a_link(
    repo: Path, outside: Path, tmp_path: Path, planted: str
) -> None:
    """the folder of perflab's clones, or one clone's folder, planted as a link to a directory
    outside the cache (holding a repository's files): a run never writes or checks out there
    (it says so, or replaces the link with its own clone), prune leaves what it points to"""
    git(outside, "init", "-q", "--bare", "deep/repo.git")
    before = snapshot(outside)
    cache = tmp_path / "cache"
    clone = clone_folder(cache, str(repo))
    clone.parent.mkdir(parents=True)
    if planted == "clones":
        clone.parent.rmdir()
        clone.parent.symlink_to(outside)
    else:
        clone.symlink_to(outside / "deep" / "repo.git")
    done = perflab(
        "run", "--cmd", "cat data.txt", "-v", "A git=main", "-v", "B git=main",
        "--cache-dir", str(cache), "--store", str(tmp_path / "p.db"), *FAST, cwd=repo,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    if planted == "clones":
        assert done.returncode == 3
        assert "cannot keep perflab's clones" in " ".join(done.stderr.split())
    else:
        assert done.returncode == 0, done.stderr
        assert not clone.is_symlink()
    prune(cache, tmp_path)
    assert snapshot(outside) == before


def test_an_entry_description_is_never_written_through_a_planted_link(
    repo: Path, outside: Path
) -> None:
    """the temporary a cache entry's description is written through, planted beforehand as
    a link to another file under the name perflab would use: that file stays byte for byte"""
    before = snapshot(outside)
    cache = BuildCache(outside.parent / "cache", SubprocessRunner())
    key = "0123456789abcdef0123"
    cache.root.mkdir()
    for name in (f"{key}.{os.getpid()}.tmp", f"{key}.tmp"):
        (cache.root / name).symlink_to(outside / "keep.txt")
    entry = CacheEntry(
        key=key, path=cache.root / key, repository=str(repo), ref="main", commit="c",
        tree="t", build=None, status=CacheStatus.CHECKED_OUT,
    )  # fmt: skip
    save_entry(cache.root, entry)
    assert snapshot(outside) == before
    assert json.loads((cache.root / f"{key}.json").read_text())["key"] == key


def test_the_bundle_cache_never_writes_or_removes_through_a_linked_folder(
    repo: Path, outside: Path
) -> None:
    """the bundle cache (--ray's commits) whose `bundles` folder is a link to a directory
    holding more bundles than perflab keeps: none of them is removed, nothing is added"""
    for number in range(KEPT_BUNDLES + 2):
        (outside / f"{number}.bundle").write_bytes(b"theirs")
    before = snapshot(outside)
    cache = outside.parent / "cache"
    cache.mkdir()
    (cache / BUNDLES).symlink_to(outside)
    data = _cached_bundle(SubprocessRunner(), str(repo), [git(repo, "rev-parse", "HEAD")], cache)
    assert data.startswith(b"# v2 git bundle")
    assert snapshot(outside) == before


def test_the_analysis_cache_never_writes_through_a_linked_folder(outside: Path) -> None:
    """the analysis cache whose format folder is a link to another directory: a value put
    there is not written (counted as a write error), the directory stays byte for byte"""
    before = snapshot(outside)
    root = outside.parent / "analysis"
    root.mkdir()
    (root / f"v{FORMAT}").symlink_to(outside)
    cache = AnalysisCache(root)
    cache.put("kind", ["key"], {"value": 1})
    assert cache.stats.write_errors == 1
    assert snapshot(outside) == before


def test_prune_leaves_another_repositorys_worktree_records_alone(
    repo: Path, tmp_path: Path
) -> None:
    """`cache prune` with an entry naming a repository whose own worktree (not perflab's)
    is on a drive that is not mounted now: git's record of that worktree stays"""
    away = tmp_path / "away"
    git(repo, "worktree", "add", "-q", "--detach", str(away))
    shutil.rmtree(away)  # as if its drive were unmounted
    records = sorted(p.name for p in (repo / ".git" / "worktrees").iterdir())
    cache = tmp_path / "cache"
    key = "0123456789abcdef0123"
    describe(cache, key, repo)
    (cache / key).mkdir()
    prune(cache, tmp_path)
    assert sorted(p.name for p in (repo / ".git" / "worktrees").iterdir()) == records


@pytest.mark.parametrize("action", ["list", "prune"])
def test_a_description_with_fields_of_the_wrong_type_is_skipped(
    repo: Path, tmp_path: Path, action: str
) -> None:
    """`cache list` and `cache prune` over an entry description whose fields have the wrong
    types (`"changes": 5`, `"created_at": null`): skipped as not perflab's, no traceback
    (a TypeError escaped)"""
    cache = tmp_path / "cache"
    describe(cache, "0123456789abcdef0123", repo, changes=5, created_at=None)
    done = perflab("cache", action, "--cache-dir", str(cache), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert (cache / "0123456789abcdef0123.json").exists()
