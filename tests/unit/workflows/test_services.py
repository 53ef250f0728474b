"""The workflows' services: the repository given or found around the current directory, and
the real clock and CI variables by default."""

from __future__ import annotations

import os
import time

from perflab.machine.fake_processes import FakeRunner
from perflab.workflows import WorkflowServices
from tests.support.fake_git import FakeRepository


def test_the_repository_given_is_used_without_asking_git() -> None:
    runner = FakeRunner()  # asked anything, it fails the test
    assert WorkflowServices(repository="/given").repository_path(runner) == "/given"


def test_without_a_repository_git_names_the_one_around_the_current_directory() -> None:
    repo = FakeRepository(path="/found")
    runner = FakeRunner().on_run(r"^git ", repo)
    assert WorkflowServices().repository_path(runner) == "/found"
    assert repo.asked == [("rev-parse", "--show-toplevel")]


def test_the_defaults_are_the_real_clock_and_variables_and_no_listener() -> None:
    services = WorkflowServices()
    assert services.clock is time.monotonic
    assert services.environ is os.environ
    assert services.on_step is None
