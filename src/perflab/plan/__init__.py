"""What to measure and for how long: experiments, suites, schedules and the budget's plan."""
