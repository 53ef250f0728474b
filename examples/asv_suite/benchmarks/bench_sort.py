"""Sorting, written for asv (airspeed velocity): a parametrized class with a setup, a
combination its setup declines, a module-level benchmark and a peak-memory one."""

import random


class TimeSort:
    params = ([100, 10000], ["random", "sorted"])
    param_names = ["n", "order"]
    timeout = 120

    def setup(self, n, order):
        if n == 100 and order == "sorted":
            # asv's rule: a setup that raises NotImplementedError skips this combination
            raise NotImplementedError("too small to matter when already sorted")
        self.data = list(range(n))
        if order == "random":
            random.Random(1).shuffle(self.data)

    def time_sorted(self, n, order):
        sorted(self.data)

    def peakmem_sorted(self, n, order):
        sorted(self.data)


class TimeJoin:
    def setup_cache(self):
        return ["word"] * 1000

    def time_join(self, words):
        ",".join(words)


def time_sum():
    sum(range(1000))
