"""Sampled call stacks counted (tool_output/profile_stacks.py): self and children shares, the
sampled places inside a function, and folded stacks written and read back."""

from __future__ import annotations

import pytest

from perflab.tool_output.perf_script import UNKNOWN, Frame, ProfileSample
from perflab.tool_output.profile_stacks import (
    address_histogram,
    folded_stacks,
    hot_symbols,
    leaf_places,
    parse_folded,
    stack_symbols,
    stacks_of,
    top_symbols,
)

LIBC = "/usr/lib/libc.so.6"
PROG = "/opt/prog"


def sample(*frames: tuple[str, str, int], dso: str = PROG) -> ProfileSample:
    """A sample whose frames, leaf first, are (symbol, its dso, offset)."""
    return ProfileSample(
        "prog", 1, 1, 0.0, 1000, "cpu-clock",
        tuple(Frame(0x1000 + offset, symbol, offset, where) for symbol, where, offset in frames),
    )  # fmt: skip


SAMPLES = [
    sample(("memset", LIBC, 4), ("work", PROG, 16), ("main", PROG, 8)),
    sample(("memset", LIBC, 8), ("work", PROG, 16), ("main", PROG, 8)),
    sample(("work", PROG, 20), ("main", PROG, 8)),
    sample(("fib", PROG, 0), ("fib", PROG, 4), ("main", PROG, 8)),  # recursion
    sample(),  # no frame: counted in the total only
]


def test_self_and_children_shares_per_symbol_and_self_per_object() -> None:
    summary = hot_symbols(SAMPLES)
    assert summary.total_samples == 5
    # by self samples, then by children: work and fib have one each, work is under more
    assert [s.name for s in summary.symbols] == ["memset", "work", "fib", "main"]
    memset = summary.share_of("memset")
    assert memset is not None and memset.object == "libc.so.6"
    assert (memset.self_samples, memset.self_share) == (2, 0.4)
    main = summary.share_of("main")
    assert main is not None and (main.self_samples, main.children_samples) == (0, 4)
    fib = summary.share_of("fib")
    assert fib is not None and fib.children_samples == 1  # a recursion counts once a sample
    assert [(o.object, o.self_samples) for o in summary.objects] == [("libc.so.6", 2), ("prog", 2)]
    assert summary.share_of("absent") is None
    assert hot_symbols([]).total_samples == 0


def test_a_plt_stubs_samples_are_its_target_functions() -> None:
    # perf named a stub's samples `_Py_Dealloc@plt` in one run of identical code and
    # `_Py_Dealloc` in the other (an A/A's false "disappeared", 2026-11-30)
    lib = "/usr/lib/libpython3.11.so.1.0"
    one = hot_symbols(
        [
            sample(("_Py_Dealloc@plt", lib, 0), ("list_dealloc", lib, 8)),
            sample(("_Py_Dealloc", lib, 4), ("list_dealloc", lib, 8)),
        ]
    )
    other = hot_symbols([sample(("_Py_Dealloc", lib, 4), ("list_dealloc", lib, 8))] * 2)
    assert one == other
    assert one.share_of("_Py_Dealloc@plt") is None


def test_counted_stacks_give_the_same_shares_as_the_samples() -> None:
    assert hot_symbols(stacks_of(SAMPLES)) == hot_symbols(SAMPLES)
    assert stack_symbols(stacks_of(SAMPLES)) == {"memset", "work", "main", "fib"}


def test_the_places_sampled_inside_a_function() -> None:
    places = leaf_places(SAMPLES)
    assert places[(LIBC, "memset", 4)] == 1 and places[(PROG, "work", 20)] == 1
    assert address_histogram(SAMPLES, "memset") == {4: 1, 8: 1}
    assert address_histogram(SAMPLES, "memset", object_name="prog") == {}
    assert address_histogram(SAMPLES, "memset", object_name="libc.so.6") == {4: 1, 8: 1}


def test_folded_stacks_are_root_first_and_read_back_leaf_first() -> None:
    text = folded_stacks(SAMPLES)
    assert "prog`main;prog`work;libc.so.6`memset 2\n" in text
    assert text.splitlines() == sorted(text.splitlines())
    expected = stacks_of(SAMPLES)
    del expected[()]  # a sample without a frame has no line
    assert parse_folded(text) == expected
    assert folded_stacks([]) == ""


def test_folded_names_keep_the_separators_out_and_bad_lines_are_skipped() -> None:
    odd = sample(("operator;()", PROG, 0))
    assert folded_stacks([odd]) == "prog`operator,() 1\n"
    read = parse_folded("bare 3\nprog`a;prog`b notanumber\n\nx`y 2\n")
    assert read == {(("", "bare"),): 3, (("x", "y"),): 2}


@pytest.mark.parametrize(("limit", "names"), [(10, ["work", "fib"]), (1, ["work"])])
def test_the_hottest_resolved_symbols_not_excluded(limit: int, names: list[str]) -> None:
    unresolved = sample((f"{UNKNOWN} prog", PROG, 0))
    summary = hot_symbols([*SAMPLES, unresolved, unresolved, unresolved])
    assert top_symbols(summary, ("memset", "main"), limit=limit) == names
