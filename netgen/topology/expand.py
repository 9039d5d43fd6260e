"""Pure expansion: fabric intent + catalog -> Topology.

Deterministic and stable. Every name, port, address and ASN is a function of fixed positions
(zone id, rack number, spine number, link index) and of per-zone constants (counts per rack,
spines per zone, links per pair), never of how many racks or zones exist. So adding a rack or a
zone only adds objects; nothing existing moves.

Port layout per device (cages are 0-based front-panel positions):
  RTSW  host ports from cage 0 up (host h, NIC n); uplinks to CTSWs in the top cages.
  CTSW  downlinks from cage 0 up (rack r, link k); uplinks to ATSWs in the top cages.
  ATSW  zone N's downlinks start at logical port (N-1) x ports_per_zone.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import replace
from ipaddress import IPv4Interface, IPv4Network, IPv6Interface, IPv6Network
from typing import cast

from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Aggregation, Fabric, Zone
from netgen.intent.services import ManagementNetwork
from netgen.topology.addressing import Region, host_prefix_length, pool_slot, slot_count
from netgen.topology.model import (
    BgpSession,
    Device,
    HostNic,
    Link,
    LinkEnd,
    LinkTier,
    PoolUse,
    Port,
    PortKind,
    Role,
    Topology,
)
from netgen.topology.ports import PortAllocator, PortSlot, cages_needed, top_group_start

ATSW_SLOT = 0


def rtsw_name(fabric: Fabric, zone: int, rack: int) -> str:
    return f"{fabric.hostname_prefix}z{zone:02d}-rtsw{rack:03d}"


def ctsw_name(fabric: Fabric, zone: int, number: int) -> str:
    return f"{fabric.hostname_prefix}z{zone:02d}-ctsw{number:02d}"


def atsw_name(fabric: Fabric, number: int) -> str:
    return f"{fabric.hostname_prefix}atsw{number:02d}"


def host_name(fabric: Fabric, zone: int, rack: int, host: int) -> str:
    return f"{fabric.hostname_prefix}z{zone:02d}-r{rack:03d}-h{host:02d}"


def links_per_ctsw_atsw(aggregation: Aggregation) -> int:
    """Links between one CTSW and one ATSW (uplink k goes to ATSW k mod atsw_count)."""
    return -(-aggregation.uplinks_per_ctsw // aggregation.atsw_count)


def atsw_ports_per_zone(fabric: Fabric) -> int:
    aggregation = fabric.aggregation
    if aggregation is None:
        return 0
    if aggregation.ports_per_zone is not None:
        return aggregation.ports_per_zone
    per_pair = links_per_ctsw_atsw(aggregation)
    return max(zone.ctsw_count * per_pair for zone in fabric.zones)


def zone_host_prefix(zone: Zone) -> int:
    if zone.host_prefix_length is not None:
        return zone.host_prefix_length
    return host_prefix_length(zone.hosts_per_rack * zone.nics_per_host)


class _Pools:
    """Slot regions of every pool, computed once."""

    def __init__(self, fabric: Fabric) -> None:
        pools = fabric.addressing
        self.slots = slot_count(pools.max_zones)
        self.loopback4 = pools.loopback_ipv4
        self.p2p4 = pools.p2p_ipv4
        self.host4 = pools.host_ipv4
        self.loopback6 = pools.loopback_ipv6
        self.p2p6 = pools.p2p_ipv6
        self.host6 = pools.host_ipv6

    def region(self, pool: IPv4Network | IPv6Network, slot: int) -> Region:
        return pool_slot(pool, slot, self.slots)


# Address arithmetic wraps at the end of the address space instead of raising: an exhausted or
# too-small pool is reported by NG201 (a design error that blocks rendering), and expansion must
# stay total so that every other problem is reported in the same run.
_V4_SPACE, _V6_SPACE = 1 << 32, 1 << 128


def _v4(value: int, prefix: int) -> IPv4Interface:
    return IPv4Interface((value % _V4_SPACE, prefix))


def _v6(value: int, prefix: int) -> IPv6Interface:
    return IPv6Interface((value % _V6_SPACE, prefix))


class _Ipv4Interfaces:
    """IPv4 interfaces made from integers, sharing one network object per subnet: the two ends of a
    /31, a rack's NICs. IPv4Interface((int, prefix)) builds and checks a network for every address,
    half of the expansion of a large fabric (meta-24k: 84k interfaces). The fields are the ones
    ipaddress's own constructor sets; `reliable` checks at import that the result equals what the
    constructor gives in value, text, hash and fields, and the constructor is used if it ever does not.
    _Ipv6Interfaces does the same for IPv6 (meta-24k: 31k /127 ends and loopbacks)."""

    kind: type[IPv4Interface] | type[IPv6Interface] = IPv4Interface
    network_kind: type[IPv4Network] | type[IPv6Network] = IPv4Network
    scoped = False  # IPv6 addresses carry a scope id (None here, as the constructor sets it)
    space, bits = _V4_SPACE, 32
    samples: tuple[tuple[int, int], ...] = (
        (0x0A000001, 31), (0x0A000000, 31), (0xC0A80A05, 26), (0xFFFFFFFF, 32), (7, 0))

    def __init__(self) -> None:
        self.networks: dict[tuple[int, int], IPv4Network | IPv6Network] = {}
        self.fast = _FAST_INTERFACES.get(type(self), False)

    def real(self, value: int, prefix: int) -> IPv4Interface | IPv6Interface:
        return self.kind((value % self.space, prefix))

    def made(self, value: int, prefix: int) -> IPv4Interface | IPv6Interface:
        if not self.fast:
            return self.real(value, prefix)
        value %= self.space
        key = (value & (self.space - (1 << (self.bits - prefix))), prefix)
        network = self.networks.get(key)
        if network is None:
            # the network the interface's constructor builds (its address is already the network's)
            network = self.networks[key] = self.network_kind(key)
        interface = self.kind.__new__(self.kind)
        interface._ip = value  # type: ignore[union-attr]
        if self.scoped:
            interface._scope_id = None  # type: ignore[union-attr]
        interface.network = network
        interface.netmask = network.netmask
        interface._prefixlen = prefix  # type: ignore[union-attr]
        return interface

    def __call__(self, value: int, prefix: int) -> IPv4Interface:
        return cast(IPv4Interface, self.made(value, prefix))

    @classmethod
    def reliable(cls) -> bool:
        made = cls()
        made.fast = True
        for value, prefix in cls.samples:
            fast, real = made.made(value, prefix), made.real(value, prefix)
            if not (type(fast) is type(real) and fast == real and str(fast) == str(real) and hash(fast) == hash(real)
                    and vars(fast) == vars(real) and fast.network == real.network and fast.ip == real.ip
                    and getattr(fast, "_scope_id", None) == getattr(real, "_scope_id", None)):
                return False
        return True


class _Ipv6Interfaces(_Ipv4Interfaces):
    kind = IPv6Interface
    network_kind = IPv6Network
    scoped = True
    space, bits = _V6_SPACE, 128
    samples = ((0xFD000000000000010000000000000000, 127), (0xFD000000000000010000000000000001, 127),
               (0xFD0000000000000000FF000000000001, 128), (_V6_SPACE - 1, 64), (5, 0))

    def __call__(self, value: int, prefix: int) -> IPv6Interface:  # type: ignore[override]
        return cast(IPv6Interface, self.made(value, prefix))


_FAST_INTERFACES: dict[type[_Ipv4Interfaces], bool] = {}
_FAST_INTERFACES.update({kind: kind.reliable() for kind in (_Ipv4Interfaces, _Ipv6Interfaces)})


class _Builder:
    def __init__(self, fabric: Fabric, catalog: Catalog) -> None:
        self.fabric = fabric
        self.catalog = catalog
        self.pools = _Pools(fabric)
        self.topology = Topology(fabric=fabric.name)
        self.overrides = fabric.asn.overrides
        self._v4 = _Ipv4Interfaces()
        self._v6 = _Ipv6Interfaces()
        self._allocators: dict[tuple[str, int, int], PortAllocator] = {}

    def _allocator(self, model_name: str, start_cage: int, speed_gbps: int) -> PortAllocator:
        """One allocator per (model, first cage, speed), shared by every device that places ports
        that way (every RTSW of a zone): each slot is worked out once."""
        key = (model_name, start_cage, speed_gbps)
        if key not in self._allocators:
            self._allocators[key] = PortAllocator(self.catalog.get(model_name), start_cage, speed_gbps)
        return self._allocators[key]

    # -- helpers -----------------------------------------------------------------------------------
    def _asn(self, name: str, planned: int) -> int:
        return self.overrides.get(name, planned)

    def _add_device(self, device: Device) -> None:
        self.topology.devices[device.name] = device
        self.topology.ports[device.name] = []

    def _port(self, device: str, slot: PortSlot, speed: int, kind: PortKind,
              peer_device: str, peer_port: str, cable_m: int,
              ipv4: IPv4Interface | None = None, ipv6: IPv6Interface | None = None) -> Port:
        port = Port(device, slot.name, slot.cage, slot.lane_offset, slot.lanes, speed, kind,
                    peer_device, peer_port, cable_m, ipv4, ipv6)
        self.topology.ports[device].append(port)
        return port

    def _use(self, pool: str, slot: str, what: str, needed: int, capacity: int, share: int = 2) -> None:
        self.topology.pool_use.append(PoolUse(pool, slot, what, needed, capacity, share))

    # -- devices -----------------------------------------------------------------------------------
    def build(self) -> Topology:
        fabric = self.fabric
        zones = sorted(fabric.zones, key=lambda z: z.id)
        if fabric.aggregation is not None:
            self._atsw_devices(fabric.aggregation)
        for zone in zones:
            self._zone(zone)
        if fabric.aggregation is not None:
            for zone in zones:
                self._aggregation_links(zone, fabric.aggregation)
        for ports in self.topology.ports.values():
            ports.sort(key=lambda p: (p.cage, p.lane_offset))
        if fabric.services.management is not None:
            self._management(fabric.services.management)
        return self.topology

    def _management(self, network: ManagementNetwork) -> None:
        """One management address per switch, by position like the loopbacks: slot 0 for the ATSW
        layer, slot N for zone N; RTSWs by rack number in the lower half of their slot, CTSWs and
        ATSWs by number in the upper half (a slot's first address stays unused, so the usual .1
        gateway of slot 0 is free). `devices` pins a switch to an IPAM address instead. NG205
        reports overflows, collisions and addresses that are the gateway or outside the prefix."""
        prefix = network.prefix
        for name, device in list(self.topology.devices.items()):
            pinned = network.devices.get(name)
            if pinned is not None:
                address = int(pinned)
            else:
                region = self.pools.region(prefix, ATSW_SLOT if device.zone is None else device.zone)
                lower, upper = region.halves()
                address = (lower if device.role is Role.RTSW else upper).at(device.number)
            self.topology.devices[name] = replace(device, mgmt_ipv4=self._v4(address, prefix.prefixlen))

    def _atsw_devices(self, aggregation: Aggregation) -> None:
        fabric = self.fabric
        model = self.catalog.get(aggregation.atsw_model)
        loop4 = self.pools.region(self.pools.loopback4, ATSW_SLOT)
        loop6 = self.pools.region(self.pools.loopback6, ATSW_SLOT) if self.pools.loopback6 else None
        self._use("loopback_ipv4", "atsw layer", "ATSW loopbacks", aggregation.atsw_count + 1, loop4.size, 1)
        if loop6 is not None:
            self._use("loopback_ipv6", "atsw layer", "ATSW loopbacks", aggregation.atsw_count + 1, loop6.size, 1)
        per_pair = links_per_ctsw_atsw(aggregation)
        for number in range(1, aggregation.atsw_count + 1):
            name = atsw_name(fabric, number)
            self._add_device(Device(
                name=name, role=Role.ATSW, zone=None, number=number, model=aggregation.atsw_model,
                nos=model.nos, asn=self._asn(name, fabric.asn.atsw),
                loopback_ipv4=self._v4(loop4.at(number), 32),
                loopback_ipv6=self._v6(loop6.at(number), 128) if loop6 else None,
                # towards one zone: every link to that zone's CTSWs
                ecmp_width=max(zone.ctsw_count for zone in self.fabric.zones) * per_pair,
            ))

    def _zone(self, zone: Zone) -> None:
        fabric = self.fabric
        pools = self.pools
        rtsw_model = self.catalog.get(zone.rtsw_model)
        ctsw_model = self.catalog.get(zone.ctsw_model)
        z = zone.id
        loop_rtsw, loop_ctsw = pools.region(pools.loopback4, z).halves()
        loop6 = pools.region(pools.loopback6, z).halves() if pools.loopback6 else None
        rack_links4, _ = pools.region(pools.p2p4, z).halves()
        rack_links6 = pools.region(pools.p2p6, z).halves()[0] if pools.p2p6 else None
        host4 = pools.region(pools.host4, z)
        host6 = pools.region(pools.host6, z) if pools.host6 else None
        host_plen = zone_host_prefix(zone)
        host_block = 1 << (32 - host_plen)
        lpp = zone.links_per_rtsw_ctsw
        uplinks = zone.ctsw_count * lpp
        per_rack_links = uplinks
        nics = zone.hosts_per_rack * zone.nics_per_host
        slot = f"zone {z}"
        # Offset 0 of every loopback region stays unused so no loopback is the region's .0.
        self._use("loopback_ipv4", slot, "RTSW loopbacks", zone.racks + 1, loop_rtsw.size)
        self._use("loopback_ipv4", slot, "CTSW loopbacks", zone.ctsw_count + 1, loop_ctsw.size)
        self._use("p2p_ipv4", slot, "RTSW-CTSW /31s", 2 * zone.racks * per_rack_links, rack_links4.size)
        self._use("host_ipv4", slot, f"rack /{host_plen} NIC subnets", zone.racks * host_block, host4.size, 1)
        if loop6 is not None:
            self._use("loopback_ipv6", slot, "RTSW loopbacks", zone.racks + 1, loop6[0].size)
            self._use("loopback_ipv6", slot, "CTSW loopbacks", zone.ctsw_count + 1, loop6[1].size)
        if rack_links6 is not None:
            self._use("p2p_ipv6", slot, "RTSW-CTSW /127s", 2 * zone.racks * per_rack_links, rack_links6.size)
        if host6 is not None:
            self._use("host_ipv6", slot, "rack /64 NIC subnets", zone.racks << 64, host6.size, 1)

        ctsw_uplinks = fabric.aggregation.uplinks_per_ctsw if fabric.aggregation else 0
        ctsw_names = []
        for number in range(1, zone.ctsw_count + 1):
            name = ctsw_name(fabric, z, number)
            ctsw_names.append(name)
            self._add_device(Device(
                name=name, role=Role.CTSW, zone=z, number=number, model=zone.ctsw_model,
                nos=ctsw_model.nos, asn=self._asn(name, fabric.asn.ctsw_base + z),
                loopback_ipv4=self._v4(loop_ctsw.at(number), 32),
                loopback_ipv6=self._v6(loop6[1].at(number), 128) if loop6 else None,
                ecmp_width=ctsw_uplinks,
            ))
        ctsw_down = [self._allocator(zone.ctsw_model, 0, zone.fabric_link_speed) for _ in ctsw_names]

        host_alloc_start = 0
        host_cages = cages_needed(rtsw_model, nics, zone.nic_speed)
        up_start = top_group_start(rtsw_model, uplinks, zone.fabric_link_speed, host_cages)
        cable = zone.cable_length_m
        for rack in range(1, zone.racks + 1):
            name = rtsw_name(fabric, z, rack)
            subnet_base = host4.at((rack - 1) * host_block)
            gateway = self._v4(subnet_base + 1, host_plen)
            subnet6 = gateway6 = None
            if host6 is not None:
                base6 = host6.at((rack - 1) << 64)
                gateway6 = self._v6(base6 + 1, 64)
                subnet6 = gateway6.network
            device = Device(
                name=name, role=Role.RTSW, zone=z, number=rack, model=zone.rtsw_model,
                nos=rtsw_model.nos,
                asn=self._asn(name, fabric.asn.rtsw_base + z * fabric.asn.rtsw_zone_stride + rack),
                loopback_ipv4=self._v4(loop_rtsw.at(rack), 32),
                loopback_ipv6=self._v6(loop6[0].at(rack), 128) if loop6 else None,
                ecmp_width=uplinks,
                host_subnet_ipv4=gateway.network,
                host_gateway_ipv4=gateway,
                host_subnet_ipv6=subnet6,
                host_gateway_ipv6=gateway6,
            )
            self._add_device(device)
            host_alloc = self._allocator(zone.rtsw_model, host_alloc_start, zone.nic_speed)
            for host in range(1, zone.hosts_per_rack + 1):
                hname = host_name(fabric, z, rack, host)
                for nic in range(1, zone.nics_per_host + 1):
                    index = (host - 1) * zone.nics_per_host + nic - 1
                    port = self._port(name, host_alloc.slot(index), zone.nic_speed, PortKind.HOST,
                                      hname, f"nic{nic}", cable.host_m)
                    self.topology.host_nics.append(HostNic(
                        host=hname, nic=nic, rtsw=name, port=port.name, speed_gbps=zone.nic_speed,
                        ipv4=self._v4(subnet_base + 2 + index, host_plen),
                        gateway_ipv4=gateway.ip,
                    ))
            up_alloc = self._allocator(zone.rtsw_model, up_start, zone.fabric_link_speed)
            for c_index, cname in enumerate(ctsw_names):
                for k in range(lpp):
                    up_index = c_index * lpp + k
                    link_index = (rack - 1) * per_rack_links + up_index
                    upper4 = rack_links4.at(2 * link_index)
                    upper6 = rack_links6.at(2 * link_index) if rack_links6 else None
                    self._link(
                        LinkTier.RTSW_CTSW, zone.fabric_link_speed, cable.rtsw_ctsw_m,
                        lower=(name, up_alloc.slot(up_index)),
                        upper=(cname, ctsw_down[c_index].slot((rack - 1) * lpp + k)),
                        upper4=upper4, upper6=upper6,
                    )

    def _link(self, tier: LinkTier, speed: int, cable_m: int,
              lower: tuple[str, PortSlot], upper: tuple[str, PortSlot],
              upper4: int, upper6: int | None) -> None:
        # The upper-tier end takes the even address of the /31 (/127), the lower end the odd one.
        lo_dev, lo_slot = lower
        up_dev, up_slot = upper
        lo_port, up_port = lo_slot.name, up_slot.name
        up_ip4, lo_ip4 = self._v4(upper4, 31), self._v4(upper4 + 1, 31)
        up_ip6 = self._v6(upper6, 127) if upper6 is not None else None
        lo_ip6 = self._v6(upper6 + 1, 127) if upper6 is not None else None
        self._port(lo_dev, lo_slot, speed, PortKind.UPLINK, up_dev, up_port, cable_m, lo_ip4, lo_ip6)
        self._port(up_dev, up_slot, speed, PortKind.DOWNLINK, lo_dev, lo_port, cable_m, up_ip4, up_ip6)
        self.topology.links.append(Link(
            tier, LinkEnd(lo_dev, lo_port, lo_ip4, lo_ip6), LinkEnd(up_dev, up_port, up_ip4, up_ip6), speed, cable_m,
        ))
        devices = self.topology.devices
        lo_asn, up_asn = devices[lo_dev].asn, devices[up_dev].asn
        self.topology.sessions.append(BgpSession("ipv4", lo_dev, lo_ip4, lo_asn, up_dev, up_ip4, up_asn))
        if up_ip6 is not None and lo_ip6 is not None:
            self.topology.sessions.append(BgpSession("ipv6", lo_dev, lo_ip6, lo_asn, up_dev, up_ip6, up_asn))

    def _aggregation_links(self, zone: Zone, aggregation: Aggregation) -> None:
        fabric = self.fabric
        pools = self.pools
        ctsw_model = self.catalog.get(zone.ctsw_model)
        _, agg_links4 = pools.region(pools.p2p4, zone.id).halves()
        agg_links6 = pools.region(pools.p2p6, zone.id).halves()[1] if pools.p2p6 else None
        uplinks = aggregation.uplinks_per_ctsw
        speed = aggregation.link_speed
        per_pair = links_per_ctsw_atsw(aggregation)
        zone_base = (zone.id - 1) * atsw_ports_per_zone(fabric)
        self._use("p2p_ipv4", f"zone {zone.id}", "CTSW-ATSW /31s", 2 * zone.ctsw_count * uplinks, agg_links4.size)
        if agg_links6 is not None:
            self._use("p2p_ipv6", f"zone {zone.id}", "CTSW-ATSW /127s", 2 * zone.ctsw_count * uplinks,
                      agg_links6.size)
        down_floor = cages_needed(ctsw_model, zone.racks * zone.links_per_rtsw_ctsw, zone.fabric_link_speed)
        up_start = top_group_start(ctsw_model, uplinks, speed, down_floor)
        atsw_alloc = self._allocator(aggregation.atsw_model, 0, speed)  # every ATSW lays zones out alike
        for number in range(1, zone.ctsw_count + 1):
            cname = ctsw_name(fabric, zone.id, number)
            up_alloc = self._allocator(zone.ctsw_model, up_start, speed)
            for k in range(uplinks):
                atsw_number = k % aggregation.atsw_count + 1
                atsw_index = zone_base + (number - 1) * per_pair + k // aggregation.atsw_count
                aname = atsw_name(fabric, atsw_number)
                link_index = (number - 1) * uplinks + k
                self._link(
                    LinkTier.CTSW_ATSW, speed, aggregation.cable_length_m,
                    lower=(cname, up_alloc.slot(k)),
                    upper=(aname, atsw_alloc.slot(atsw_index)),
                    upper4=agg_links4.at(2 * link_index),
                    upper6=agg_links6.at(2 * link_index) if agg_links6 else None,
                )


def expand(fabric: Fabric, catalog: Catalog) -> Topology:
    """Expand a validated fabric into its topology. Pure: same input, same output."""
    # Expansion allocates hundreds of thousands of long-lived objects (ports, links, addresses)
    # and no garbage cycles; Python's cyclic collector would rescan the growing heap again and
    # again meanwhile (benchmarks/expand.py; docs/developer/benchmarks.md).
    with _collector_paused():
        return _Builder(fabric, catalog).build()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
