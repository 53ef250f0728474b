"""What a run is measured through (engine/services.py's RunServices): the real services by
default, each replaced alone by a test's fake, and never changed once made."""

from __future__ import annotations

import dataclasses
import time

import pytest

from perflab.engine.services import RunServices
from perflab.machine.fake_processes import FakeRunner
from perflab.measure.lens import NullProgress


def test_every_service_defaults_to_the_real_one() -> None:
    services = RunServices()
    assert type(services.runner).__name__ == "SubprocessRunner"
    assert isinstance(services.progress, NullProgress)
    assert services.clock is time.monotonic
    assert services.started_at_s is None  # perflab's start-up counts in no budget
    assert services.default_python is None and services.cache_dir is None
    assert RunServices().runner is not services.runner  # each run its own


def test_a_fake_replaces_one_service_and_leaves_the_others_real() -> None:
    runner = FakeRunner()
    services = RunServices(runner=runner, clock=lambda: 12.5, cache_dir="/tmp/builds")
    assert services.runner is runner and services.clock() == 12.5
    assert services.cache_dir == "/tmp/builds"
    assert isinstance(services.progress, NullProgress)


def test_services_are_named_and_never_changed() -> None:
    with pytest.raises(TypeError):
        RunServices(FakeRunner())  # type: ignore[misc]
    services = RunServices()
    with pytest.raises(dataclasses.FrozenInstanceError):
        services.default_python = "python3.13"  # type: ignore[misc]
