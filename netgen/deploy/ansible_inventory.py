"""An Ansible inventory generated from the fabric, so hosts, groups and variables never drift from
the intent (Ansible's JSON inventory format, as `--list` of an inventory script prints it).

Groups: `tier_<rtsw|ctsw|atsw>`, `zone_<N>` / `atsw_layer`, `nos_<sonic|eos>`, and
`netgen_rollout`, which lists the hosts in rollout order: a play over that group with
`order: inventory` and `serial: "{{ netgen_serial }}"` runs exactly netgen's failure-domain
batches (canary RTSW, canary CTSW, then batches that respect the zone shares), because Ansible
cuts the ordered host list into chunks of the `serial` sizes.

No credential is ever written here: Ansible takes them from its own vault or environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from netgen.deploy.inventory import ANSIBLE_NETWORK_OS, NETMIKO_PLATFORMS, DeployFile, RolloutPolicy, device_access
from netgen.deploy.rollout import plan_batches
from netgen.topology.model import Topology

ROLLOUT_GROUP = "netgen_rollout"


def ansible_inventory(topology: Topology, deploy: DeployFile, names: list[str],
                      policy: RolloutPolicy | None = None) -> dict[str, Any]:
    batches = plan_batches(topology, names, policy or deploy.rollout)
    groups: dict[str, list[str]] = {}
    hostvars: dict[str, dict[str, Any]] = {}
    for batch in batches:
        for name in batch.devices:
            device = topology.devices[name]
            host, port = device_access(deploy, device)
            hostvars[name] = {
                "ansible_host": host, "ansible_port": port,
                "netgen_platform": NETMIKO_PLATFORMS[device.nos],
                "netgen_role": device.role.value, "netgen_zone": device.zone, "netgen_nos": device.nos,
                "netgen_model": device.model, "netgen_asn": device.asn,
                "netgen_batch": batch.index, "netgen_batch_label": batch.label,
            }
            if device.nos in ANSIBLE_NETWORK_OS:
                hostvars[name]["ansible_network_os"] = ANSIBLE_NETWORK_OS[device.nos]
            for group in (f"tier_{device.role.value}",
                          f"zone_{device.zone}" if device.zone is not None else "atsw_layer",
                          f"nos_{device.nos}"):
                groups.setdefault(group, []).append(name)
    inventory: dict[str, Any] = {"_meta": {"hostvars": hostvars}}
    for group, hosts in sorted(groups.items()):
        inventory[group] = {"hosts": sorted(hosts)}
    inventory[ROLLOUT_GROUP] = {
        "hosts": [name for batch in batches for name in batch.devices],  # rollout order
        "vars": {"netgen_serial": [len(batch.devices) for batch in batches],
                 "netgen_batches": [{"index": b.index, "label": b.label, "hosts": list(b.devices)}
                                    for b in batches]},
    }
    inventory["all"] = {"children": sorted([*groups, ROLLOUT_GROUP])}
    return inventory


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
    from netgen.deploy.pipeline import select  # noqa: PLC0415
    from netgen.deploy.target import TargetError, load_context  # noqa: PLC0415  (target imports this module's users)

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
