"""What the source of truth should hold for a fabric, worked out from the topology alone: one
`Wanted` record per object, in the order objects must be created (a device before its
interfaces, a prefix before the addresses in it). The records are plain data in netgen's terms;
a backend (nautobot.py) turns them into its own API bodies.

Kinds, and what identifies one object of each (its `key`):

* `location` (the fabric's name), `manufacturer`, `device_type` (catalog model name), `role`,
  `platform` (the NOS): shared objects, created when missing, never changed by netgen;
* `device` (name), `interface` (device, name), `cable` (device, port of its A end);
* `namespace` (the fabric's name), `prefix` (prefix), `ip_address` (address with its length), each
  address on the interface that carries it;
* `asn` (the number): one per ASN, its description naming the devices that use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv6Interface

from netgen.context import DesignContext
from netgen.topology.model import Role

SHARED = ("location", "manufacturer", "device_type", "role", "platform", "namespace")
KINDS = (*SHARED, "device", "interface", "cable", "prefix", "ip_address", "asn")
HOST_ROLE = "gpu-host"
HOST_VENDOR = "Generic"
FIBRE, DAC = "smf", "dac-passive"  # cable types as Nautobot names them (single-mode fibre, passive copper)


@dataclass(frozen=True, slots=True)
class Wanted:
    kind: str
    key: tuple[str, ...]
    fields: dict[str, object] = field(default_factory=dict)  # netgen's values, compared on every push
    # objects this one hangs on (kind, key): an interface on its device, a cable on its two ends, an
    # address on its interface; where one of them is not netgen's, this one is not written either
    parents: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def label(self) -> str:
        return f"{self.kind} {':'.join(self.key)}"


def interface_type(speed_gbps: int) -> str:
    """The interface type for a port of this speed (Nautobot's choice values for OSFP / QSFP cages)."""
    return {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp",
            800: "800gbase-x-osfp"}.get(speed_gbps, "other")


def _address(value: IPv4Interface | IPv6Interface) -> str:
    return value.with_prefixlen


def wanted_objects(ctx: DesignContext) -> list[Wanted]:
    """Every object of the fabric, shared ones first, in creation order."""
    return (list(_shared(ctx)) + list(_devices(ctx)) + list(_cables(ctx)) + list(_prefixes(ctx))
            + list(_addresses(ctx)) + list(_asns(ctx)))


def _shared(ctx: DesignContext) -> Iterator[Wanted]:
    topo, fabric = ctx.topology, ctx.fabric
    yield Wanted("location", (fabric.name,), {"description": f"netgen fabric {fabric.name}"})
    models = sorted({d.model for d in topo.devices.values()})
    vendors = sorted({ctx.catalog.get(m).vendor for m in models} | ({HOST_VENDOR} if topo.host_nics else set()))
    for vendor in vendors:
        yield Wanted("manufacturer", (vendor,))
    for model in models:
        entry = ctx.catalog.get(model)
        yield Wanted("device_type", (model,), {"manufacturer": entry.vendor})
    nics = _nics_per_host(ctx)
    if nics:
        yield Wanted("device_type", (_host_type(nics),), {"manufacturer": HOST_VENDOR})
    for role in [*(r.value for r in Role), *([HOST_ROLE] if nics else [])]:
        yield Wanted("role", (role,))
    for nos in sorted({d.nos for d in topo.devices.values()}):
        yield Wanted("platform", (nos,))
    yield Wanted("namespace", (fabric.name,))


def _nics_per_host(ctx: DesignContext) -> int:
    counts: dict[str, int] = {}
    for nic in ctx.topology.host_nics:
        counts[nic.host] = counts.get(nic.host, 0) + 1
    return max(counts.values(), default=0)


def _host_type(nics: int) -> str:
    return f"gpu-host-{nics}x-nic"


def _devices(ctx: DesignContext) -> Iterator[Wanted]:
    topo, fabric = ctx.topology, ctx.fabric
    for device in topo.devices.values():
        yield Wanted("device", (device.name,), {"device_type": device.model, "role": device.role.value,
                                                "platform": device.nos, "location": fabric.name,
                                                "asn": device.asn})
        on_device = (("device", (device.name,)),)
        yield Wanted("interface", (device.name, "Loopback0"), {"type": "virtual", "description": "router ID"},
                     on_device)
        for port in topo.ports[device.name]:
            yield Wanted("interface", (device.name, port.name),
                         {"type": interface_type(port.speed_gbps), "mtu": fabric.mtu,
                          "description": f"{port.peer_device}:{port.peer_port}"}, on_device)
    host_type = _host_type(_nics_per_host(ctx))
    seen: set[str] = set()
    for nic in topo.host_nics:
        if nic.host not in seen:
            seen.add(nic.host)
            yield Wanted("device", (nic.host,), {"device_type": host_type, "role": HOST_ROLE, "platform": "",
                                                 "location": fabric.name, "asn": None})
        yield Wanted("interface", (nic.host, f"nic{nic.nic}"),
                     {"type": interface_type(nic.speed_gbps), "mtu": fabric.mtu,
                      "description": f"{nic.rtsw}:{nic.port}"}, (("device", (nic.host,)),))


def _cables(ctx: DesignContext) -> Iterator[Wanted]:
    topo = ctx.topology
    lengths = {(p.device, p.name): p.cable_m for ports in topo.ports.values() for p in ports}
    for nic in topo.host_nics:
        yield Wanted("cable", (nic.host, f"nic{nic.nic}"),
                     {"b_device": nic.rtsw, "b_port": nic.port, "type": DAC,
                      "length": lengths.get((nic.rtsw, nic.port), 0)},
                     (("interface", (nic.host, f"nic{nic.nic}")), ("interface", (nic.rtsw, nic.port))))
    for link in topo.links:
        yield Wanted("cable", (link.lower.device, link.lower.port),
                     {"b_device": link.upper.device, "b_port": link.upper.port, "type": FIBRE,
                      "length": link.cable_m},
                     (("interface", (link.lower.device, link.lower.port)),
                      ("interface", (link.upper.device, link.upper.port))))


def _prefixes(ctx: DesignContext) -> Iterator[Wanted]:
    """The fabric's address pools (containers), then each device's host subnets in them."""
    topo, pools = ctx.topology, ctx.fabric.addressing
    for pool in (pools.loopback_ipv4, pools.p2p_ipv4, pools.host_ipv4, pools.loopback_ipv6, pools.p2p_ipv6,
                 pools.host_ipv6):
        if pool is not None:
            yield Wanted("prefix", (str(pool),), {"type": "container"})
    for device in topo.devices.values():
        for subnet in (device.host_subnet_ipv4, device.host_subnet_ipv6):
            if subnet is not None:
                yield Wanted("prefix", (str(subnet),), {"type": "network", "description": f"{device.name} hosts"})


def _addresses(ctx: DesignContext) -> Iterator[Wanted]:
    """Every address: loopbacks, link ends, host gateways, host NICs."""
    topo = ctx.topology
    for device in topo.devices.values():
        for loopback in (device.loopback_ipv4, device.loopback_ipv6):
            if loopback is not None:
                yield Wanted("ip_address", (_address(loopback),), {"device": device.name, "interface": "Loopback0"},
                             (("interface", (device.name, "Loopback0")),))
    for link in topo.links:
        for end in (link.lower, link.upper):
            for value in (end.ipv4, end.ipv6):
                if value is not None:
                    yield Wanted("ip_address", (_address(value),), {"device": end.device, "interface": end.port},
                                 (("interface", (end.device, end.port)),))
    # the host gateway sits on the RTSW's VLAN interface, not a cabled port: recorded unassigned
    for device in topo.devices.values():
        for gateway in (device.host_gateway_ipv4, device.host_gateway_ipv6):
            if gateway is not None:
                yield Wanted("ip_address", (_address(gateway),), {"device": "", "interface": "",
                                                                  "description": f"{device.name} host gateway"})
    for nic in topo.host_nics:
        yield Wanted("ip_address", (_address(nic.ipv4),), {"device": nic.host, "interface": f"nic{nic.nic}"},
                     (("interface", (nic.host, f"nic{nic.nic}")),))


def _asns(ctx: DesignContext) -> Iterator[Wanted]:
    users: dict[int, list[str]] = {}
    for device in ctx.topology.devices.values():
        users.setdefault(device.asn, []).append(device.name)
    for asn, names in sorted(users.items()):
        yield Wanted("asn", (str(asn),), {"description": ", ".join(names)[:200]})


__all__ = ["DAC", "FIBRE", "KINDS", "SHARED", "Wanted", "interface_type", "wanted_objects"]
