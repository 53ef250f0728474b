"""Drivers of the outside tools perflab reads, behind narrow calls: callgrind's output, perf's
control channel and `perf script`, ELF and DWARF (debug info, symbols, CPU dispatch), process
maps, and the analysis cache and worker pool they share. They know no lens."""
