"""Where a runtime address lies in an ELF object, through the process's maps."""

from __future__ import annotations

from perflab.tool_drivers.elf_objects import ElfObject, LoadSegment, runtime_to_link_address
from perflab.tool_drivers.process_maps import mapped_objects, parse_proc_maps

MAPS = """\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:00 1 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:00 1 /usr/bin/prog
7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/libc.so.6
7f0000200000-7f0000201000 r-xp 00000000 00:00 0 [vdso]
7f0000300000-7f0000301000 rw-p 00000000 00:00 0
"""


def test_proc_maps_and_load_bias() -> None:
    regions = parse_proc_maps(MAPS)
    assert mapped_objects(regions) == ("/usr/bin/prog", "/usr/lib/libc.so.6")
    obj = ElfObject(
        path="/usr/lib/libc.so.6",
        position_independent=True,
        segments=(LoadSegment(vaddr=0x27000, offset=0x26000, filesz=0x200000, executable=True),),
        sections=(),
        symbols=(),
        plt={},
        got={},
    )
    assert runtime_to_link_address(regions, obj, 0x7F0000000010) == 0x27010
    assert runtime_to_link_address(regions, obj, 0x55D0C0A01000) is None
