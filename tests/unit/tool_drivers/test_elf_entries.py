"""ELF64 symbol and relocation entries decoded from bytes (tool_drivers/elf_entries.py)."""

from __future__ import annotations

from perflab.tool_drivers.elf_entries import (
    ELF64_RELA,
    ELF64_SYM,
    defined_symbols,
    name_at,
    name_offsets,
)

STRINGS = b"\0main\0data\0undefined\0"
_FUNC, _OBJECT, _GLOBAL = 2, 1, 1


def _symbol(name_offset: int, kind: int, shndx: int, value: int, size: int) -> bytes:
    return ELF64_SYM.pack(name_offset, _GLOBAL << 4 | kind, 0, shndx, value, size)


TABLE = b"".join(
    (
        _symbol(0, 0, 0, 0, 0),  # index 0: the null symbol
        _symbol(1, _FUNC, 14, 0x1000, 32),
        _symbol(6, _OBJECT, 20, 0x4000, 8),
        _symbol(11, _FUNC, 0, 0, 0),  # undefined: another object's
    )
)


def test_defined_symbols_of_the_kinds_asked_for_with_their_binding() -> None:
    assert list(defined_symbols(TABLE, STRINGS, {_FUNC})) == [("main", _FUNC, _GLOBAL, 0x1000, 32)]
    assert [s[0] for s in defined_symbols(TABLE, STRINGS, {_FUNC, _OBJECT})] == ["main", "data"]


def test_a_relocation_names_its_symbol_by_index() -> None:
    section = ELF64_RELA.pack(0x2000, 3 << 32 | 6, 0)
    ((offset, info, addend),) = ELF64_RELA.iter_unpack(section)
    assert (offset, info >> 32, info & 0xFFFFFFFF, addend) == (0x2000, 3, 6, 0)
    offsets = name_offsets(TABLE)
    assert name_at(STRINGS, offsets[3]) == "undefined" and name_at(STRINGS, offsets[0]) == ""
