"""Pure statistics: samples in, numbers out. No I/O, no formatting."""
