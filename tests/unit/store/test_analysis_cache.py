"""The analysis cache (store/analysis_cache.py): values kept by their full key, anything that is
not that key's entry a miss and never an error, a disabled cache a no-op, and trimming that
removes older formats, dead writers' temporaries and the least recently used entries."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from perflab.store.analysis_cache import FORMAT, AnalysisCache

KEY = ("build-id:abc", "objdump 2.40")


def test_a_value_is_read_back_by_its_key_and_counted(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    assert cache.get("symbols", KEY) is None
    cache.put("symbols", KEY, {"main": [0, 16]})
    assert cache.get("symbols", KEY) == {"main": [0, 16]}
    assert cache.get("symbols", ("build-id:other", "objdump 2.40")) is None
    assert cache.get("plt", KEY) is None  # another kind is another entry
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (1, 3, 1)


def test_an_entry_that_is_not_what_it_claims_is_a_miss_and_rewritten(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    cache.put("symbols", KEY, [1, 2])
    (entry,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    entry.write_bytes(b"not zlib")
    assert cache.get("symbols", KEY) is None and cache.stats.ignored == 1
    entry.write_bytes(zlib.compress(b'{"key": ["another"], "value": 1}'))
    assert cache.get("symbols", KEY) is None and cache.stats.ignored == 2
    cache.put("symbols", KEY, [1, 2])
    assert cache.get("symbols", KEY) == [1, 2]


def test_a_disabled_cache_misses_and_keeps_nothing(tmp_path: Path) -> None:
    cache = AnalysisCache.disabled()
    cache.put("symbols", KEY, 1)
    assert not cache.enabled and cache.get("symbols", KEY) is None
    assert cache.stats.writes == 0 and cache.trim() == 0


def test_a_link_planted_on_the_way_is_a_write_error_not_a_write_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "cache"
    (root / f"v{FORMAT}").mkdir(parents=True)
    (root / f"v{FORMAT}" / "symbols").symlink_to(elsewhere)
    cache = AnalysisCache(root)
    cache.put("symbols", KEY, 1)
    assert cache.stats.write_errors == 1 and list(elsewhere.iterdir()) == []


def test_trimming_removes_older_formats_dead_temporaries_and_the_least_recently_used(
    tmp_path: Path,
) -> None:
    cache = AnalysisCache(tmp_path, max_bytes=10**6)
    for n in range(3):
        cache.put("symbols", (f"build-id:{n}",), "x" * 1000)
    old_format = tmp_path / "v0" / "symbols" / "aa" / "entry"
    old_format.parent.mkdir(parents=True)
    old_format.write_bytes(b"old")
    shard = next((tmp_path / f"v{FORMAT}" / "symbols").iterdir())
    dead = shard / ".tmp-dead"
    dead.write_bytes(b"half")
    os.utime(dead, (0, 0))
    assert cache.usage().entries == 4  # temporaries are not entries
    cache.trim(now=10_000.0)
    assert not old_format.exists() and not dead.exists()
    # oldest first, down to the bound: only the most recently used entry stays
    cache.get("symbols", ("build-id:0",))  # used now: the most recent
    largest = max(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    small = AnalysisCache(tmp_path, max_bytes=largest)  # room for one entry
    assert small.trim() > 0
    assert small.get("symbols", ("build-id:0",)) == "x" * 1000
    assert small.usage().entries == 1
    assert small.clear() > 0 and small.usage().entries == 0
