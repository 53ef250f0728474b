"""Source frames (DWARF's file and line) of a kernel and the helper inlined into it, for the
inlining evidence's tests."""

from __future__ import annotations

from perflab.tool_drivers.debuginfo import SourceFrame

KERNEL = SourceFrame("kernel", "/s/k.c", 4)
# the kernel's line that calls the helper where it is not inlined
KERNEL_CALLING = SourceFrame("kernel", "/s/k.c", 5)
HELPER = SourceFrame("helper", "/s/h.h", 2)
