"""An Ansible inventory generated from the fabric, so hosts, groups and variables never drift from
the intent (Ansible's JSON inventory format, as `--list` of an inventory script prints it).

Groups: `tier_<rtsw|ctsw|atsw>`, `zone_<N>` / `atsw_layer`, `nos_<sonic|eos>`, and
`netgen_rollout`, which lists the hosts in rollout order: a play over that group with
`order: inventory` and `serial: "{{ netgen_serial }}"` runs exactly netgen's failure-domain
batches (canary RTSW, canary CTSW, then batches that respect the zone shares), because Ansible
cuts the ordered host list into chunks of the `serial` sizes.

What a group's name already says is that group's variable, written once: the NOS's netmiko platform
and Ansible network OS (`nos_eos`), the tier's role, the zone's number. A host carries only its own
(address, port, model, ASN, batch). Ansible copies every group variable into each member's
variables when it reads an inventory, so group variables stay small: the rollout plan is each
host's `netgen_batch` / `netgen_batch_label` and netgen_rollout's order, never a list of every
batch's hosts (100 KB at meta-24k scale, which made `ansible-inventory --list` 174 MB). Nothing
that can differ between two fabrics is a group variable, so two fabrics (or another inventory)
read together never give a host another's value.

No credential is ever written here: Ansible takes them from its own vault or environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from netgen.deploy.inventory import DeployFile, RolloutPolicy, device_access
from netgen.deploy.rollout import plan_batches
from netgen.registry import NOS
from netgen.topology.model import Topology

ROLLOUT_GROUP = "netgen_rollout"


def ansible_inventory(topology: Topology, deploy: DeployFile, names: list[str],
                      policy: RolloutPolicy | None = None) -> dict[str, Any]:
    batches = plan_batches(topology, names, policy or deploy.rollout)
    groups: dict[str, list[str]] = {}
    group_vars: dict[str, dict[str, Any]] = {}
    hostvars: dict[str, dict[str, Any]] = {}
    for batch in batches:
        for name in batch.devices:
            device = topology.devices[name]
            host, port = device_access(deploy, device)
            hostvars[name] = {
                "ansible_host": host, "ansible_port": port, "netgen_model": device.model, "netgen_asn": device.asn,
                "netgen_batch": batch.index, "netgen_batch_label": batch.label,
            }
            tier = f"tier_{device.role.value}"
            zone = f"zone_{device.zone}" if device.zone is not None else "atsw_layer"
            nos = f"nos_{device.nos}"
            group_vars[tier] = {"netgen_role": device.role.value}
            group_vars[zone] = {"netgen_zone": device.zone}
            bundle = NOS.bundle(device.nos)  # netmiko's device type; Ansible's network OS where the NOS has one
            group_vars[nos] = {"netgen_platform": bundle.netmiko_device_type, "netgen_nos": device.nos}
            if bundle.ansible_network_os is not None:  # never `ansible_connection`: a host variable would
                # override netgen_deploy's `connection: local`
                group_vars[nos]["ansible_network_os"] = bundle.ansible_network_os
            for group in (tier, zone, nos):
                groups.setdefault(group, []).append(name)
    inventory: dict[str, Any] = {"_meta": {"hostvars": hostvars}}
    for group, hosts in sorted(groups.items()):
        inventory[group] = {"hosts": sorted(hosts), "vars": group_vars[group]}
    inventory[ROLLOUT_GROUP] = {
        "hosts": [name for batch in batches for name in batch.devices],  # rollout order
        "vars": {"netgen_serial": [len(batch.devices) for batch in batches]},
    }
    inventory["all"] = {"children": sorted([*groups, ROLLOUT_GROUP])}
    return inventory


def host_variables(script_inventory: Mapping[str, Any], name: str) -> dict[str, Any]:
    """One host's variables as Ansible sees them: its groups' variables, then its own (which win);
    empty for a host the inventory does not have."""
    own: dict[str, Any] | None = script_inventory["_meta"]["hostvars"].get(name)
    if own is None:
        return {}
    merged: dict[str, Any] = {}
    for group, body in script_inventory.items():
        if group not in ("_meta", "all") and name in body["hosts"]:
            merged |= body.get("vars") or {}
    return merged | own


def yaml_inventory(script_inventory: Mapping[str, Any]) -> dict[str, Any]:
    """The inventory-script JSON of `ansible_inventory` in the YAML/JSON inventory plugin's shape
    (what ansible-runner writes into its private data dir). Hosts keep their order in every
    group: `order: inventory` over netgen_rollout then runs the rollout order."""
    hostvars = script_inventory["_meta"]["hostvars"]
    children: dict[str, Any] = {}
    for group, body in script_inventory.items():
        if group in ("_meta", "all"):
            continue
        children[group] = {"hosts": dict.fromkeys(body["hosts"])}
        if body.get("vars"):
            children[group]["vars"] = body["vars"]
    order = script_inventory[ROLLOUT_GROUP]["hosts"]
    return {"all": {"hosts": {name: hostvars[name] for name in order}, "children": children}}


def fabric_inventory(fabric: str | Path, limit: str | None = None) -> tuple[Path, dict[str, Any]]:
    """The fabric file and its inventory-script JSON, for the Ansible inventory plugin (the
    collection's netgen.fabric.netgen) and `netgen ansible-inventory`. Raises NetgenInputError
    (the fabric or deploy.yaml) or TargetError (design errors, a --limit that matches nothing)."""
    from netgen.deploy.inventory import load_deploy  # noqa: PLC0415
    from netgen.deploy.target import TargetError, load_context  # noqa: PLC0415  (target imports this module's users)
    from netgen.topology.selection import select  # noqa: PLC0415

    loaded, ctx = load_context(fabric)
    deploy = load_deploy(loaded.source.parent)
    names = select(list(ctx.topology.devices), ctx.topology.devices, limit)
    if not names:
        raise TargetError(f"limit {limit!r} matches no device")
    return loaded.source, ansible_inventory(ctx.topology, deploy, names)


def playbook_vars(fabric_file: Path, script_inventory: Mapping[str, Any]) -> dict[str, Any]:
    """The extra vars roles/rollout.yml needs (`-e @file`): the fabric and the batch sizes, which
    Ansible will not template into `serial` from inventory variables."""
    return {"netgen_fabric": str(fabric_file.resolve()),
            "netgen_serial": script_inventory[ROLLOUT_GROUP]["vars"]["netgen_serial"]}
