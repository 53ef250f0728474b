"""Isolated on-disk caches (engine/prepare/caches.py): each variant its own fresh directories,
of one name length, removed at the end; a variable a variant sets itself is its own; the
bytecode cache shared where no variant writes bytecode; JIT caches that were filled."""

from __future__ import annotations

from pathlib import Path

from perflab.engine.prepare.caches import CACHE_VARIABLES, IsolatedCaches, writes_no_bytecode
from perflab.records.model import Variant


def test_each_variant_gets_its_own_fresh_folders_removed_at_the_end(tmp_path: Path) -> None:
    a, b = Variant("A"), Variant("longer-name")
    with IsolatedCaches(parent=str(tmp_path)) as caches:
        env_a, env_b = caches.environment(a), caches.environment(b)
        assert set(env_a) == set(CACHE_VARIABLES) - (
            {"PYTHONPYCACHEPREFIX"} if writes_no_bytecode(a) else set()
        )
        assert all(Path(p).is_dir() for p in env_a.values())
        assert env_a["TRITON_CACHE_DIR"] != env_b["TRITON_CACHE_DIR"]
        # the environment's size moves the stack: every variant's paths are as long
        assert [len(p) for p in env_a.values()] == [len(env_b[k]) for k in env_a]
        assert caches.applied(a).env == env_a
        (root,) = tmp_path.iterdir()
    assert not root.exists()


def test_a_variable_a_variant_sets_is_its_own() -> None:
    mine = Variant("A", env={"XDG_CACHE_HOME": "/my/cache"})
    with IsolatedCaches() as caches:
        assert "XDG_CACHE_HOME" not in caches.isolated(mine)
        assert caches.applied(mine).env["XDG_CACHE_HOME"] == "/my/cache"


def test_shared_caches_change_no_variant() -> None:
    variant = Variant("A")
    with IsolatedCaches(enabled=False) as caches:
        assert caches.isolated(variant) == () and caches.environment(variant) == {}
        assert caches.applied(variant) is variant


def test_the_bytecode_cache_is_shared_where_no_bytecode_is_written() -> None:
    quiet = Variant("A", env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert writes_no_bytecode(quiet)
    assert "PYTHONPYCACHEPREFIX" not in IsolatedCaches().isolated(quiet)


def test_a_jit_cache_is_filled_when_it_holds_a_file(tmp_path: Path) -> None:
    (tmp_path / "inductor" / "ab").mkdir(parents=True)
    (tmp_path / "triton").mkdir()
    variant = Variant(
        "A",
        env={
            "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"),
            "TRITON_CACHE_DIR": str(tmp_path / "triton"),
        },
    )
    caches = IsolatedCaches()
    assert caches.filled(variant) == ()
    (tmp_path / "inductor" / "ab" / "kernel.py").write_text("")
    assert caches.filled(variant) == ("TORCHINDUCTOR_CACHE_DIR",)
