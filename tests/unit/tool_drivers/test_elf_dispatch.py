"""IFUNC resolvers as evidence of a dispatch (tool_drivers/elf_dispatch.py), from records: two
functions are one call site's choice only where an IFUNC of one name returns each in its own
object; files that are gone or are no ELF have no IFUNCs. Reading real objects is
tests/integration/test_elf_dispatch.py's."""

from __future__ import annotations

import sys
from pathlib import Path

from perflab.tool_drivers.elf_dispatch import Ifunc, read_ifuncs, shared_resolver

OLD = (Ifunc("dot", "dot.resolver", ("dot.avx2", "dot.avx512f", "dot.default")),)
NEW = (Ifunc("dot", "dot.resolver", ("dot.avx2", "dot.default")),)


def test_targets_of_ifuncs_of_one_name_are_one_call_sites_choice() -> None:
    found = shared_resolver("dot.avx512f", "/a/libdot.so", OLD, "dot.avx2", "/b/libdot.so", NEW)
    assert found is not None and (found.ifunc, found.old, found.new) == (
        "dot", "dot.avx512f", "dot.avx2",
    )  # fmt: skip
    assert found.evidence() == (
        "elf: dot is an IFUNC in both objects: in /a/libdot.so its resolver dot.resolver returns "
        "dot.avx512f (or dot.avx2, dot.default); in /b/libdot.so its resolver dot.resolver "
        "returns dot.avx2 (or dot.default)"
    )
    assert found.to_json() == {
        "ifunc": "dot",
        "from_resolver": "dot.resolver",
        "to_resolver": "dot.resolver",
        "from_targets": ["dot.avx2", "dot.avx512f", "dot.default"],
        "to_targets": ["dot.avx2", "dot.default"],
    }


def test_no_shared_resolver_without_an_ifunc_of_the_same_name_returning_both() -> None:
    other_name = (Ifunc("axpy", "axpy.resolver", ("dot.avx2",)),)
    assert shared_resolver("dot.avx512f", "/a", OLD, "dot.avx2", "/b", other_name) is None
    assert shared_resolver("dot.sse", "/a", OLD, "dot.avx2", "/b", NEW) is None  # not a target
    assert shared_resolver("dot.avx512f", "/a", OLD, "dot.sse", "/b", NEW) is None
    assert shared_resolver("dot.avx512f", "/a", (), "dot.avx2", "/b", NEW) is None


def test_a_file_that_is_gone_or_no_elf_has_no_ifuncs(tmp_path: Path) -> None:
    assert read_ifuncs(str(tmp_path / "gone.so")) == ()
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file\n")
    assert read_ifuncs(str(text)) == ()
    # a real ELF file (this interpreter) reads without an error, whatever IFUNCs it has
    assert all(isinstance(found, Ifunc) for found in read_ifuncs(sys.executable))
