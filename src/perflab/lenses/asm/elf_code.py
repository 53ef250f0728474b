"""Where a function's machine code really lives for one variant, and how to read it: an object's
symbols loaded once per file version in a process, and kept across runs in the analysis cache.

A variant's process decides which file holds a function: its executable, or a shared library found
through *its* environment (another venv's ``libtorch_cpu.so``). So the object paths come from the
live process's mappings (``/proc/PID/maps``) or from the dso paths a profiler saw, never from a
guess at install locations. Symbols are read from ``.symtab`` and ``.dynsym`` (`elf_tables`), and
addresses are kept as link-time virtual addresses (``st_value``), which are the same in every run
of a PIE or shared object; :func:`~perflab.tool_drivers.elf_objects.runtime_to_link_address`
removes the load bias.
"""

from __future__ import annotations

import array
import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from perflab.store.analysis_cache import AnalysisCache
from perflab.tool_drivers.debuginfo import elf_sections, file_identity
from perflab.tool_drivers.demangling import Demangler
from perflab.tool_drivers.elf_objects import (
    CodeLookupError,
    ElfObject,
    ElfSymbol,
    LoadSegment,
    SectionSpan,
)
from perflab.tool_drivers.elf_tables import read_elf_file, separate_debug_file


def _file_key(path: str) -> tuple[str, int, int]:
    try:
        stat = os.stat(path)
    except OSError as error:
        raise CodeLookupError(
            f"cannot open {path}: {error}",
            hint="the object was mapped by the variant's process; was it deleted or rebuilt since?",
        ) from error
    return (os.path.realpath(path), stat.st_mtime_ns, stat.st_size)


def load_elf_object(
    path: str, demangler: Demangler, cache: AnalysisCache | None = None
) -> ElfObject:
    """Read an object's symbols (cached per file version in this process, and by the object's
    identity in the analysis `cache` across runs: libtorch_cpu.so has ~500k of them)."""
    key = _file_key(path)
    cached = _CACHE.get(key)
    if cached is None:
        cached = _CACHE[key] = _load(path, demangler, cache or AnalysisCache.disabled())
        while len(_CACHE) > _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
    return cached


_CACHE: dict[tuple[str, int, int], ElfObject] = {}
# ELF objects kept in memory in this process, oldest dropped first: a run diffs functions of a few
# objects, and one object's symbols can be many (libtorch_cpu.so: ~500k)
_CACHE_SIZE = 16
SYMBOLS_KIND = "elf-symbols-2"  # the analysis cache's entries of whole symbol tables


def _load(path: str, demangler: Demangler, cache: AnalysisCache) -> ElfObject:
    """From the analysis cache when this object (and its debug file, and the demangler) were
    read before; otherwise read, and stored for the next time."""
    analysis_key, debug_file = _analysis_key(path, demangler)
    if analysis_key is not None:
        stored = cache.get(SYMBOLS_KIND, [analysis_key])
        if stored is not None:
            try:
                return _object_from_json(stored, path, debug_file, analysis_key)
            except (KeyError, TypeError, ValueError, IndexError):
                cache.stats.ignored += 1  # a damaged entry: read the file and rewrite it
    obj = read_elf_file(path, demangler)
    if analysis_key is None:
        return obj
    obj = replace(obj, analysis_key=analysis_key)
    if obj.symbols_from == debug_file or obj.symbols_from == path:
        cache.put(SYMBOLS_KIND, [analysis_key], _object_to_json(obj))
    return obj


def _analysis_key(path: str, demangler: Demangler) -> tuple[str | None, str | None]:
    """(The key of what this object's bytes decide, the separate debug file symbols would come
    from); the key is None when the object cannot be identified or the demangler has no tag."""
    tag = getattr(demangler, "cache_tag", None)
    identity = file_identity(path)
    sections = elf_sections(path)
    if not isinstance(tag, str) or identity is None or sections is None:
        return None, None
    debug_file = None
    if ".symtab" not in sections:
        build_id = identity.removeprefix("build-id:") if identity.startswith("build-id:") else None
        debug_file = separate_debug_file(path, build_id, _debuglink_at(path, sections))
    debug_identity = file_identity(debug_file) if debug_file else None
    return f"{identity}|debug={debug_identity}|demangler={tag}", debug_file


def _debuglink_at(path: str, sections: Mapping[str, Any]) -> str | None:
    section = sections.get(".gnu_debuglink")
    if section is None:
        return None
    try:
        with open(path, "rb") as stream:
            stream.seek(section.offset)
            data = stream.read(section.size)
    except OSError:
        return None
    name = data[: data.find(b"\0")].decode("utf-8", "replace")
    return name or None


def _object_to_json(obj: ElfObject) -> dict[str, Any]:
    """Columns rather than records, names as newline-separated text and numbers as base64
    arrays: parsing 500k JSON records took longer than reading the ELF file's tables."""
    return {
        "position_independent": obj.position_independent,
        "segments": [[s.vaddr, s.offset, s.filesz, s.executable] for s in obj.segments],
        "sections": [[s.name, s.address, s.size] for s in obj.sections],
        "count": len(obj.symbols),
        "names": "\n".join(s.name for s in obj.symbols),
        # an empty line: the demangled name is the name
        "demangled": "\n".join(s.demangled if s.demangled != s.name else "" for s in obj.symbols),
        "addresses": _pack("Q", [s.address for s in obj.symbols]),
        "sizes": _pack("Q", [s.size for s in obj.symbols]),
        "flags": _pack("B", [int(s.is_function) | int(s.is_global) << 1 for s in obj.symbols]),
        "plt": sorted(obj.plt.items()),
        "got": sorted(obj.got.items()),
        "symbols_from": (
            None
            if obj.symbols_from is None
            else "self"
            if obj.symbols_from == obj.path
            else "debug"
        ),
    }


def _pack(code: str, values: Sequence[int]) -> str:
    return base64.b64encode(array.array(code, values).tobytes()).decode("ascii")


def _unpack(code: str, text: str) -> array.array[int]:
    values = array.array(code)
    values.frombytes(base64.b64decode(text.encode("ascii"), validate=True))
    return values


def _object_from_json(
    data: Mapping[str, Any], path: str, debug_file: str | None, analysis_key: str
) -> ElfObject:
    count = int(data["count"])
    names = data["names"].split("\n") if count else []
    demangled = data["demangled"].split("\n") if count else []
    addresses, sizes = _unpack("Q", data["addresses"]), _unpack("Q", data["sizes"])
    flags = _unpack("B", data["flags"])
    if not count == len(names) == len(demangled) == len(addresses) == len(sizes) == len(flags):
        raise ValueError("the columns of a stored symbol table differ in length")
    symbols = tuple(
        map(
            ElfSymbol,
            names,
            [shown or name for name, shown in zip(names, demangled, strict=True)],
            addresses,
            sizes,
            [bool(flag & 1) for flag in flags],
            [bool(flag & 2) for flag in flags],
        )
    )
    source = data["symbols_from"]
    return ElfObject(
        path=path,
        position_independent=bool(data["position_independent"]),
        segments=tuple(
            LoadSegment(int(a), int(b), int(c), bool(d)) for a, b, c, d in data["segments"]
        ),
        sections=tuple(SectionSpan(str(n), int(a), int(z)) for n, a, z in data["sections"]),
        symbols=symbols,
        plt={int(address): str(name) for address, name in data["plt"]},
        got={int(address): str(name) for address, name in data["got"]},
        symbols_from=path if source == "self" else debug_file if source == "debug" else None,
        analysis_key=analysis_key,
    )
