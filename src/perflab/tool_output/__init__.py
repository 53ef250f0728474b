"""What the outside tools write, parsed and compared, pure: callgrind's costs and files, `perf
stat`'s counts, `perf script`'s samples, the kernel's /proc/PID/arch_status, sampled stacks
counted and two profiles compared, llvm-mca's predictions, and the rules that match a function or
a library across builds by name. Values in, values out; they know no lens, and start no process
(the drivers that do are perflab.tool_drivers)."""
