"""Perflab's connection to Ray, for --ray's driver: Ray's API is imported only here. It also makes a
local cluster's session folder short enough for Ray's sockets, reads the cluster's machine facts
(refusing a cluster too small for a cell), and keeps Ray's set-up notices out of perflab's
output."""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import replace
from pathlib import Path

from perflab.engine.cluster_node import measure_cell
from perflab.machine.host import machine_facts
from perflab.machine.proc import SubprocessRunner
from perflab.machine.scratch import make_private_folder
from perflab.records.errors import ConfigError
from perflab.records.run_facts import MachineInfo

# a cell's bundle: the CPU the lenses measure on and the one perflab orchestrates from, and the
# memory Ray reserves for it when placing cells (a scheduling figure: Ray does not enforce it)
CELL_CPUS = 2
CELL_MEMORY_BYTES = 512 * 2**20


class RayApi:
    """What the driver needs of Ray, imported only for --ray."""

    def __init__(self) -> None:
        try:
            import ray
            import ray.exceptions
            from ray.util.placement_group import placement_group, remove_placement_group
            from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        except ImportError as error:
            raise ConfigError(
                "--ray needs Ray, which is not installed",
                hint="pip install 'perflab[cluster]' (or pip install ray) here and on every node",
            ) from error
        quiet_ray_notices(logging.getLogger("ray"))
        self.ray = ray
        self.exceptions = ray.exceptions
        self.placement_group = placement_group
        self.remove_placement_group = remove_placement_group
        self.strategy = PlacementGroupSchedulingStrategy
        self.task = ray.remote(measure_cell)


# Ray's notices about its own set-up, below an error: a local cluster turning on token
# authentication by default is Ray's business, not a finding of the run the user asked for
_RAY_SETUP_LOGGERS = ("ray._private.authentication",)


class _RaySetupNotices(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or not record.name.startswith(_RAY_SETUP_LOGGERS)


def quiet_ray_notices(logger: logging.Logger) -> None:
    """Keep Ray's set-up notices out of perflab's output (its errors still pass): on the
    handlers Ray put on its logger, which print what its modules log."""
    for handler in logger.handlers:
        if not any(isinstance(f, _RaySetupNotices) for f in handler.filters):
            handler.addFilter(_RaySetupNotices())


# what Ray puts under its temporary folder for a socket, its session folder named by the start
# time (to the microsecond) and a pid of up to 7 digits: a unix socket's path holds 107 bytes
RAY_SOCKET_TAIL = len("/session_YYYY-MM-DD_hh-mm-ss_ffffff_PPPPPPP/sockets/plasma_store")


def ray_session_folder() -> Path:
    """A private folder for a local cluster's session: in $TMPDIR, or in /tmp where $TMPDIR
    is too deep for Ray's sockets."""
    folder = make_private_folder("ray")
    if len(str(folder)) + RAY_SOCKET_TAIL <= 107 or not os.path.isdir("/tmp"):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    return make_private_folder("ray", "/tmp")


def connect(api: RayApi, address: str | None, temp_dir: str | None) -> None:
    """Connects to the Ray cluster at `address` (a local one when None), or raises ConfigError
    saying how to start one."""
    try:
        api.ray.init(
            address=address or None,
            log_to_driver=False,
            logging_level="WARNING",
            **({} if temp_dir is None else {"_temp_dir": temp_dir}),
        )
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise ConfigError(
            f"cannot connect to the Ray cluster {address!r}: {error}",
            hint="start it with `ray start --head` and pass its address (host:6379), or "
            "--ray alone for a local cluster",
        ) from error


def cluster_machine(api: RayApi, address: str | None) -> MachineInfo:
    """The driver's machine facts and the cluster's; refuses a cluster too small for a cell."""
    resources = api.ray.cluster_resources()
    if resources.get("CPU", 0) < CELL_CPUS:
        raise ConfigError(
            f"the Ray cluster has {resources.get('CPU', 0):g} CPUs; a cell needs {CELL_CPUS} "
            "on one node (the measuring CPU and perflab's)",
            hint="start nodes with at least 2 CPUs (ray start --num-cpus 2)",
        )
    facts = machine_facts(SubprocessRunner(), cpu=None)
    cluster = {
        "address": address or "local",
        "nodes": len([n for n in api.ray.nodes() if n.get("Alive")]),
        "cpus": resources.get("CPU", 0),
    }
    return replace(facts, cluster=cluster, keys=(*(facts.keys or ()), "cluster"))
