"""Which functions the asm lens lists and where they are: the hot families of a profile, the
functions a --symbol pattern names, the copy of a name the samples ran in, a function's split-off
fragments, and where another variant's function is defined here. The objects are built in memory
and handed out in place of reading ELF files."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pytest

from perflab.lenses.asm import locate
from perflab.lenses.asm.locate import (
    MAX_MATCHES_PER_PATTERN,
    FoundFunction,
    choose_functions,
    family_samples,
    find_families,
    find_hot,
    find_named,
    presence,
    sampled_copies,
    union_in_order,
    with_fragments,
)
from perflab.lenses.asm.sources import CodeSample, ProfiledRegion
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.elf_objects import CodeLookupError, ElfObject, ElfSymbol
from perflab.tool_output.object_names import object_basename

EXE = "/venv/bin/python3.12"
LIB = "/lib/libkernels.so"
OTHER = "/lib/libother.so"
PYLIB = "/usr/lib/libpython3.12.so.1.0"
LOCALE = "/usr/lib/locale/locale-archive"  # mapped executable, but not an ELF object
# mangled -> demangled; names missing here are not mangled
DEMANGLED = {"_Z6kernelv": "kernel()", "_Z6kernelv.cold": "kernel() [clone .cold]"}


class _Demangler:
    def demangle(self, names: Sequence[str]) -> dict[str, str]:
        return {name: DEMANGLED.get(name, name) for name in names}


def _symbol(name: str, address: int, size: int = 16) -> ElfSymbol:
    return ElfSymbol(name, DEMANGLED.get(name, name), address, size, True, True)


def _object(path: str, *symbols: ElfSymbol) -> ElfObject:
    return ElfObject(
        path=path,
        position_independent=True,
        segments=(),
        sections=(),
        symbols=tuple(sorted(symbols, key=lambda s: s.address)),
        plt={},
        got={},
    )


def _functions(path: str, *names: str) -> ElfObject:
    return _object(path, *(_symbol(name, 0x1000 * (i + 1)) for i, name in enumerate(names)))


@pytest.fixture
def objects(monkeypatch: pytest.MonkeyPatch) -> dict[str, ElfObject]:
    """The ELF objects `locate` reads, by path; a path not in it is not an ELF object."""
    built: dict[str, ElfObject] = {}

    def load(path: str, demangler: object, cache: AnalysisCache | None = None) -> ElfObject:
        if path not in built:
            raise CodeLookupError(f"{path}: not an x86-64 ELF object")
        return built[path]

    monkeypatch.setattr(locate, "load_elf_object", load)
    return built


def _region(weights: Mapping[tuple[str, str], float], *mapped: str) -> ProfiledRegion:
    samples = tuple(
        CodeSample(path, symbol, 0, weight) for (path, symbol), weight in weights.items()
    )
    paths = dict.fromkeys([*(path for path, _ in weights), *mapped])
    return ProfiledRegion(samples, tuple(paths))


def _names(found: Sequence[FoundFunction]) -> list[str]:
    return [f.symbol.name for f in found]


# ---- find_hot: the most sampled families, each with every sampled member


@pytest.mark.parametrize(
    ("weights", "limit", "expected"),
    [
        # hottest first, cut at the limit
        ({"a": 50.0, "b": 30.0, "c": 20.0}, 2, ["a", "b"]),
        # a family's members are summed: b's 30 + 25 in two pieces outweigh a's 45
        ({"a": 45.0, "b": 30.0, "b.cold": 25.0}, 1, ["b", "b.cold"]),
        # ISA members of one dispatch family are one function
        (
            {"k": 40.0, "at::native::AVX2::v(float)": 35.0, "at::native::DEFAULT::v(float)": 25.0},
            1,
            ["at::native::AVX2::v(float)", "at::native::DEFAULT::v(float)"],
        ),
        # below 1% of the samples a function is not listed, whatever the limit
        ({"a": 995.0, "tiny": 5.0}, 5, ["a"]),
        # mangled names are grouped by their demangled family
        (
            {"_Z6kernelv": 30.0, "_Z6kernelv.cold": 30.0, "a": 40.0},
            1,
            ["_Z6kernelv", "_Z6kernelv.cold"],
        ),
    ],
    ids=["ranked", "fragments-summed", "isa-members-summed", "under-one-percent", "demangled"],
)
def test_find_hot_lists_the_hottest_families_with_their_members(
    objects: dict[str, ElfObject], weights: dict[str, float], limit: int, expected: list[str]
) -> None:
    objects[LIB] = _functions(LIB, *weights)
    region = _region({(LIB, name): w for name, w in weights.items()})
    found = find_hot(region, _Demangler(), limit)
    assert sorted(_names(found)) == sorted(expected)
    assert all(f.cost == weights[f.symbol.name] and f.starts == () for f in found)


def test_find_hot_leaves_out_what_no_object_defines(objects: dict[str, ElfObject]) -> None:
    objects[LIB] = _functions(LIB, "a")
    region = _region(
        {
            (LOCALE, "b"): 40.0,  # not an ELF object
            (LIB, "gone"): 30.0,  # not in the object's symbol table
            ("[vdso]", "c"): 20.0,  # not a file
            (LIB, ""): 15.0,  # unnamed code
            (LIB, "a"): 10.0,
        }
    )
    assert _names(find_hot(region, _Demangler(), 10)) == ["a"]


def test_find_hot_of_a_region_without_samples_is_empty(objects: dict[str, ElfObject]) -> None:
    assert find_hot(ProfiledRegion((), (LIB,)), _Demangler(), 5) == []


def test_find_hot_keeps_the_copy_the_samples_ran_in(objects: dict[str, ElfObject]) -> None:
    first, second = _symbol("kernel", 0x1010), _symbol("kernel", 0x2020)
    objects[LIB] = _object(LIB, first, second)
    start = 0x7F0000002020  # loaded page-aligned: the offset in its page names the second
    sample = CodeSample(LIB, "kernel", 4, 60.0, symbol_start=start)
    [found] = find_hot(ProfiledRegion((sample,), (LIB,)), _Demangler(), 1)
    assert (found.symbol, found.cost, found.starts) == (second, 60.0, (start,))


def test_find_hot_falls_back_to_the_first_copy_when_none_is_told_apart(
    objects: dict[str, ElfObject],
) -> None:
    first, second = _symbol("kernel", 0x1010), _symbol("kernel", 0x2020)
    objects[LIB] = _object(LIB, first, second)
    sample = CodeSample(LIB, "kernel", 4, 60.0)  # stored before starts were kept
    [found] = find_hot(ProfiledRegion((sample,), (LIB,)), _Demangler(), 1)
    assert (found.symbol, found.cost, found.starts) == (first, 60.0, ())


# ---- find_families: the sampled members of families chosen in another variant


def test_find_families_lists_the_named_families_in_any_object(
    objects: dict[str, ElfObject],
) -> None:
    objects[LIB] = _functions(LIB, "hot", "b.cold")
    objects[OTHER] = _functions(OTHER, "b")
    region = _region({(LIB, "hot"): 90.0, (OTHER, "b"): 6.0, (LIB, "b.cold"): 4.0})
    found = find_families(region, {"b", "absent"}, _Demangler())
    assert [(object_basename(f.object.path), f.symbol.name) for f in found] == [
        ("libother.so", "b"),
        ("libkernels.so", "b.cold"),
    ]
    assert find_families(region, set(), _Demangler()) == []


# ---- find_named / choose_functions: the functions --symbol names


def test_find_named_takes_the_first_object_that_defines_a_match(
    objects: dict[str, ElfObject],
) -> None:
    objects[LIB] = _functions(LIB, "compute_v1", "compute_v2", "unrelated")
    objects[OTHER] = _functions(OTHER, "compute_v3")
    # OTHER was sampled, so it is searched first; LIB only mapped
    region = _region({(OTHER, "compute_v3"): 5.0}, LIB)
    assert _names(find_named(region, [re.compile("compute")], _Demangler())) == ["compute_v3"]
    assert _names(find_named(region, [re.compile("compute_v[12]")], _Demangler())) == [
        "compute_v1",
        "compute_v2",
    ]


def test_find_named_lists_sampled_matches_first_then_by_name(
    objects: dict[str, ElfObject],
) -> None:
    objects[LIB] = _functions(LIB, "f_b", "f_a", "f_c")
    region = _region({(LIB, "f_c"): 7.0})
    found = find_named(region, [re.compile("^f_")], _Demangler())
    assert [(f.symbol.name, f.cost) for f in found] == [("f_c", 7.0), ("f_a", 0.0), ("f_b", 0.0)]


def test_find_named_matches_mangled_or_demangled_names(objects: dict[str, ElfObject]) -> None:
    objects[LIB] = _functions(LIB, "_Z6kernelv", "other")
    region = _region({}, LIB)
    for pattern in (r"kernel\(\)", "_Z6kernel"):
        assert _names(find_named(region, [re.compile(pattern)], _Demangler())) == ["_Z6kernelv"]
    assert find_named(region, [re.compile("absent")], _Demangler()) == []


def test_find_named_lists_at_most_so_many_per_pattern_and_each_once(
    objects: dict[str, ElfObject],
) -> None:
    names = [f"t{i:02d}" for i in range(MAX_MATCHES_PER_PATTERN + 4)]
    objects[LIB] = _functions(LIB, *names)
    region = _region({}, LIB)
    found = find_named(region, [re.compile("^t"), re.compile("^t00$")], _Demangler())
    assert _names(found) == names[:MAX_MATCHES_PER_PATTERN]


def test_choose_functions_searches_the_patterns_when_given_else_the_hot_ones(
    objects: dict[str, ElfObject],
) -> None:
    objects[LIB] = _functions(LIB, "hot", "cold_named")
    region = _region({(LIB, "hot"): 50.0}, LIB)
    assert _names(choose_functions(region, [], _Demangler(), 3)) == ["hot"]
    named = choose_functions(region, [re.compile("cold_")], _Demangler(), 3)
    assert [(f.symbol.name, f.cost) for f in named] == [("cold_named", 0.0)]


# ---- sampled_copies: which of several functions of one name the samples ran in


A, B = _symbol("k", 0x1010), _symbol("k", 0x2020)
TWIN = _symbol("k", 0x3010)  # at A's offset in its page: the two are not told apart


@pytest.mark.parametrize(
    ("matches", "starts", "expected"),
    [
        # each start names one copy; the heavier copy first
        (
            (A, B),
            {0x7F0000001010: 10.0, 0x7F0000002020: 30.0},
            [(B, 30.0, (0x7F0000002020,)), (A, 10.0, (0x7F0000001010,))],
        ),
        # two processes loaded one copy at two addresses: one copy, both starts
        (
            (A, B),
            {0x7F0000001010: 10.0, 0x7E0000001010: 5.0},
            [(A, 15.0, (0x7F0000001010, 0x7E0000001010))],
        ),
        # a start at no copy's offset in its page
        ((A, B), {0x7F0000001234: 10.0}, []),
        # a start that fits two copies tells neither apart
        ((A, TWIN), {0x7F0000001010: 10.0}, []),
        # no starts known
        ((A, B), {}, []),
    ],
    ids=["one-each", "one-copy-two-starts", "fits-none", "fits-two", "no-starts"],
)
def test_sampled_copies_tells_copies_apart_by_the_offset_in_their_page(
    matches: tuple[ElfSymbol, ...],
    starts: dict[int, float],
    expected: list[tuple[ElfSymbol, float, tuple[int, ...]]],
) -> None:
    obj = _object(LIB, *matches)
    found = sampled_copies(obj, matches, starts)
    assert [(f.symbol, f.cost, f.starts) for f in found] == expected
    assert all(f.object is obj for f in found)


# ---- family_samples


def test_family_samples_sums_every_sampled_function_per_family() -> None:
    region = _region(
        {
            (LIB, "_Z6kernelv"): 10.0,
            (LIB, "_Z6kernelv.cold"): 2.0,
            (LIB, "at::native::AVX2::v(float)"): 3.0,
            (OTHER, "at::native::DEFAULT::v(float)"): 4.0,
            (LIB, "tiny"): 0.5,
            ("[vdso]", "clock"): 9.0,
        }
    )
    assert family_samples(region, _Demangler()) == {
        "kernel()": 12.0,
        "at::native::CPU_CAPABILITY::v(float)": 7.0,
        "tiny": 0.5,
    }


# ---- with_fragments: a function's split-off pieces, sampled or not


def test_with_fragments_adds_each_functions_split_off_pieces() -> None:
    names = ("foo", "foo.cold", "foo.part.0", "foo.isra.0", "foo.bar.cold", "foobar.cold", "x")
    obj = _functions(LIB, *names)
    foo = obj.find("foo")[0]
    region = _region({(LIB, "foo"): 10.0, (LIB, "foo.part.0"): 3.0})
    found = with_fragments([FoundFunction(obj, foo, 10.0)], region)
    assert [(f.symbol.name, f.cost) for f in found] == [
        ("foo", 10.0),
        ("foo.cold", 0.0),
        ("foo.part.0", 3.0),
    ]


def test_with_fragments_lists_a_fragment_already_found_once() -> None:
    obj = _functions(LIB, "foo", "foo.cold")
    foo, cold = obj.find("foo")[0], obj.find("foo.cold")[0]
    found = [FoundFunction(obj, foo, 10.0), FoundFunction(obj, cold, 2.0)]
    assert with_fragments(found, _region({})) == found
    assert with_fragments([], _region({})) == []


# ---- presence: where this variant defines a function another variant listed


def test_presence_looks_in_the_same_library_and_the_executables_first(
    objects: dict[str, ElfObject],
) -> None:
    pylib = "/usr/lib/libpython3.13.so.1.0"  # another version of the library asked about
    objects[pylib] = _functions(pylib, "eval_frame")
    objects[EXE] = _functions(EXE, "main")
    objects[OTHER] = _functions(OTHER, "eval_frame")
    region = _region({}, OTHER, pylib, EXE, LOCALE)
    defined, searched = presence([("eval_frame", "libpython3.12.so.1.0")], region, _Demangler())
    assert defined == {"eval_frame": ["eval_frame in libpython3.13.so.1.0"]}
    assert searched == {"eval_frame": [pylib, EXE]}  # libother.so not needed


def test_presence_searches_every_other_object_before_saying_not_defined(
    objects: dict[str, ElfObject],
) -> None:
    objects[PYLIB] = _functions(PYLIB, "eval_frame")
    objects[OTHER] = _functions(OTHER, "helper", "helper.cold")
    region = _region({}, PYLIB, OTHER, LOCALE)
    defined, searched = presence(
        [("helper", "libpython3.12.so.1.0"), ("absent", "libpython3.12.so.1.0")],
        region,
        _Demangler(),
    )
    # a fragment is defined under its function's family too
    assert defined == {"helper": ["helper in libother.so", "helper.cold in libother.so"]}
    assert searched == {"helper": [PYLIB, OTHER], "absent": [PYLIB, OTHER]}


def test_presence_of_nothing_wanted_searches_nothing(objects: dict[str, ElfObject]) -> None:
    assert presence([], _region({}, LIB), _Demangler()) == ({}, {})


# ---- union_in_order


def test_union_in_order_lists_each_family_and_object_once_hottest_first() -> None:
    lib, other = _functions(LIB, "a", "b"), _functions(OTHER, "a")
    avx2 = _symbol("at::native::AVX2::v(float)", 0x5000)
    default = _symbol("at::native::DEFAULT::v(float)", 0x5000)
    chosen = {
        "baseline": [
            FoundFunction(lib, lib.find("a")[0], 10.0),
            FoundFunction(lib, avx2, 30.0),
        ],
        "variant": [
            FoundFunction(lib, lib.find("a")[0], 50.0),
            FoundFunction(other, other.find("a")[0], 20.0),
            FoundFunction(lib, default, 5.0),
            FoundFunction(lib, lib.find("b")[0], 20.0),
        ],
        "not-asked": [FoundFunction(lib, _symbol("z", 0x9000), 99.0)],
    }
    assert union_in_order(chosen, ["baseline", "variant"]) == [
        ("a", "libkernels.so"),
        ("at::native::CPU_CAPABILITY::v(float)", "libkernels.so"),
        ("a", "libother.so"),
        ("b", "libkernels.so"),
    ]
