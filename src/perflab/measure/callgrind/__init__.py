"""Counting under callgrind, shared by the instructions and memory lenses.
`count.CallgrindCounter` plans and runs the counting on the CPUs; the other modules shape the
counting (its options and loop counts), run the counted processes, switch callgrind around their
loops, read the dumps back and store what they gave. valgrind and vgdb are started with the command
lines of tool_drivers/valgrind.py."""
