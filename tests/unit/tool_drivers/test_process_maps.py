"""The files a live process mapped (tool_drivers/process_maps.py): /proc/PID/maps parsed, the
executable files in load order, and a process whose maps cannot be read said with a hint."""

from __future__ import annotations

import os

import pytest

from perflab.tool_drivers.process_maps import (
    MappedRegion,
    ProcessMapsError,
    mapped_objects,
    parse_proc_maps,
    read_process_maps,
)

MAPS = """\
55d0c0a00000-55d0c0a01000 r--p 00000000 fe:00 1 /usr/bin/prog
55d0c0a01000-55d0c0a02000 r-xp 00001000 fe:00 1 /usr/bin/prog
7f0000000000-7f0000100000 r-xp 00026000 fe:00 2 /usr/lib/libc.so.6
7f0000150000-7f0000160000 r-xp 00000000 fe:00 3 /tmp/jit code (deleted)
7f0000200000-7f0000201000 r-xp 00000000 00:00 0 [vdso]
7f0000300000-7f0000301000 rw-p 00000000 00:00 0
short line
"""


def test_each_line_is_a_region_with_its_file() -> None:
    regions = parse_proc_maps(MAPS)
    assert len(regions) == 6
    assert regions[1] == MappedRegion(
        0x55D0C0A01000, 0x55D0C0A02000, "r-xp", 0x1000, "/usr/bin/prog"
    )
    assert regions[3].path == "/tmp/jit code (deleted)"  # a path with a space kept whole
    assert regions[5].path == "" and not regions[5].executable


def test_the_executable_files_in_load_order_without_pseudo_or_deleted_ones() -> None:
    assert mapped_objects(parse_proc_maps(MAPS)) == ("/usr/bin/prog", "/usr/lib/libc.so.6")


def test_this_process_maps_its_interpreter_and_a_gone_one_cannot_be_read() -> None:
    mine = mapped_objects(read_process_maps(os.getpid()))
    assert mine and all(path.startswith("/") for path in mine)
    with pytest.raises(ProcessMapsError, match="cannot read the mappings of process") as raised:
        read_process_maps(2**31 - 1)
    assert "still be alive" in (raised.value.hint or "")
