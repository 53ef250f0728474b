"""Which variants list a suite: those ready as they are; when every one needs a checkout or a
build, a stand-in where perflab runs, in the first variant's environment (a pure-Python
checkout's env.PYTHONPATH=. then imports the working tree's package there)."""

from __future__ import annotations

from perflab.plan.suite_listing import listing_variants
from perflab.records.model import Variant


def test_the_variants_ready_as_they_are_list_the_suite() -> None:
    ready = Variant("old", python="/envs/old/bin/python")
    assert listing_variants([ready, Variant("new", git="HEAD")]) == [ready]


def test_a_stand_in_lists_in_the_first_variants_environment() -> None:
    checkouts = [
        Variant("main", git="main", env={"PYTHONPATH": "."}),
        Variant("mine", git="HEAD", env={"PYTHONPATH": "."}),
    ]
    assert listing_variants(checkouts) == [Variant("here", env={"PYTHONPATH": "."})]
    assert listing_variants([]) == [Variant("here")]
