"""What to measure: experiments from files and the command line, suites, designs and schedules
(how long is perflab.budget's)."""
