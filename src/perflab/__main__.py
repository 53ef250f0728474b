"""`python -m perflab ...` is the `perflab` command, in the interpreter that runs it."""

from perflab.cli import end_start_up_on_interrupt

# before the command's imports, which take most of a second
end_start_up_on_interrupt()

from perflab.cli.main import entry  # noqa: E402

entry()
