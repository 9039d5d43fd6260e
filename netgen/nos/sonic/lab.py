"""A SONiC switch in the netns lab: the node gets what its rendered config_db.json says, applied the
way SONiC's intfmgrd and vlanmgrd apply it (INTERFACE / LOOPBACK_INTERFACE / VLAN_INTERFACE
addresses, VLAN_MEMBER ports in the VLAN's bridge, PORT mtu and admin status), and runs its rendered
frr.conf unchanged. The lab adapter of the SONiC bundle (netgen/lab/adapters.py: Adapter)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from netgen.context import DesignContext
from netgen.lab.plan import LabInterface, LabSliceError, NodeFacts, linux_ifname
from netgen.topology.model import Device

SONIC_FRR_SOURCE = "the rendered frr.conf, unchanged but for its secrets, filled as a deploy fills them"


def _split_key(key: str) -> tuple[str, str | None]:
    name, _, rest = key.partition("|")
    return name, rest or None


def sonic_facts(ctx: DesignContext, device: Device, files: Mapping[str, str]) -> NodeFacts:
    try:
        config: dict[str, Any] = json.loads(files["config_db.json"])
        frr = files["frr.conf"]
    except KeyError as exc:
        raise LabSliceError(f"{device.name}: no rendered {exc.args[0]}") from None
    except json.JSONDecodeError as exc:
        raise LabSliceError(f"{device.name}: config_db.json is not JSON: {exc}") from None
    port_table: dict[str, dict[str, str]] = config.get("PORT", {})
    addresses: dict[str, list[str]] = {}
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        for key in config.get(table, {}):
            name, prefix = _split_key(key)
            entry = addresses.setdefault(name, [])
            if prefix is not None:
                entry.append(prefix)
    members = {}
    for key in config.get("VLAN_MEMBER", {}):
        vlan, port = _split_key(key)
        if port is not None:
            members[port] = vlan
    ports = {}
    for name, fields in port_table.items():
        ports[name] = LabInterface(
            name=linux_ifname(name), rendered=name, kind="port", mtu=int(fields.get("mtu", "9100")),
            up=fields.get("admin_status", "down") == "up", addresses=tuple(addresses.get(name, ())),
            bridge=members.get(name), lldp_id=fields.get("alias") or name,
            lldp_description=fields.get("description", ""))
    bridges = [LabInterface(name=name, rendered=name, kind="bridge", mtu=9100, addresses=tuple(addresses[name]))
               for name in config.get("LOOPBACK_INTERFACE", {}) if "|" not in name]
    for name, fields in config.get("VLAN", {}).items():
        bridges.append(LabInterface(name=name, rendered=name, kind="bridge", mtu=int(fields.get("mtu", "9100")),
                                    addresses=tuple(addresses.get(name, ()))))
    return NodeFacts(ports=ports, bridges=bridges, frr_conf=frr, frr_source=SONIC_FRR_SOURCE)
