"""One switch's effective settings and where each came from (`netgen show --device NAME`).

Every value is read from the expanded topology (what the renderers use), and its source is the
fabric-file path that decided it: a per-device table (asn.overrides, services.management.devices),
a plan by position, a fabric-wide section or the services.overrides entry that replaced it there, or
a custom_config block at its layer. Blocks a narrower
block of the same name replaces are listed too, as replaced, so a reader sees the whole layering.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from netgen.intent.custom import layered, replaced
from netgen.intent.fabric import Fabric
from netgen.intent.services import OVERRIDABLE, Banner, effective_services
from netgen.topology.model import Device


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    value: str
    source: str  # the fabric-file path that decided it


@dataclass(frozen=True, slots=True)
class AppliedBlock:
    name: str
    layer: str  # all | tier | zone | device
    source: str  # custom_config[i]
    nos: tuple[str, ...]  # eos_cli / sonic_config_db / frr: which parts it has
    replaced_by: str | None = None  # the narrower block of the same name that replaces it here


@dataclass
class EffectiveSettings:
    device: str
    settings: list[Setting] = field(default_factory=list)
    custom_config: list[AppliedBlock] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _zone_index(fabric: Fabric, zone: int | None) -> str:
    if zone is None:
        return "aggregation"
    for index, entry in enumerate(fabric.zones):
        if entry.id == zone:
            return f"zones[{index}]"
    return f"zone {zone}"


def effective_settings(fabric: Fabric, device: Device) -> EffectiveSettings:
    result = EffectiveSettings(device.name)
    where = _zone_index(fabric, device.zone)
    add = result.settings.append
    add(Setting("tier", device.role.value, where))
    add(Setting("zone", "-" if device.zone is None else str(device.zone), where))
    add(Setting("model", device.model, where))
    add(Setting("nos", device.nos, f"catalog model {device.model}"))
    asn_source = f"asn.overrides.{device.name}" if device.name in fabric.asn.overrides else "asn (plan by position)"
    add(Setting("asn", str(device.asn), asn_source))
    add(Setting("loopback_ipv4", str(device.loopback_ipv4), "addressing (plan by position)"))
    if device.host_subnet_ipv4 is not None:
        add(Setting("host_subnet_ipv4", str(device.host_subnet_ipv4), "addressing (plan by position)"))
    if fabric.bgp.password is not None:  # shown as its reference, never read
        add(Setting("bgp_authentication", f"TCP MD5 on every session, key: {fabric.bgp.password.describe()}",
                    "bgp.password"))
    services = fabric.services
    management = services.management
    if management is not None and device.mgmt_ipv4 is not None:
        pinned = device.name in management.devices
        add(Setting("management_ipv4", str(device.mgmt_ipv4),
                    f"services.management.devices.{device.name}" if pinned
                    else "services.management.prefix (plan by position)"))
        add(Setting("management_vrf", management.vrf, "services.management.vrf"))
        add(Setting("management_gateway", str(management.gateway), "services.management.gateway"))
    effective = effective_services(services, device.role.value, device.zone, device.name)
    for section in OVERRIDABLE:
        if section == "aaa":
            continue  # below, its keys by reference
        value = getattr(effective, section)
        shown = "not declared: the switch keeps its own (deploy.yaml ownership)" if value is None else _brief(value)
        add(Setting(section, shown, effective.sources[section]))
    if effective.aaa is not None:  # the keys are shown as their references, never read
        aaa = effective.aaa
        tacacs = (f"; TACACS+ {', '.join(str(a) for a in aaa.tacacs.servers)} (timeout {aaa.tacacs.timeout_s} s,"
                  f" key: {aaa.tacacs.key.describe()})") if aaa.tacacs else ""
        radius = (f"; RADIUS {', '.join(str(a) for a in aaa.radius.servers)} (timeout {aaa.radius.timeout_s} s,"
                  f" {aaa.radius.retransmit} retransmits, key: {aaa.radius.key.describe()})") if aaa.radius else ""
        add(Setting("aaa", f"login {', '.join(aaa.login)}{tacacs}{radius}", effective.sources["aaa"]))
    if services.snmp is not None:
        add(Setting("snmp", "SNMPv3 read-only (SHA, AES-128): " + ", ".join(u.name for u in services.snmp.users),
                    "services.snmp"))
    blocks = list(fabric.custom_config)
    index = {id(block): number for number, block in enumerate(blocks)}
    role, zone = device.role.value, device.zone
    applied = layered(blocks, role, zone, device.name)
    by_name = {block.name: block for block in applied}
    # only blocks with a part for this switch's NOS: an frr-only block means nothing to an EOS switch
    for block in replaced(blocks, role, zone, device.name):
        if block.parts_for(device.nos):
            result.custom_config.append(AppliedBlock(
                block.name, block.layer, f"custom_config[{index[id(block)]}]", block.parts_for(device.nos),
                f"custom_config[{index[id(by_name[block.name])]}]"))
    for block in applied:
        if block.parts_for(device.nos):
            result.custom_config.append(AppliedBlock(block.name, block.layer, f"custom_config[{index[id(block)]}]",
                                                     block.parts_for(device.nos)))
    return result


def _brief(section: Any) -> str:
    """A section's values on one line (model_dump in JSON mode: addresses as text)."""
    data = section.model_dump(mode="json")
    if isinstance(section, Banner):  # its first line is enough to recognise it
        first = str(data["login"]).split("\n", 1)[0]
        return f"login banner: {first[:60]!r}"
    return ", ".join(f"{key}={value if isinstance(value, str) else json.dumps(value)}" for key, value in data.items())


__all__ = ["AppliedBlock", "EffectiveSettings", "Setting", "effective_settings"]
