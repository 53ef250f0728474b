"""Counting under callgrind, shared by the instructions and memory lenses:
`count.InstructionCounter` plans and runs the counting on the CPUs; the other modules launch
valgrind, run the counted processes, switch callgrind around their loops, read the dumps back
and store what they gave."""
