"""BGP route policy of one device, shared by every NOS: what each tier accepts and announces.

The fabric's address plan makes this exact and small. Every loopback sits in the loopback pool
and every rack subnet in the host pool, and each pool is cut into fixed slots: slot 0 for the ATSW
layer, slot N for zone N (topology/addressing.py). So a handful of prefix-list lines say it all:

* RTSW: accepts from its CTSWs the fabric's loopbacks and rack subnets; announces only its own
  loopback and rack subnet.
* CTSW of zone N: accepts from its RTSWs only zone N's loopbacks and rack subnets, and from the
  ATSWs the fabric's; announces the fabric's to its RTSWs and only zone N's to the ATSWs.
* ATSW: accepts from each CTSW only that CTSW's zone; announces the fabric's to every CTSW.

Everything else is denied (the route-maps' implicit deny). A misconfigured host or leaf cannot
inject a default route, a frontend prefix or another rack's subnet into the training fabric.
Each session also gets a maximum-prefix limit sized from the design's capacity, not from today's
count: what the neighbour could legitimately send once the fabric is built out to
`addressing.max_zones` zones, each with as many racks as its CTSWs have ports for. So adding a rack
or a zone changes no switch outside the zone (the property `netgen diff` relies on), and a flood
(a leaf or a stand-in announcing thousands of host routes inside the fabric's ranges) still tears
the session down. A CTSW takes from a rack exactly that rack's own prefixes: a rack announcing a
neighbour's subnet too trips the limit.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network

from netgen.context import DesignContext
from netgen.intent.fabric import Zone
from netgen.topology.addressing import pool_slot, slot_count
from netgen.topology.model import Device, Role
from netgen.topology.ports import cages_needed

V4, V6 = "ipv4", "ipv6"


@dataclass(frozen=True, slots=True)
class PrefixRule:
    seq: int
    prefix: str
    ge: int | None = None
    le: int | None = None

    @property
    def exact(self) -> int | None:
        """The one prefix length the rule allows, when ge == le (EOS writes it `eq N`)."""
        return self.ge if self.ge is not None and self.ge == self.le else None


@dataclass(frozen=True, slots=True)
class PrefixList:
    name: str
    afi: str
    rules: tuple[PrefixRule, ...]


@dataclass(frozen=True, slots=True)
class RouteMapClause:
    seq: int
    afi: str
    prefix_list: str  # permit what this prefix-list matches


@dataclass(frozen=True, slots=True)
class RouteMap:
    name: str
    clauses: tuple[RouteMapClause, ...]  # permits, in order; then the NOS's implicit deny


@dataclass(frozen=True, slots=True)
class SessionPolicy:
    """A peer group's policy in one address family."""

    group: str
    afi: str
    route_map_in: str | None  # None: set per neighbour instead (ATSW downlinks: per zone)
    route_map_out: str
    maximum_prefix: int


@dataclass(frozen=True, slots=True)
class RoutePolicy:
    prefix_lists: tuple[PrefixList, ...]
    route_maps: tuple[RouteMap, ...]
    sessions: tuple[SessionPolicy, ...]
    neighbor_in: dict[str, str]  # neighbour address -> its own inbound route-map

    def session(self, group: str) -> SessionPolicy | None:
        return next((s for s in self.sessions if s.group == group), None)


@dataclass(frozen=True)
class FabricSets:
    """Prefix ranges and route capacities of the whole fabric, computed once per design context."""

    ranges: dict[str, list[tuple[str, int, int]]]  # set name -> (prefix, ge, le), per AFI suffix
    capacity: dict[tuple[str, int | None], int]  # (afi, zone or None = fabric) -> most prefixes it can hold
    per_rack: dict[str, int]  # afi -> prefixes one RTSW originates


