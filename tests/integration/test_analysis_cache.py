"""The analysis cache: keyed lookups, damaged entries, atomic writes, bounded size, bypass."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from perflab.store.analysis_cache import FORMAT, AnalysisCache, default_analysis_cache_dir

pytestmark = pytest.mark.integration


def entry_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".tmp-"))


def test_a_stored_value_comes_back_under_its_key_only(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    cache.put("callees", ["build-id:ab", "f", 16, 8], ["g", "h@plt"])
    assert cache.get("callees", ["build-id:ab", "f", 16, 8]) == ["g", "h@plt"]
    assert cache.get("callees", ["build-id:ab", "f", 16, 9]) is None
    assert cache.get("normalised-code", ["build-id:ab", "f", 16, 8]) is None
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (1, 2, 1)
    [entry] = entry_files(tmp_path)
    assert entry.relative_to(tmp_path).parts[:2] == (f"v{FORMAT}", "callees")


@pytest.mark.parametrize(
    "damage",
    [
        b"",  # truncated to nothing
        b"not zlib at all",
        zlib.compress(b"{not json"),
        zlib.compress(b'["a list, not an entry"]'),
        zlib.compress(b'{"key": [1, "callees", "another key"], "value": ["x"]}'),
    ],
)
def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path: Path, damage: bytes) -> None:
    cache = AnalysisCache(tmp_path)
    cache.put("callees", ["k"], ["g"])
    [entry] = entry_files(tmp_path)
    entry.write_bytes(damage)
    assert cache.get("callees", ["k"]) is None
    assert cache.stats.ignored == 1
    cache.put("callees", ["k"], ["g"])
    assert cache.get("callees", ["k"]) == ["g"]


def test_an_unreadable_entry_or_an_unwritable_cache_is_never_an_error(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path / "cache")
    cache.put("k", ["a"], 1)
    [entry] = entry_files(tmp_path / "cache")
    entry.unlink()
    entry.mkdir()  # a directory where the entry should be: reading and replacing it fail
    assert cache.get("k", ["a"]) is None
    cache.put("k", ["a"], 1)
    assert cache.stats.write_errors == 1
    blocked = AnalysisCache(tmp_path / "file")
    (tmp_path / "file").write_text("a file where the cache folder should be")
    blocked.put("k", ["a"], 1)
    assert blocked.get("k", ["a"]) is None
    assert blocked.stats.write_errors == 1


def test_writes_leave_no_temporary_files(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    for n in range(5):
        cache.put("k", [n], list(range(n)))
    assert not [p for p in tmp_path.rglob(".tmp-*")]


def test_two_processes_writing_one_entry_never_leave_half_an_entry(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from perflab.store.analysis_cache import AnalysisCache\n"
        "cache = AnalysisCache(Path(sys.argv[1]))\n"
        "value = ['x' * 1000] * 2000\n"
        "for _ in range(10):\n"
        "    cache.put('big', ['same key'], value)\n"
        "    assert cache.get('big', ['same key']) == value, 'a torn read'\n"
        "assert cache.stats.ignored == 0\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env) for _ in range(2)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    assert len(entry_files(tmp_path)) == 1


def test_trim_removes_the_least_recently_used_entries_first(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path, max_bytes=10**9)
    for n in range(4):
        cache.put("k", [n], "x" * 2000)
    paths = {n: cache._path("k", [n]) for n in range(4)}  # noqa: SLF001
    for n, where in paths.items():
        assert where is not None
        os.utime(where[0], (1000.0 + n, 1000.0 + n))  # entry 0 is the oldest ...
    cache.get("k", [0])  # ... until it is used again
    size = entry_files(tmp_path)[0].stat().st_size
    cache.max_bytes = 2 * size
    assert cache.trim() == 2 * size
    assert cache.get("k", [0]) is not None
    assert cache.get("k", [3]) is not None
    assert cache.get("k", [1]) is None and cache.get("k", [2]) is None


def test_trim_drops_older_formats_and_dead_writers_temporaries(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path)
    cache.put("k", ["kept"], 1)
    old = tmp_path / "v0" / "k" / "ab" / "entry"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"an entry of an older format")
    stale = tmp_path / f"v{FORMAT}" / "k" / ".tmp-dead"
    stale.write_bytes(b"half")
    os.utime(stale, (0, 0))
    fresh = tmp_path / f"v{FORMAT}" / "k" / ".tmp-writing"
    fresh.write_bytes(b"being written")
    cache.trim()
    assert not old.exists() and not stale.exists()
    assert fresh.exists()  # another process may be writing it right now
    assert cache.get("k", ["kept"]) == 1


def test_usage_and_clear(tmp_path: Path) -> None:
    cache = AnalysisCache(tmp_path, max_bytes=123)
    cache.put("k", ["a"], "x" * 100)
    cache.put("k", ["b"], "y")
    usage = cache.usage()
    assert (usage.path, usage.entries, usage.max_bytes) == (tmp_path, 2, 123)
    assert usage.bytes == sum(p.stat().st_size for p in entry_files(tmp_path))
    assert cache.clear() == usage.bytes
    assert cache.usage().entries == 0


def test_a_disabled_cache_stores_and_finds_nothing(tmp_path: Path) -> None:
    cache = AnalysisCache.disabled()
    cache.put("k", ["a"], 1)
    assert cache.get("k", ["a"]) is None
    assert not cache.enabled
    assert AnalysisCache.default(enabled=False).root is None


def test_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PERFLAB_ANALYSIS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_analysis_cache_dir() == tmp_path / "xdg" / "perflab" / "analysis"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_analysis_cache_dir() == tmp_path / "home" / ".cache" / "perflab" / "analysis"
    monkeypatch.setenv("PERFLAB_ANALYSIS_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_analysis_cache_dir() == tmp_path / "explicit"


def test_doctor_says_where_the_cache_is_how_full_and_how_to_bypass_it(tmp_path: Path) -> None:
    from perflab.diagnose.doctor import analysis_cache_check

    cache = AnalysisCache(tmp_path, max_bytes=2**30)
    cache.put("k", ["a"], "x" * 100)
    check = analysis_cache_check(cache)
    assert str(tmp_path) in check.detail and "1 entries" in check.detail
    assert "1024 MiB" in check.detail
    assert check.fix is not None and "--no-analysis-cache" in check.fix


@pytest.mark.usefixtures("private_cpu_locks")
def test_analysis_leaves_the_cpu_another_perflab_run_measures_on() -> None:
    from perflab.machine.host import online_cpus
    from perflab.machine.parallel import analysis_cpus

    cpus = online_cpus()
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    held = cpus[-1]
    other_run = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from perflab.machine.cpu_lock import try_lock\n"
            f"lock = try_lock({held}); print('locked', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert other_run.stdout is not None and other_run.stdout.readline() == "locked\n"
        assert held not in analysis_cpus()
    finally:
        other_run.communicate("", timeout=60)
    assert held in analysis_cpus()
