"""perflab's own clone of the user's repository (git/clone.py), on FakeCheckouts: made in a new
folder renamed into place, reading the user's objects through alternates, its branches, tags,
shallow boundary and origin made the user's, and only brought up to date after."""

from __future__ import annotations

import os
from pathlib import Path

from perflab.git.clone import CLONES, clone_folder, prepare_clone, refs_of
from perflab.machine.fake_processes import FakeRunner
from tests.support.fake_git import FakeCheckouts

MAIN = "c" * 40
TAG = "a" * 40


def setup(tmp_path: Path) -> tuple[FakeCheckouts, FakeRunner, Path]:
    checkouts = FakeCheckouts(tmp_path / "repo")
    checkouts.refs.update({"refs/heads/main": MAIN, "refs/tags/v1": TAG})
    folder = clone_folder(tmp_path / "cache", str(checkouts.repository))
    folder.parent.mkdir(parents=True)
    return checkouts, FakeRunner().on_run(r"^git ", checkouts), folder


def asked(runner: FakeRunner) -> list[tuple[str, ...]]:
    return [spec.argv[1:] for spec, _ in runner.calls]


def test_the_clone_lives_under_clones_by_a_hash_of_the_repositorys_real_path(
    tmp_path: Path,
) -> None:
    folder = clone_folder(tmp_path, "/src/app")
    assert folder.parent == tmp_path / CLONES and len(folder.name) == 20
    assert clone_folder(tmp_path, "/src/app/") == folder
    assert clone_folder(tmp_path, "/src/other") != folder


def test_a_new_clone_reads_the_users_objects_and_takes_its_refs_and_origin(
    tmp_path: Path,
) -> None:
    checkouts, runner, folder = setup(tmp_path)
    prepare_clone(runner, str(checkouts.repository), folder)
    assert (folder / "HEAD").is_file() and (folder / "objects").is_dir()
    objects = checkouts.repository / ".git" / "objects"
    assert (folder / "objects" / "info" / "alternates").read_text() == f"{objects}\n"
    assert list(folder.parent.iterdir()) == [folder]  # made beside it, then renamed
    (updates,) = [text for spec, text in runner.calls if "--stdin" in spec.argv]
    assert updates == f"update refs/heads/main {MAIN}\nupdate refs/tags/v1 {TAG}\n"
    # origin is the user's repository where it names none (relative submodule URLs resolve
    # against it), set in the new clone's own config file
    (origin,) = [a for a in asked(runner) if a[-2:-1] == ("remote.origin.url",)]
    assert origin[:2] == ("config", "--file") and origin[2].endswith("/config")
    assert origin[-1] == os.path.realpath(checkouts.repository)
    assert ("config", "gc.auto", "0") in asked(runner)  # no gc starting mid-run


def test_an_existing_clone_is_brought_up_to_date_not_made_again(tmp_path: Path) -> None:
    checkouts, runner, folder = setup(tmp_path)
    prepare_clone(runner, str(checkouts.repository), folder)
    shallow = checkouts.repository / ".git" / "shallow"
    shallow.write_text(MAIN + "\n")
    again = FakeRunner().on_run(r"^git ", checkouts)
    prepare_clone(again, str(checkouts.repository), folder)
    assert not any(a[0] == "init" for a in asked(again))
    assert (folder / "shallow").read_text() == MAIN + "\n"  # the user's boundary, copied
    shallow.unlink()
    prepare_clone(FakeRunner().on_run(r"^git ", checkouts), str(checkouts.repository), folder)
    assert not (folder / "shallow").exists()


def test_a_clone_missing_its_files_is_made_again(tmp_path: Path) -> None:
    checkouts, runner, folder = setup(tmp_path)
    folder.mkdir()
    (folder / "stray").write_text("")
    prepare_clone(runner, str(checkouts.repository), folder)
    assert (folder / "HEAD").is_file() and not (folder / "stray").exists()


def test_refs_are_read_name_to_object() -> None:
    listed = f"{MAIN} refs/heads/main\n{TAG} refs/tags/v1\nbroken\n"
    runner = FakeRunner().on_run(r"^git for-each-ref", stdout=listed)
    assert refs_of(runner, "/repo", "refs/heads") == {"refs/heads/main": MAIN, "refs/tags/v1": TAG}
    ((spec, _),) = runner.calls
    assert spec.argv[-1] == "refs/heads" and spec.cwd == "/repo"
