"""Drivers of the outside tools perflab runs or reads, one module per tool. Each is behind narrow
calls (what to run, what comes back): perf (its command lines, control channel, probe and reading
back), valgrind and vgdb, llvm-symbolizer and the ELF files' debug info and identity, an object's
IFUNC dispatch and its symbol, PLT and GOT tables, a live process's maps, c++filt and llvm-mca. They
know no lens; what the tools write is parsed and compared in perflab.tool_output; the sampling
around a measured region is perflab.measure's."""
