"""One benchmark of each of asv's kinds (airspeed velocity); `track_items` returns more where
the environment sets MORE."""

import os


def time_sum():
    sum(range(1000))


def timeraw_start():
    # run by `python -c` in a fresh interpreter, timed whole
    return "import json"


def peakmem_list():
    [0] * 100000


def mem_list():
    return [0] * 1000


def track_items():
    return 15 if os.environ.get("MORE") else 10


track_items.unit = "items"
