"""A Nornir inventory plugin, registered by entry point (`nornir.plugins.inventory`), so any script
gets netgen's devices, groups and connection settings from the fabric and its deploy.yaml:

    from nornir import InitNornir
    nr = InitNornir(inventory={"plugin": "NetgenInventory",
                               "options": {"fabric": "inventory/small", "limit": "z01-*"}})

The hosts are the ones `netgen deploy` would reach, built by the same code (deploy/target.py and
deploy/inventory.py): access from deploy.yaml, credentials from NETGEN_USERNAME / NETGEN_PASSWORD /
NETGEN_SSH_KEY or `credentials_file`, host keys checked against deploy.yaml's known_hosts (or
`known_hosts`) unless `verify_host_keys` is false. A fabric with input or design errors raises
NetgenInputError or TargetError, whose messages say what to fix.
"""

from __future__ import annotations

from pathlib import Path

from nornir.core.inventory import Inventory

from netgen.deploy.inventory import nornir_inventory
from netgen.deploy.target import load_context, prepare_target


class NetgenInventory:
    def __init__(self, fabric: str, limit: str | None = None, credentials_file: str | None = None,
                 known_hosts: str | None = None, verify_host_keys: bool = True) -> None:
        self.fabric = fabric
        self.limit = limit
        self.credentials_file = Path(credentials_file) if credentials_file else None
        self.known_hosts = Path(known_hosts) if known_hosts else None
        self.verify_host_keys = verify_host_keys

    def load(self) -> Inventory:
        loaded, ctx = load_context(self.fabric)
        target = prepare_target(ctx, loaded.source, limit=self.limit, credentials_file=self.credentials_file,
                                known_hosts=self.known_hosts, verify_host_keys=self.verify_host_keys,
                                render=False, changes=False)
        return nornir_inventory(ctx.topology, target.deploy, target.names, target.credentials, target.known_hosts)


__all__ = ["NetgenInventory"]
