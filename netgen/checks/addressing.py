"""NG2xx: address pools and ASNs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from ipaddress import IPv4Network, IPv6Network
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext
from netgen.intent.fabric import PRIVATE_ASN_2BYTE, PRIVATE_ASN_4BYTE
from netgen.topology.addressing import host_prefix_length, slot_count
from netgen.topology.model import Device, Role

RESERVED_ASNS = {23456: "AS_TRANS (RFC 6793)", 65535: "reserved (RFC 7300)"}
MAX_ASN = 4_294_967_294


@register
class PoolExhaustion:
    code: ClassVar[str] = "NG201"
    title: ClassVar[str] = "Every address pool slot holds what its zone needs"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        slots = slot_count(ctx.fabric.addressing.max_zones)
        for use in ctx.topology.pool_use:
            if use.needed <= use.capacity:
                continue
            pool = getattr(ctx.fabric.addressing, use.pool)
            # The part is 1/share of a slot and a slot is 1/slots of the pool: the smallest pool
            # that fits is needed x slots x share addresses, rounded up to a power of two.
            bits = math.ceil(math.log2(use.needed * slots * use.share))
            yield error(
                self.code, f"addressing.{use.pool} ({use.slot})",
                f"{use.what} need {use.needed} addresses but the {use.slot} part of {pool} offers"
                f" {use.capacity} (the pool is cut into {slots} slots)",
                f"use a /{pool.max_prefixlen - bits} or larger for {use.pool}, or lower addressing.max_zones",
            )


def _pools(ctx: DesignContext) -> list[tuple[str, IPv4Network | IPv6Network]]:
    pools = ctx.fabric.addressing
    named: list[tuple[str, IPv4Network | IPv6Network | None]] = [
        ("loopback_ipv4", pools.loopback_ipv4),
        ("p2p_ipv4", pools.p2p_ipv4),
        ("host_ipv4", pools.host_ipv4),
        ("loopback_ipv6", pools.loopback_ipv6),
        ("p2p_ipv6", pools.p2p_ipv6),
        ("host_ipv6", pools.host_ipv6),
    ]
    return [(name, net) for name, net in named if net is not None]


def _overlap(a: IPv4Network | IPv6Network, b: IPv4Network | IPv6Network) -> bool:
    return a.version == b.version and a.overlaps(b)


@register
class PoolOverlap:
    code: ClassVar[str] = "NG202"
    title: ClassVar[str] = "Backend pools do not overlap each other"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        pools = _pools(ctx)
        for i, (name_a, net_a) in enumerate(pools):
            for name_b, net_b in pools[i + 1:]:
                if _overlap(net_a, net_b):
                    yield error(
                        self.code, f"addressing.{name_a}",
                        f"{name_a} {net_a} overlaps {name_b} {net_b}",
                        "give every pool its own, non-overlapping prefix",
                    )


@register
class FrontendOverlap:
    code: ClassVar[str] = "NG203"
    title: ClassVar[str] = "Backend pools never overlap declared frontend prefixes"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for name, net in _pools(ctx):
            for fe in ctx.fabric.frontend_prefixes:
                if _overlap(net, fe):
                    yield error(
                        self.code, f"addressing.{name}",
                        f"backend {name} {net} overlaps frontend prefix {fe}",
                        "move the backend pool out of the frontend's address space",
                    )


@register
class HostSubnetSize:
    code: ClassVar[str] = "NG204"
    title: ClassVar[str] = "Rack NIC subnets hold every NIC plus gateway"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for zone in ctx.fabric.zones:
            nics = zone.hosts_per_rack * zone.nics_per_host
            if zone.host_prefix_length is not None and zone.host_prefix_length > host_prefix_length(nics):
                yield error(
                    self.code, f"zone {zone.id}",
                    f"/{zone.host_prefix_length} per rack cannot hold {nics} NICs + gateway",
                    f"set host_prefix_length to {host_prefix_length(nics)} or less, or omit it",
                )


def _asn_group(device: Device) -> str:
    """Devices that may share an ASN: the ATSW layer, and the CTSWs of one zone."""
    if device.role is Role.ATSW:
        return "atsw layer"
    if device.role is Role.CTSW:
        return f"zone {device.zone} CTSW layer"
    return device.name


@register
class AsnCollision:
    code: ClassVar[str] = "NG210"
    title: ClassVar[str] = "ASNs are unique per RTSW, per zone's CTSW layer and for the ATSW layer"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        groups: dict[int, dict[str, list[Device]]] = {}
        for device in ctx.topology.devices.values():
            groups.setdefault(device.asn, {}).setdefault(_asn_group(device), []).append(device)
        for asn, owners in groups.items():
            if len(owners) > 1:
                names = sorted(owners)
                yield error(
                    self.code, f"ASN {asn}",
                    f"ASN {asn} is used by {len(owners)} groups that must differ: {', '.join(names[:4])}"
                    + (" ..." if len(names) > 4 else ""),
                    "fix asn.overrides, or spread the bases (ctsw_base, rtsw_base, rtsw_zone_stride >"
                    " racks per zone)",
                )


@register
class AsnRange:
    code: ClassVar[str] = "NG211"
    title: ClassVar[str] = "ASNs are valid, and private (RFC 6996)"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        invalid: list[Device] = []
        public: list[Device] = []
        for device in ctx.topology.devices.values():
            asn = device.asn
            if asn < 1 or asn > MAX_ASN or asn in RESERVED_ASNS:
                invalid.append(device)
            elif not (PRIVATE_ASN_4BYTE[0] <= asn <= PRIVATE_ASN_4BYTE[1]
                      or PRIVATE_ASN_2BYTE[0] <= asn <= PRIVATE_ASN_2BYTE[1]):
                public.append(device)
        if invalid:
            yield error(
                self.code, devices_text(invalid),
                f"{len(invalid)} device(s) get an ASN outside 1..{MAX_ASN} or a reserved one (23456, 65535), e.g."
                f" {invalid[0].name} = {invalid[0].asn}",
                "lower asn.rtsw_base / rtsw_zone_stride or the override",
            )
        if public:
            yield warning(
                self.code, devices_text(public),
                f"{len(public)} device(s) use a public ASN, e.g. {public[0].name} = {public[0].asn}",
                f"use private ASNs {PRIVATE_ASN_4BYTE[0]}-{PRIVATE_ASN_4BYTE[1]} unless this is intended",
            )


@register
class AsnOverrideTarget:
    code: ClassVar[str] = "NG212"
    title: ClassVar[str] = "ASN overrides name existing devices"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for name in ctx.fabric.asn.overrides:
            if name not in ctx.topology.devices:
                yield error(
                    self.code, f"asn.overrides.{name}",
                    f"override for '{name}', which is not a device of this fabric",
                    "use a device name as `netgen show` lists it, or remove the override",
                )


@register
class ManagementAddresses:
    code: ClassVar[str] = "NG205"
    title: ClassVar[str] = "Every switch has its own usable management address"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        network = ctx.fabric.services.management
        if network is None:
            return
        prefix = network.prefix
        unknown = sorted(set(network.devices) - ctx.topology.devices.keys())
        if unknown:
            yield error(self.code, "services.management.devices",
                        f"{len(unknown)} name(s) are not switches of this fabric: {', '.join(unknown[:5])}",
                        "use the names `netgen show` lists, or remove the entries")
        owners: dict[int, list[Device]] = {}
        for device in ctx.topology.devices.values():
            if device.mgmt_ipv4 is not None:
                owners.setdefault(int(device.mgmt_ipv4.ip), []).append(device)
        reserved = {int(prefix.network_address): "the network address", int(prefix.broadcast_address):
                    "the broadcast address", int(network.gateway): "the gateway"}
        for address, devices in sorted(owners.items()):
            where = "services.management.devices" if any(d.name in network.devices for d in devices) else (
                "services.management.prefix")
            ip = devices[0].mgmt_ipv4.ip if devices[0].mgmt_ipv4 else address
            if not int(prefix.network_address) <= address <= int(prefix.broadcast_address):
                yield error(self.code, where, f"{devices_text(devices)} would get {ip}, outside {prefix}",
                            "pin it to an address inside the prefix, or use a larger prefix")
            elif address in reserved:
                yield error(self.code, where, f"{devices_text(devices)} would get {ip}, {reserved[address]} of"
                            f" {prefix}", "pin it elsewhere (services.management.devices), or move the gateway")
            if len(devices) > 1:
                yield error(self.code, where, f"{devices_text(devices)} would all get {ip}: a management prefix"
                            f" {prefix} cut into {slot_count(ctx.fabric.addressing.max_zones)} slots is too small"
                            " for the zone, or two pins collide",
                            "use a larger services.management.prefix, lower addressing.max_zones, or fix the pins")
