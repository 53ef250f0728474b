"""An object's separate debug file (tool_drivers/elf_tables.py): found by its build-id first,
then by its debuglink."""

from __future__ import annotations

from pathlib import Path

from perflab.tool_drivers.elf_tables import separate_debug_file


def test_separate_debug_file_by_build_id_then_debuglink(tmp_path: Path) -> None:
    root = tmp_path / "debug"
    lib = tmp_path / "lib" / "libfoo.so"
    lib.parent.mkdir()
    lib.write_bytes(b"")
    assert separate_debug_file(str(lib), "abcdef", "libfoo.so.debug", str(root)) is None
    linked = lib.parent / ".debug" / "libfoo.so.debug"
    linked.parent.mkdir()
    linked.write_bytes(b"")
    assert separate_debug_file(str(lib), "abcdef", "libfoo.so.debug", str(root)) == str(linked)
    by_id = root / ".build-id" / "ab" / "cdef.debug"
    by_id.parent.mkdir(parents=True)
    by_id.write_bytes(b"")
    assert separate_debug_file(str(lib), "abcdef", "libfoo.so.debug", str(root)) == str(by_id)
