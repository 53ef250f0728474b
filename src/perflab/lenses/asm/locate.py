"""Which functions the asm lens lists, and where they are. The hot ones of a profile (or those named
by --symbol) are found in the objects the variant's process mapped, with their split-off fragments;
a function listed in another variant is found where this one defines it."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from perflab.lenses.asm.elf_code import load_elf_object
from perflab.lenses.asm.identity import Role, family, fragment_role, identity
from perflab.lenses.asm.sources import ProfiledRegion
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.demangling import Demangler
from perflab.tool_drivers.elf_objects import CodeLookupError, ElfObject, ElfSymbol
from perflab.tool_output.object_names import library_name, object_basename

MIN_HOT_SHARE = 0.01  # below 1% of the samples a function is not worth a diff
# functions a --symbol pattern lists at most, hottest first: a loose pattern (a template's name) can
# match hundreds
MAX_MATCHES_PER_PATTERN = 8


@dataclass(frozen=True)
class FoundFunction:
    """A function chosen for the assembly diff: its object file, its symbol and its sampled cost."""

    object: ElfObject
    symbol: ElfSymbol
    cost: float  # samples in the function; 0 when named by --symbol and not sampled
    # where the sampled copy started in the process: its samples alone are this function's
    # when the object defines several functions of its name; () for all samples of the name
    starts: tuple[int, ...] = ()


def choose_functions(
    region: ProfiledRegion,
    patterns: Sequence[re.Pattern[str]],
    demangler: Demangler,
    hot_functions: int,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    if patterns:
        return find_named(region, patterns, demangler, cache)
    return find_hot(region, demangler, hot_functions, cache)


def _objects(
    region: ProfiledRegion,
    demangler: Demangler,
    paths: Sequence[str],
    cache: AnalysisCache | None = None,
) -> list[ElfObject]:
    objects = []
    for path in paths:
        try:
            objects.append(load_elf_object(path, demangler, cache))
        except CodeLookupError:
            continue  # a mapped file that is not an x86-64 ELF (a locale archive, a JIT map ...)
    return objects


def find_hot(
    region: ProfiledRegion,
    demangler: Demangler,
    limit: int,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    """The most sampled functions with at least MIN_HOT_SHARE of all samples, hottest first.

    Samples are summed per function family first (fragments, clones and dispatch members of
    one function, see `identity`), so a kernel split into `.cold` and `.part` pieces, or run
    as two ISA versions, is one function; every sampled member is returned."""
    total = region.total or 1.0
    found: list[FoundFunction] = []
    for _, members in _ranked_families(region, demangler)[:limit]:
        if sum(w for _, _, w in members) / total < MIN_HOT_SHARE:
            break
        found += _found_members(members, region, demangler, cache)
    return found


def find_families(
    region: ProfiledRegion,
    families: Collection[str],
    demangler: Demangler,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    """The sampled members of `families` (hot in another variant): each variant lists every
    function any variant chose that it ran too, so a function 5th in one variant and 6th in
    the other is compared, not called absent from the second."""
    found: list[FoundFunction] = []
    for name, members in _ranked_families(region, demangler):
        if name in families:
            found += _found_members(members, region, demangler, cache)
    return found


def _ranked_families(
    region: ProfiledRegion, demangler: Demangler
) -> list[tuple[str, list[tuple[str, str, float]]]]:
    """Each sampled function family with its members (object, symbol, samples), hottest first."""
    weights = region.by_function()
    names = demangler.demangle(sorted({symbol for _, symbol in weights}))
    by_family: dict[str, list[tuple[str, str, float]]] = {}
    for (path, symbol), weight in weights.items():
        name = names.get(symbol, symbol)
        by_family.setdefault(family(name), []).append((path, symbol, weight))
    return sorted(by_family.items(), key=lambda item: -sum(w for _, _, w in item[1]))


def _found_members(
    members: Sequence[tuple[str, str, float]],
    region: ProfiledRegion,
    demangler: Demangler,
    cache: AnalysisCache | None,
) -> list[FoundFunction]:
    found = []
    for path, symbol_name, weight in members:
        for obj in _objects(region, demangler, [path], cache):
            matches = obj.find(symbol_name)
            if not matches:
                continue
            copies = (
                sampled_copies(obj, matches, region.starts(path, symbol_name))
                if len(matches) > 1
                else []
            )
            found += copies or [FoundFunction(obj, matches[0], float(weight))]
    return found


PAGE_BYTES = 4096  # objects are mapped at page-aligned addresses


def sampled_copies(
    obj: ElfObject, matches: Sequence[ElfSymbol], starts: Mapping[int, float]
) -> list[FoundFunction]:
    """Which of several functions of one name (static functions of numpy's per-ISA dispatch
    objects share theirs) the samples ran in: the one whose address lies at the sampled start's
    offset in its page (an object is mapped page-aligned, so that offset survives the load
    address). A start that fits none or several is left out; when none is told apart, the
    caller falls back to the first of the name."""
    by_symbol: dict[ElfSymbol, tuple[float, list[int]]] = {}
    for start, weight in starts.items():
        fitting = [m for m in matches if m.address % PAGE_BYTES == start % PAGE_BYTES]
        if len(fitting) == 1:
            total, at = by_symbol.get(fitting[0], (0.0, []))
            by_symbol[fitting[0]] = (total + weight, [*at, start])
    return [
        FoundFunction(obj, symbol, weight, tuple(at))
        for symbol, (weight, at) in sorted(by_symbol.items(), key=lambda item: -item[1][0])
    ]


def family_samples(region: ProfiledRegion, demangler: Demangler) -> dict[str, float]:
    """Samples per function family, for every sampled function (also those not listed)."""
    weights = region.by_function()
    names = demangler.demangle(sorted({symbol for _, symbol in weights}))
    out: dict[str, float] = {}
    for (_, symbol), weight in weights.items():
        key = family(names.get(symbol, symbol))
        out[key] = out.get(key, 0.0) + weight
    return out


def with_fragments(found: Sequence[FoundFunction], region: ProfiledRegion) -> list[FoundFunction]:
    """`found` plus the split-off fragments (`.cold`, `.part.N`) of each function in it, sampled
    or not: a function's code size counts its parts."""
    result = list(found)
    have = {(f.object.path, f.symbol.name) for f in found}
    weights = region.by_function()
    for item in found:
        base = identity(item.symbol.name)
        for symbol in item.object.with_prefix(base + "."):
            key = (item.object.path, symbol.name)
            if key in have or fragment_role(symbol.name) is not Role.FRAGMENT:
                continue
            if identity(symbol.name) != base:
                continue
            have.add(key)
            result.append(FoundFunction(item.object, symbol, float(weights.get(key, 0.0))))
    return result