def rack_capacity(ctx: DesignContext, zone: Zone) -> int:
    """The most racks the zone's CTSWs have ports for, after their ATSW uplinks."""
    model = ctx.catalog.get(zone.ctsw_model)
    aggregation = ctx.fabric.aggregation
    cages = model.port_count
    if aggregation is not None:
        cages -= cages_needed(model, aggregation.uplinks_per_ctsw, aggregation.link_speed)
    ports = max(0, cages) * model.ports_per_cage(zone.fabric_link_speed)
    return max(zone.racks, ports // zone.links_per_rtsw_ctsw)


# id(context) -> (a weak reference to it, its sets): a design context is not hashable (a dataclass).
_CACHE: dict[int, tuple[weakref.ref[DesignContext], FabricSets]] = {}


def _slot_prefix(pool: IPv4Network | IPv6Network, slot: int, slots: int) -> str:
    bits = slots.bit_length() - 1
    length = min(pool.max_prefixlen, pool.prefixlen + bits)
    region = pool_slot(pool, slot, slots)
    return str(type(pool)((region.base, length), strict=False))


def fabric_sets(ctx: DesignContext) -> FabricSets:
    hit = _CACHE.get(id(ctx))
    if hit is not None and hit[0]() is ctx:
        return hit[1]
    fabric = ctx.fabric
    addressing = fabric.addressing
    slots = slot_count(addressing.max_zones)
    devices = list(ctx.topology.devices.values())
    host_lengths: dict[tuple[str, int | None], set[int]] = {}
    for device in devices:
        for afi, subnet in ((V4, device.host_subnet_ipv4), (V6, device.host_subnet_ipv6)):
            if subnet is not None:
                for scope in (None, device.zone):
                    host_lengths.setdefault((afi, scope), set()).add(subnet.prefixlen)
    pools = {V4: (addressing.loopback_ipv4, addressing.host_ipv4, 32),
             V6: (addressing.loopback_ipv6, addressing.host_ipv6, 128)}
    ranges: dict[str, list[tuple[str, int, int]]] = {}
    capacity: dict[tuple[str, int | None], int] = {}
    per_rack: dict[str, int] = {}
    atsws = fabric.aggregation.atsw_count if fabric.aggregation is not None else 0
    for afi, (loopbacks, hosts, host_bits) in pools.items():
        has_subnets = hosts is not None and (afi, None) in host_lengths
        per_rack[afi] = (loopbacks is not None) + has_subnets
        zone_capacity = {z.id: rack_capacity(ctx, z) * per_rack[afi] + (loopbacks is not None) * z.ctsw_count
                         for z in fabric.zones}
        capacity.update({(afi, zone): n for zone, n in zone_capacity.items()})
        # zones not declared yet are taken to be as large as the largest declared one
        capacity[(afi, None)] = addressing.max_zones * max(zone_capacity.values()) + (loopbacks is not None) * atsws
        for zone in [None, *sorted(zone_capacity)]:
            entries: list[tuple[str, int, int]] = []
            if loopbacks is not None:
                where = str(loopbacks) if zone is None else _slot_prefix(loopbacks, zone, slots)
                entries.append((where, host_bits, host_bits))
            lengths = host_lengths.get((afi, zone))
            if hosts is not None and lengths:
                where = str(hosts) if zone is None else _slot_prefix(hosts, zone, slots)
                entries.append((where, min(lengths), max(lengths)))
            if entries:
                ranges[_set_name(afi, zone)] = entries
    sets = FabricSets(ranges, capacity, per_rack)
    for key in [k for k, (ref, _) in _CACHE.items() if ref() is None]:
        del _CACHE[key]  # contexts gone: their ids may be reused
    _CACHE[id(ctx)] = (weakref.ref(ctx), sets)
    return sets


def _set_name(afi: str, zone: int | None) -> str:
    return f"PL-{'FABRIC' if zone is None else f'ZONE-{zone:02d}'}-{'V4' if afi == V4 else 'V6'}"


def _own(device: Device, afi: str) -> list[str]:
    if afi == V4:
        return [str(device.loopback_ipv4.network)] + ([str(device.host_subnet_ipv4)] if device.host_subnet_ipv4 else [])
    own = [str(device.loopback_ipv6.network)] if device.loopback_ipv6 else []
    return own + ([str(device.host_subnet_ipv6)] if device.host_subnet_ipv6 else [])


def route_policy(ctx: DesignContext, device: Device, neighbors: list[tuple[str, str, str]]) -> RoutePolicy:
    """The policy of `device`, whose sessions are `neighbors`: (address, peer group, peer device)."""
    sets = fabric_sets(ctx)
    topo = ctx.topology
    afis = sorted({V6 if group.endswith("_V6") else V4 for _, group, _ in neighbors})
    lists: dict[str, PrefixList] = {}

    def need(afi: str, zone: int | None) -> str | None:
        name = _set_name(afi, zone)
        ranges = sets.ranges.get(name)
        if ranges is None:
            return None
        lists.setdefault(name, PrefixList(name, afi, tuple(
            PrefixRule(10 * (i + 1), prefix, ge, le) for i, (prefix, ge, le) in enumerate(ranges))))
        return name

    def own(afi: str) -> str | None:
        prefixes = _own(device, afi)
        if not prefixes:
            return None
        name = f"PL-OWN-{'V4' if afi == V4 else 'V6'}"
        lists[name] = PrefixList(name, afi, tuple(PrefixRule(10 * (i + 1), p) for i, p in enumerate(prefixes)))
        return name

    maps: dict[str, RouteMap] = {}

    def route_map(name: str, picks: list[tuple[str, str | None]]) -> str:
        clauses = tuple(RouteMapClause(10 * (i + 1), afi, pl) for i, (afi, pl) in enumerate(
            (afi, pl) for afi, pl in picks if pl is not None))
        maps[name] = RouteMap(name, clauses)
        return name

    fabric_map = [(afi, need(afi, None)) for afi in afis]
    zone = device.zone
    sessions: list[SessionPolicy] = []
    neighbor_in: dict[str, str] = {}
    groups = sorted({group for _, group, _ in neighbors})
    for group in groups:
        afi = V6 if group.endswith("_V6") else V4
        uplink = group.startswith("UPLINK")
        peers = [(address, topo.devices[peer]) for address, g, peer in neighbors if g == group]
        role = device.role
        if role is Role.RTSW:  # uplinks to the zone's CTSWs
            rm_in = route_map("RM-FABRIC-IN", fabric_map)
            rm_out = route_map("RM-OWN-OUT", [(a, own(a)) for a in afis])
            limit = sets.capacity[(afi, None)]
        elif role is Role.CTSW and not uplink:  # downlinks to the zone's RTSWs
            rm_in = route_map(f"RM-ZONE-{zone:02d}-IN", [(a, need(a, zone)) for a in afis])
            rm_out = route_map("RM-FABRIC-OUT", fabric_map)
            limit = sets.per_rack[afi]  # a rack's loopback and subnet, nothing more
        elif role is Role.CTSW:  # uplinks to the ATSW layer
            rm_in = route_map("RM-FABRIC-IN", fabric_map)
            rm_out = route_map(f"RM-ZONE-{zone:02d}-OUT", [(a, need(a, zone)) for a in afis])
            limit = sets.capacity[(afi, None)]
        else:  # ATSW downlinks: each CTSW only for its own zone
            for address, peer in peers:
                neighbor_in[address] = route_map(f"RM-ZONE-{peer.zone:02d}-IN",
                                                 [(a, need(a, peer.zone)) for a in afis])
            limit = max(sets.capacity[(afi, peer.zone)] for _, peer in peers if peer.zone is not None)
            sessions.append(SessionPolicy(group, afi, None, route_map("RM-FABRIC-OUT", fabric_map), max(1, limit)))
            continue
        sessions.append(SessionPolicy(group, afi, rm_in, rm_out, max(1, limit)))
    return RoutePolicy(tuple(sorted(lists.values(), key=lambda p: (p.afi, p.name))),
                       tuple(sorted(maps.values(), key=lambda m: m.name)), tuple(sessions), neighbor_in)


__all__ = ["FabricSets", "PrefixList", "PrefixRule", "RouteMap", "RouteMapClause", "RoutePolicy", "SessionPolicy",
           "rack_capacity", "route_policy"]
