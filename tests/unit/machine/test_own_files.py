"""Files and folders in perflab's own caches (machine/own_files.py): written by a rename that
replaces a planted link, folders used only when real all the way down, a link removed as a link."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from perflab.machine.own_files import own_folder, remove_tree, replace_file


def test_a_file_is_replaced_whole_and_a_planted_link_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "entry.json"
    replace_file(target, b"one")
    assert target.read_bytes() == b"one"
    plain = tmp_path / "plain"
    plain.write_text("")
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    target.unlink()
    target.symlink_to(victim)
    replace_file(target, b"two")
    assert not target.is_symlink() and target.read_bytes() == b"two"
    assert victim.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json", "plain", "victim"]


def test_a_folder_is_made_one_level_at_a_time_below_the_root(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    made = own_folder(root, root / "clones" / "abc")
    assert made.is_dir() and own_folder(root, made) == made  # there already: fine


def test_a_link_or_a_file_on_the_way_down_is_refused_and_nothing_made_past_it(
    tmp_path: Path,
) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "clones").symlink_to(elsewhere)
    with pytest.raises(OSError, match="a link or a file where perflab keeps a folder"):
        own_folder(root, root / "clones" / "abc")
    assert list(elsewhere.iterdir()) == []
    (root / "file").write_text("")
    with pytest.raises(OSError):
        own_folder(root, root / "file" / "abc")


def test_the_root_itself_may_be_a_link(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    (tmp_path / "cache").symlink_to(disk)
    own_folder(tmp_path / "cache", tmp_path / "cache" / "clones")
    assert (disk / "clones").is_dir()


def test_removing_a_tree_removes_a_link_but_not_what_it_points_to(tmp_path: Path) -> None:
    tree = tmp_path / "entry"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "out.o").write_text("")
    remove_tree(tree)
    assert not tree.exists()
    kept = tmp_path / "users"
    kept.mkdir()
    (kept / "mine").write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(kept)
    remove_tree(link)
    assert not link.is_symlink() and (kept / "mine").read_text() == "keep"
    remove_tree(tmp_path / "never-there")  # nothing there: nothing to do
