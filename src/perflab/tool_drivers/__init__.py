"""Drivers of the outside tools perflab runs or reads, behind narrow calls: perf's control
channel, llvm-symbolizer and the ELF files' debug info and identity, an object's IFUNC
dispatch, a live process's maps. They know no lens; what the tools write is parsed and
compared in perflab.tool_output."""
