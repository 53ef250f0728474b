"""Dispatch known by evidence: the IFUNC resolvers of real gcc builds pair two builds' functions
as one call site's choice (target_clones), and never pair a renamed callee."""

from __future__ import annotations

import platform
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from perflab.lenses.profile.analyse import ProfileDetails, shared_resolvers
from perflab.tool_drivers.elf_dispatch import read_ifuncs
from perflab.tool_output.profile_diff import diff_profiles
from perflab.tool_output.profile_evidence import with_stack_evidence
from perflab.tool_output.profile_stacks import Stack, hot_symbols
from tests.corpus import sources

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        shutil.which("gcc") is None or platform.machine() != "x86_64",
        reason="needs gcc for x86-64 (target_clones of x86 ISAs)",
    ),
]


def _build(tmp: Path, source: str, name: str, *flags: str) -> Path:
    source_path = tmp / f"{name}.c"
    source_path.write_text(source)
    out = tmp / f"lib{name}.so"
    subprocess.run(
        ["gcc", "-O3", "-fPIC", "-shared", *flags, str(source_path), "-o", str(out)], check=True
    )
    return out


def _profiles(
    old: tuple[str, str], new: tuple[str, str], caller: str
) -> tuple[Counter[Stack], Counter[Stack]]:
    """The caller calling `old` on every baseline stack and `new` on every variant stack, each
    (object, function), leaf first as perf_script stores them."""
    base = Counter({(old, (old[0], caller), ("python", "main")): 900})
    variant = Counter({(new, (new[0], caller), ("python", "main")): 900})
    return base, variant


def _diagnoses(
    base: Counter[Stack], variant: Counter[Stack], paths: dict[str, str]
) -> list[tuple[str, str]]:
    diff = with_stack_evidence(
        diff_profiles(hot_symbols(base), hot_symbols(variant)), base, variant
    )
    details = ProfileDetails(
        diff,
        "cpu-clock",
        "dwarf",
        900,
        900,
        resolvers=shared_resolvers(diff.dispatches, paths, paths),
    )
    [pair] = details.to_json()["dispatch_changed"]
    claims = [(str(d.claim), d.function) for d in details.diagnoses()]
    assert pair["claim"] == claims[0][0]
    assert any(line.startswith("elf: ") for line in pair["evidence"]) == ("ifunc" in pair)
    return claims


def test_target_clones_in_two_builds_are_one_dispatch_by_their_resolvers(tmp_path: Path) -> None:
    base = _build(tmp_path, sources.TARGET_CLONES_LIB, "tclones_base")
    change = _build(
        tmp_path, sources.TARGET_CLONES_LIB, "tclones_change", '-DCLONES="sse4.2","default"'
    )
    [before] = read_ifuncs(str(base))
    [after] = read_ifuncs(str(change))
    assert (before.name, before.resolver, before.targets) == (
        "dot",
        "dot.resolver",
        ("dot.avx2", "dot.default"),
    )
    assert after.targets == ("dot.default", "dot.sse4_2")
    stacks = _profiles((base.name, "dot.avx2"), (change.name, "dot.sse4_2"), "run")
    paths = {base.name: str(base), change.name: str(change)}
    assert _diagnoses(*stacks, paths) == [("dispatch_changed", "dot")]
    # the same pair with its objects unknown (a store read where the builds are gone): the
    # call site is all that is known
    assert _diagnoses(*stacks, {}) == [("callee_changed", "run")]


def test_a_renamed_callee_in_two_builds_is_no_dispatch(tmp_path: Path) -> None:
    base = _build(tmp_path, sources.RENAMED, "renamed_base")
    change = _build(tmp_path, sources.RENAMED, "renamed_change", "-DCALLEE=compute_v2")
    assert read_ifuncs(str(base)) == () and read_ifuncs(str(change)) == ()
    stacks = _profiles((base.name, "compute_v1"), (change.name, "compute_v2"), "driver")
    paths = {base.name: str(base), change.name: str(change)}
    assert _diagnoses(*stacks, paths) == [("callee_changed", "driver")]


def test_a_resolver_that_loads_its_targets_from_the_got_names_them(tmp_path: Path) -> None:
    # the corpus's ifunc library: global targets, whose addresses the resolver loads from the
    # GOT rather than computing them
    library = _build(tmp_path, sources.IFUNC_LIB, "ifunc")
    [ifunc] = read_ifuncs(str(library))
    assert (ifunc.name, ifunc.resolver) == ("sum_ints", "resolve_sum_ints")
    assert ifunc.targets == ("sum_ints_avx2", "sum_ints_sse2")


def test_a_file_that_is_gone_or_not_elf_has_no_ifuncs(tmp_path: Path) -> None:
    (tmp_path / "text").write_text("not an object")
    assert read_ifuncs(str(tmp_path / "text")) == ()
    assert read_ifuncs(str(tmp_path / "missing.so")) == ()
