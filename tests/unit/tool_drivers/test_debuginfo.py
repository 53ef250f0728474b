"""Debug information read (tool_drivers/debuginfo.py): the symbolisers' output as inline
chains, stored and read back, the inline sites they show; an object's identity by build-id or
content."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from perflab.tool_drivers.debuginfo import (
    InlineSite,
    SourceFrame,
    build_id,
    file_identity,
    frames_from_json,
    frames_to_json,
    inline_sites,
    object_identity,
    parse_addr2line,
    parse_symbolizer_json,
)

CHAIN = (
    SourceFrame("std::max", "/usr/include/c++/12/bits/stl_algobase.h", 262),
    SourceFrame("relu", "/src/relu.c", 7),
    SourceFrame("kernel", "/src/relu.c", 20),
)


def test_llvm_symbolizers_json_is_the_inline_chain_innermost_first() -> None:
    record = {
        "Address": "0x1130",
        "Symbol": [{"FunctionName": f.function, "FileName": f.file, "Line": f.line} for f in CHAIN]
        + [{"FunctionName": "??"}],
    }
    text = "noise\n" + json.dumps(record) + "\n" + json.dumps({"Address": "0x9", "Symbol": []})
    assert parse_symbolizer_json(text) == {0x1130: CHAIN}


def test_addr2lines_pairs_are_read_for_the_addresses_asked() -> None:
    text = (
        "0x0000000000001130\nstd::max\n/usr/include/c++/12/bits/stl_algobase.h:262\n"
        "relu\n/src/relu.c:7 (discriminator 2)\nkernel\n/src/relu.c:20\n"
        "0x0000000000002000\nother\n??:0\n"
    )
    assert parse_addr2line(text, [0x1130]) == {0x1130: CHAIN}
    assert parse_addr2line(text, [0x2000]) == {0x2000: (SourceFrame("other", "", 0),)}


def test_frames_are_stored_and_read_back_older_bare_names_too() -> None:
    assert frames_from_json(frames_to_json({0x1130: CHAIN})) == {0x1130: CHAIN}
    assert frames_from_json({"0x10": ["kernel"]}) == {0x10: (SourceFrame("kernel"),)}
    with pytest.raises(ValueError, match="not a stored source frame"):
        SourceFrame.from_json(3)
    assert CHAIN[1].location() == "relu.c:7" and SourceFrame("f").location() == "?"


def test_each_inlined_call_is_a_site_with_the_addresses_running_it() -> None:
    sites = inline_sites({0x1130: CHAIN, 0x1134: CHAIN[1:], 0x2000: CHAIN[2:]})
    assert sites == {
        InlineSite("relu", "kernel", "kernel", "/src/relu.c", 20): (0x1130, 0x1134),
        InlineSite("std::max", "relu", "kernel", "/src/relu.c", 7): (0x1130,),
    }


def test_an_objects_identity_is_its_build_id_or_its_content(tmp_path: Path) -> None:
    interpreter = str(Path(sys.executable).resolve())
    found = build_id(interpreter)
    if found is not None:  # most distributions' builds carry one
        assert object_identity(interpreter) == f"build-id:{found}"
    plain = tmp_path / "blob.so"
    plain.write_bytes(b"not an ELF file")
    assert build_id(str(plain)) is None
    assert str(object_identity(str(plain))).startswith("sha256:")
    assert file_identity(str(plain)) == object_identity(str(plain))
    assert object_identity(str(tmp_path / "gone.so")) is None
    assert file_identity(str(tmp_path / "gone.so")) is None
