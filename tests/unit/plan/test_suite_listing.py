"""Which variants list a suite: those ready as they are; when every one needs a checkout or a
build, a stand-in where perflab runs, in the first variant's environment (a pure-Python
checkout's env.PYTHONPATH=. then imports the working tree's package there)."""

from __future__ import annotations

from perflab.plan.suite_listing import distinct_listings, listing_variants, lists_here
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
    assert lists_here(checkouts)
    assert not lists_here([Variant("old", python="/envs/old/bin/python"), *checkouts])


def test_variants_that_share_interpreter_cwd_and_environment_list_once() -> None:
    a, b = Variant("a"), Variant("b", python="/usr/bin/python3")  # b: the default, by path
    other_env = Variant("c", env={"X": "1"})
    other_cwd = Variant("d", cwd="sub")
    found = distinct_listings([a, b, other_env, other_cwd], "/usr/bin/python3")
    assert found == [a, other_env, other_cwd]
