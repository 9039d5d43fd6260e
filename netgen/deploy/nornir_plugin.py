"""A Nornir inventory plugin, registered by entry point (`nornir.plugins.inventory`), so any script
gets netgen's devices, groups and connection settings from the fabric and its deploy.yaml:

    from nornir import InitNornir
    nr = InitNornir(inventory={"plugin": "NetgenInventory",
                               "options": {"fabric": "inventory/small", "limit": "z01-*"}})

The hosts are the ones `netgen deploy` would reach, built by the same code (deploy/inventory.py):
access from deploy.yaml, netmiko's options from its `ssh:` settings. Listing hosts needs neither
credentials nor host keys, only connecting does:

- Credentials are filled when given (the `credentials_file` option, or NETGEN_USERNAME with
  NETGEN_PASSWORD or NETGEN_SSH_KEY); otherwise each host's username and password stay unset, and
  Nornir takes them from `nr.inventory.defaults` (set them there before running a task).
- Host keys are checked when a connection opens, against the `known_hosts` option or deploy.yaml's
  `ssh.known_hosts`; a missing file then refuses the connection, never the listing.
  `verify_host_keys: false` turns checking off.

Errors say which option or file to fix: NetgenInputError for the fabric and deploy.yaml (file, line
and column), TargetError for design errors, a `limit` that matches nothing and unusable credentials.
"""

from __future__ import annotations

import os
from pathlib import Path

from nornir.core.inventory import Inventory

from netgen.deploy.inventory import USERNAME_ENV, Credentials, CredentialsError, load_credentials, load_deploy
from netgen.deploy.inventory import nornir_inventory as netgen_nornir_inventory
from netgen.deploy.target import TargetError, load_context
from netgen.topology.selection import select

PLUGIN = "NetgenInventory"
# nornir_inventory wants credentials; without any, the hosts are built with these and their
# username and password unset again, so Nornir's defaults (or a later fill) apply.
_NO_CREDENTIALS = Credentials("", None, None, "none given")


class NetgenInventory:
    def __init__(self, fabric: str, limit: str | None = None, credentials_file: str | None = None,
                 known_hosts: str | None = None, verify_host_keys: bool = True) -> None:
        self.fabric = fabric
        self.limit = limit
        self.credentials_file = Path(credentials_file).expanduser() if credentials_file else None
        self.known_hosts = Path(known_hosts).expanduser() if known_hosts else None
        self.verify_host_keys = verify_host_keys

    def load(self) -> Inventory:
        loaded, ctx = load_context(self.fabric)
        deploy = load_deploy(loaded.source.parent)
        names = select(list(ctx.topology.devices), ctx.topology.devices, self.limit)
        if not names:
            raise TargetError(f"{PLUGIN} option limit={self.limit!r} matches no device of {loaded.source}")
        credentials = self._credentials()
        known_hosts = None
        if self.verify_host_keys:
            known_hosts = self.known_hosts or Path(deploy.ssh.known_hosts).expanduser()
        inventory = netgen_nornir_inventory(ctx.topology, deploy, names, credentials or _NO_CREDENTIALS,
                                            known_hosts)
        for host in inventory.hosts.values():
            host.defaults = inventory.defaults  # what a script sets in nr.inventory.defaults reaches every host
            if credentials is None:
                host.username = None
                host.password = None
        return inventory

    def _credentials(self) -> Credentials | None:
        """The credentials given (the credentials_file option, else the environment), or None."""
        if self.credentials_file is None and not os.environ.get(USERNAME_ENV):
            return None
        try:
            return load_credentials(self.credentials_file)
        except CredentialsError as exc:
            given = "credentials_file" if self.credentials_file is not None else "environment"
            raise TargetError(f"{PLUGIN} {given}: {exc}") from None


__all__ = ["PLUGIN", "NetgenInventory"]
