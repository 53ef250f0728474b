"""perflab's exit statuses, the ones every command shares (a workflow adds its own)."""

EXIT_OK = 0
EXIT_VERDICT = 1  # --fail-on matched
EXIT_DAMAGED_STORE = 2  # doctor --store found damage
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
