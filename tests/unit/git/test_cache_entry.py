"""A cache entry's status is a `CacheStatus` in memory and the same strings in its description
(`perflab cache --json` shows them): written and read back unchanged (git/cache_entry.py)."""

from __future__ import annotations

import json
from pathlib import Path

from perflab.git.cache_entry import CacheEntry, CacheStatus, read_cache_entry, save_entry

KEY = "0123456789abcdef0123"


def _entry(root: Path, status: CacheStatus, build: str | None = "make") -> CacheEntry:
    return CacheEntry(
        key=KEY,
        path=root / KEY,
        repository="/repo",
        ref="main",
        commit="c",
        tree="t",
        build=build,
        status=status,
    )


def test_the_stored_status_strings_are_unchanged(tmp_path: Path) -> None:
    assert [s.value for s in CacheStatus] == ["checked-out", "built", "failed"]
    for status in CacheStatus:
        save_entry(tmp_path, _entry(tmp_path, status))
        stored = json.loads((tmp_path / f"{KEY}.json").read_text())
        assert stored["status"] == status.value
        read = read_cache_entry(tmp_path, tmp_path / f"{KEY}.json")
        assert read is not None and read.status is status


def test_a_status_perflab_does_not_know_reads_as_not_built(tmp_path: Path) -> None:
    stored = {**_entry(tmp_path, CacheStatus.BUILT).to_json(), "status": "half-built"}
    read = CacheEntry.from_json(stored)
    assert read.status is CacheStatus.CHECKED_OUT and not read.ready
    del stored["status"]
    assert CacheEntry.from_json(stored).status is CacheStatus.CHECKED_OUT


def test_an_entry_is_ready_when_built_or_with_nothing_to_build(tmp_path: Path) -> None:
    assert _entry(tmp_path, CacheStatus.BUILT).ready
    assert _entry(tmp_path, CacheStatus.CHECKED_OUT, build=None).ready
    assert not _entry(tmp_path, CacheStatus.CHECKED_OUT).ready
    assert not _entry(tmp_path, CacheStatus.FAILED).ready
