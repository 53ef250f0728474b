"""`python -m perflab ...` is the `perflab` command, in the interpreter that runs it."""

from perflab.cli.main import entry

entry()
