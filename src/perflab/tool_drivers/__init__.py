"""Drivers of the outside tools perflab runs or reads, behind narrow calls: perf's control
channel, llvm-symbolizer and the ELF files' debug info and identity, an object's IFUNC
dispatch, a live process's maps; and what their runs share, the analysis cache (results kept
across perflab runs) and the CPU pool they run on after measuring. They know no lens; what the
tools write is parsed and compared in perflab.tool_output."""
