"""The records that flow between the steps (plan, run, store, analyse, render): typed, frozen,
pure."""
