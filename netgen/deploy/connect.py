"""Connect to a device and build its NOS driver: the one way every Nornir task of netgen reaches a
switch (the rollout's pipeline, `netgen recover`, `netgen check`). The connection is Nornir's
netmiko plugin on the task's host (its inventory: address, credentials, host keys); the driver is
the one the device's NOS bundle names (driver.py: driver_factory). The Nornir over a deploy
target's devices is made here too."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from nornir.core import Nornir
from nornir.core.task import Task

from netgen.deploy.driver import Driver, driver_factory
from netgen.deploy.inventory import make_nornir, nornir_inventory
from netgen.deploy.options import DeployOptions
from netgen.topology.model import Device

if TYPE_CHECKING:  # only named here: a target is built from the fabric and deploy.yaml, never connected to
    from netgen.deploy.target import DeployTarget

CONNECTION = "netmiko"  # the Nornir connection plugin every driver speaks through


def nornir_for(target: DeployTarget, workers: int | None = None) -> Nornir:
    """A Nornir over `target`'s devices (their management addresses, the target's credentials and
    host keys), `workers` devices at once (default: deploy.yaml's rollout.workers)."""
    inventory = nornir_inventory(target.ctx.topology, target.deploy, target.names, target.credentials,
                                 target.known_hosts)
    return make_nornir(inventory, workers or target.deploy.rollout.workers)


def connect_driver(task: Task, device: Device, files: Mapping[str, str], options: DeployOptions) -> Driver:
    """The task host's connection (opened now, or the one Nornir holds) and the device's driver on
    it, with the change's id, command timeout and what the change may remove (options)."""
    connection = task.host.get_connection(CONNECTION, task.nornir.config)
    factory = driver_factory(device.nos)
    return factory(connection, device, files, options.change_id, options.command_timeout_s,
                   options.ownership_of(device.nos))


def disconnect(task: Task) -> None:
    """Close the task host's connection; one that is already gone (a dropped session, a connect
    that failed) is nothing to close."""
    with contextlib.suppress(Exception):
        task.host.close_connection(CONNECTION)


__all__ = ["CONNECTION", "connect_driver", "disconnect", "nornir_for"]
