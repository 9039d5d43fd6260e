# Copyright: netgen maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
# SPDX-License-Identifier: Apache-2.0
#
# An Ansible inventory plugin over netgen's own inventory code
# (netgen/deploy/ansible_inventory.py), so the hosts, groups and rollout order are exactly what
# `netgen ansible-inventory` and `netgen deploy` use.
# ruff: noqa: E402

from __future__ import annotations

DOCUMENTATION = r"""
---
name: netgen
# ansible-test takes an author as "Name (@github-handle)" or "Name (!UNKNOWN)"; netgen publishes no handle
author: netgen maintainers (!UNKNOWN)
short_description: A netgen fabric's switches as Ansible hosts
description:
  - Reads a netgen fabric file and the deploy.yaml beside it, and adds every switch (or those of
    I(limit)) with groups per tier (C(tier_rtsw), ...), zone (C(zone_1), C(atsw_layer)) and NOS
    (C(nos_eos), C(nos_sonic)), and the group C(netgen_rollout) in netgen's rollout order.
  - Host variables C(ansible_host), C(ansible_port), C(ansible_network_os) (EOS), C(netgen_role),
    C(netgen_zone), C(netgen_model), C(netgen_asn), C(netgen_batch); C(netgen_fabric) on every host.
    What a group's name says (the NOS's C(netgen_platform), C(netgen_nos) and C(ansible_network_os),
    the tier's C(netgen_role), the zone's C(netgen_zone)) is that group's variable, set once.
  - netgen must be installed in the Python Ansible runs in (C(pip install netgen-fabric)).
options:
  plugin:
    description: This plugin's name.
    required: true
    choices: [netgen.fabric.netgen]
  fabric:
    description: The fabric file or its directory; relative to this inventory file.
    type: path
    required: true
  limit:
    description: Only these switches (netgen's --limit patterns, which re-plan the rollout batches).
    type: str
"""

EXAMPLES = r"""
# fabric.netgen.yml
plugin: netgen.fabric.netgen
fabric: inventory/small
limit: "z01-*"
"""

from pathlib import Path

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin


class InventoryModule(BaseInventoryPlugin):
    NAME = "netgen.fabric.netgen"

    def verify_file(self, path):
        return super().verify_file(path) and str(path).endswith((".netgen.yml", ".netgen.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        fabric = Path(path).parent / Path(self.get_option("fabric")).expanduser()
        try:
            from netgen.deploy.ansible_inventory import ROLLOUT_GROUP, fabric_inventory  # noqa: PLC0415
        except ImportError as exc:
            raise AnsibleParserError(f"netgen is not importable by the Python Ansible runs in ({exc}):"
                                     " pip install netgen-fabric there") from None
        try:
            fabric_file, data = fabric_inventory(fabric, self.get_option("limit"))
        except Exception as exc:  # netgen's input and target errors say what to fix
            raise AnsibleParserError(f"netgen inventory {path}: {exc}") from None
        hostvars = data["_meta"]["hostvars"]
        for name in data[ROLLOUT_GROUP]["hosts"]:  # rollout order: `order: inventory` follows it
            self.inventory.add_host(name)
            for key, value in hostvars[name].items():
                self.inventory.set_variable(name, key, value)
            self.inventory.set_variable(name, "netgen_fabric", str(fabric_file.resolve()))
        for group, body in data.items():
            if group in ("_meta", "all"):
                continue
            self.inventory.add_group(group)
            for name in body["hosts"]:
                self.inventory.add_host(name, group=group)
            for key, value in (body.get("vars") or {}).items():
                self.inventory.set_variable(group, key, value)