def presence(
    wanted: Sequence[tuple[str, str]],
    region: ProfiledRegion,
    demangler: Demangler,
    cache: AnalysisCache | None = None,
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For functions listed in another variant but not here: where this variant's objects
    define them, per the symbol table, and what was searched. First the objects of the same
    library (`tools.object_names`: `libpython3.12.so.1.0` for `libpython3.11.so.1.0`) and the
    executables (each variant's command may run its own, under another name); for a function
    none of them defines, every other object the variant loaded, so "not defined" is said only
    of all of them."""
    defined: dict[str, list[str]] = {}
    searched: dict[str, list[str]] = {}
    for name, basename in wanted:
        library = library_name(basename)
        first = [
            p
            for p in region.objects
            if object_basename(p) == basename or library_name(p) == library or ".so" not in p
        ]
        rest = [p for p in region.objects if p not in first]
        for paths in (first, rest):
            if name in defined:
                break
            for obj in _objects(region, demangler, paths, cache):
                searched.setdefault(name, []).append(obj.path)
                for symbol in _family_index(obj).get(name, []):
                    defined.setdefault(name, []).append(
                        f"{symbol.name} in {object_basename(obj.path)}"
                    )
    return defined, searched


# each object's functions by family, for the loaded object it was built from (elf_code may load
# a file again): `presence` looks up every missing function in the same objects, and one index is
# a pass over all of an object's symbols (libtorch_cpu.so: ~500k)
_FAMILY_INDEX: dict[str, tuple[ElfObject, dict[str, list[ElfSymbol]]]] = {}
# indexes kept in this process, oldest dropped first: a run's missing functions are looked up in
# a few objects (one package's libraries, the executable), and an index is as large as its object
_FAMILY_INDEX_SIZE = 4


def _family_index(obj: ElfObject) -> dict[str, list[ElfSymbol]]:
    """`obj`'s functions by their family (`identity.family`), built once per loaded object."""
    cached = _FAMILY_INDEX.get(obj.path)
    if cached is not None and cached[0] is obj:
        return cached[1]
    index: dict[str, list[ElfSymbol]] = {}
    for symbol in obj.functions():
        index.setdefault(family(symbol.demangled), []).append(symbol)
    _FAMILY_INDEX[obj.path] = (obj, index)
    while len(_FAMILY_INDEX) > _FAMILY_INDEX_SIZE:
        del _FAMILY_INDEX[next(iter(_FAMILY_INDEX))]
    return index


def find_named(
    region: ProfiledRegion,
    patterns: Sequence[re.Pattern[str]],
    demangler: Demangler,
    cache: AnalysisCache | None = None,
) -> list[FoundFunction]:
    """Functions matching the user's regexes, searched in the objects that were sampled first,
    then in every other object the process mapped; sampled matches first."""
    weights = region.by_function()
    sampled_paths = list(dict.fromkeys(path for path, _ in weights))
    ordered_paths = list(dict.fromkeys([*sampled_paths, *region.objects]))
    found: list[FoundFunction] = []
    for pattern in patterns:
        matches: list[FoundFunction] = []
        for obj in _objects(region, demangler, ordered_paths, cache):
            for symbol in obj.search(pattern):
                matches.append(
                    FoundFunction(obj, symbol, float(weights.get((obj.path, symbol.name), 0.0)))
                )
            if matches:
                break  # the first object in load order that defines it is the one that is used
        matches.sort(key=lambda f: (-f.cost, f.symbol.demangled))
        found += [m for m in matches[:MAX_MATCHES_PER_PATTERN] if m not in found]
    return found


def union_in_order(
    chosen: Mapping[str, list[FoundFunction]], order: Sequence[str]
) -> list[tuple[str, str]]:
    """(family, object basename) of every function chosen in any variant, hottest first."""
    seen: dict[tuple[str, str], float] = {}
    for name in order:
        for found in chosen[name]:
            key = (family(found.symbol.demangled), object_basename(found.object.path))
            seen[key] = max(seen.get(key, 0.0), found.cost)
    return sorted(seen, key=lambda key: -seen[key])
