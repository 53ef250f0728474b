"""A located function's code: read from its object and normalised (kept in the analysis cache),
listed with its costs, inlined frames and hot loop's prediction; and where the listed functions
are called from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from perflab.lenses.asm.disassembly import AsmLine, disassemble, normalise
from perflab.lenses.asm.identity import family
from perflab.lenses.asm.locate import FoundFunction, sampled_copies
from perflab.lenses.asm.machine_code import (
    FunctionCode,
    FunctionListing,
    build_listing,
    line_from_json,
    line_to_json,
)
from perflab.lenses.asm.sources import ProfiledRegion
from perflab.lenses.asm.summaries import call_targets
from perflab.machine.proc import ProcessRunner
from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.debuginfo import symbolise
from perflab.tool_drivers.demangling import Demangler
from perflab.tool_drivers.elf_objects import CodeLookupError, ElfObject, ElfSymbol
from perflab.tool_drivers.llvm_mca import McaPredictor


@dataclass(frozen=True)
class CodeReaders:
    """What reads and explains the variants' code, shared by every variant's job."""

    demangler: Demangler
    predictor: McaPredictor
    runner: ProcessRunner
    cache: AnalysisCache


# the most sampled functions whose callees are read to find call sites: each costs a disassembly,
# and a caller that ran in the region was sampled, most likely among the hottest
MAX_CALLERS = 40


SMALL_OBJECT_FUNCTIONS = 5000  # whose every function is disassembled to find static callers


def call_sites(
    region: ProfiledRegion,
    demangler: Demangler,
    found: Sequence[FoundFunction],
    cache: AnalysisCache | None = None,
) -> dict[str, list[str]]:
    """Where listed functions are called from, without call graphs: the callees of the most
    sampled functions of the objects holding listed code (also those too cold to be listed),
    and in small objects (executables, small libraries) of every function that calls a listed
    one, sampled or not. Caller family -> all its callees. Of several functions of one name in
    one object, the callees of the copies the samples ran in (`sampled_copies`)."""
    out: dict[str, set[str]] = {}
    listed = {f.symbol.demangled for f in found}
    by_object: dict[str, ElfObject] = {f.object.path: f.object for f in found}
    sampled = 0
    for (path, symbol_name), _ in region.by_function().items():
        if sampled >= MAX_CALLERS or path not in by_object:
            continue
        sampled += 1
        for symbol in _sampled_symbols(region, by_object[path], symbol_name):
            out.setdefault(family(symbol.demangled), set()).update(
                _callees(by_object[path], symbol, cache)
            )
    for obj in by_object.values():
        functions = obj.functions()
        if len(functions) > SMALL_OBJECT_FUNCTIONS:
            continue
        for symbol in functions:
            callees = _callees(obj, symbol, cache)
            if any(callee.split("@", 1)[0] in listed for callee in callees):
                out.setdefault(family(symbol.demangled), set()).update(callees)
    return {caller: sorted(callees) for caller, callees in out.items()}


def _sampled_symbols(region: ProfiledRegion, obj: ElfObject, name: str) -> list[ElfSymbol]:
    """The functions of `name` in `obj` the samples ran in: the one of the name, the sampled
    copies of several (numpy's per-ISA objects define one static name more than once), or the
    first of the name where the samples do not tell the copies apart."""
    matches = obj.find(name)
    if len(matches) < 2:
        return matches
    copies = sampled_copies(obj, matches, region.starts(obj.path, name))
    return [copy.symbol for copy in copies] or matches[:1]


CALLEES_KIND = "callees"  # the analysis cache's entries: the callees of one function
CODE_KIND = "normalised-code"  # ... and a function's normalised instructions


def _callees(obj: ElfObject, symbol: ElfSymbol, cache: AnalysisCache | None = None) -> list[str]:
    key = _function_key(obj, symbol)
    if cache is not None and key is not None:
        stored = cache.get(CALLEES_KIND, key)
        if isinstance(stored, list) and all(isinstance(name, str) for name in stored):
            return stored
    try:
        code = obj.read_code(symbol)
    except CodeLookupError:
        return []
    lines = normalise(disassemble(code, symbol.address), lambda address: _resolve(obj, address))
    callees = list(call_targets(lines))
    if cache is not None and key is not None:
        cache.put(CALLEES_KIND, key, callees)
    return callees


def _function_key(obj: ElfObject, symbol: ElfSymbol) -> list[object] | None:
    """What a function's code depends on: its object (and the names that object gives
    addresses: the symbol table, its debug file, the demangler) and where the symbol is."""
    if obj.analysis_key is None:
        return None
    return [obj.analysis_key, symbol.name, symbol.address, symbol.size]


def _normalised_code(
    obj: ElfObject, symbol: ElfSymbol, cache: AnalysisCache | None
) -> tuple[AsmLine, ...]:
    key = _function_key(obj, symbol)
    if cache is not None and key is not None:
        stored = cache.get(CODE_KIND, key)
        if isinstance(stored, list):
            try:
                return tuple(line_from_json(line) for line in stored)
            except (KeyError, TypeError, ValueError):
                cache.stats.ignored += 1
    code = obj.read_code(symbol)
    lines = normalise(disassemble(code, symbol.address), lambda address: _resolve(obj, address))
    if cache is not None and key is not None:
        cache.put(CODE_KIND, key, [line_to_json(line) for line in lines])
    return lines


# instructions of one listing asked about inline frames, from its start: llvm-symbolizer's time
# grows with the addresses asked
MAX_SYMBOLISED_ADDRESSES = 20000


def list_function(
    found: FoundFunction, region: ProfiledRegion, readers: CodeReaders
) -> FunctionListing:
    """The annotated listing of one found function: its code, the samples on each instruction, and
    its inline frames."""
    obj, symbol = found.object, found.symbol
    offsets = region.offsets(obj.path, symbol.name, found.starts or None)
    costs = {symbol.address + offset: weight for offset, weight in offsets.items()}
    listing = build_listing(
        FunctionCode(
            symbol.demangled,
            symbol.name,
            obj.path,
            symbol.address,
            normalised=_normalised_code(obj, symbol, readers.cache),
        ),
        lambda address: _resolve(obj, address),
        costs=costs,
        cost_unit=region.unit,
        throughput_of=readers.predictor if readers.predictor.available else None,
    )
    addresses = [line.instruction.address for line in listing.lines][:MAX_SYMBOLISED_ADDRESSES]
    frames = symbolise(readers.runner, obj.path, addresses, cache=readers.cache)
    if frames is None:
        return listing
    inlined = {address: chain for address, chain in frames.items() if len(chain) > 1}
    return replace(listing, inline_frames=inlined)


def _resolve(obj: ElfObject, address: int) -> str | None:
    if address in obj.got:
        return f"{obj.got[address]}@got"
    return obj.name_for(address)
