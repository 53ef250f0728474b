"""The asm lens."""
