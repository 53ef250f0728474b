"""perflab's exit statuses, every command's in one place (an error's own status is its class's
`exit_code`, records/errors.py: 2 for bad input, 3 for a benchmark that failed)."""

EXIT_OK = 0  # every command's success
EXIT_VERDICT = 1  # run: --fail-on matched
EXIT_REGRESSION = 1  # check: a confirmed regression
EXIT_NOT_FOUND = 1  # bisect: no change beyond the threshold, or a step stayed inconclusive
EXIT_BAD_INPUT = 2  # what was asked for is not there (a PerflabError's status)
EXIT_DAMAGED_STORE = 2  # doctor --store found damage
EXIT_NOT_MEASURED = 3  # bisect: BAD itself could not be measured; history: some commits were not
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer killed by the pipe
