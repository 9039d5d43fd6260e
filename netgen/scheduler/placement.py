"""Job placement with the fewest ATSW crossings (`netgen place`).

A ring all-reduce over R ranks sends 2(R-1)/R * S bytes over every edge of the ring, and each of
NCCL's channels crosses every host boundary once, so a host boundary carries 2(R-1)/R * S in all
(the busbw factor of NVIDIA/nccl-tests doc/PERFORMANCE.md). The ring crosses the ATSW layer at X
boundaries: X = the number of consecutive host pairs (the wrap-around pair included) in different
zones. Ranks laid out zone by zone give X = z for z >= 2 zones (0 for one), the least any order
can give, since a cycle through z zones must enter each one; so placement minimises the zones used,
then keeps the ranks zone by zone, rack by rack. A topology-blind scheduler (hosts in name order,
ranks in arbitrary order) is the baseline: for a random rank order over n hosts with n_i in zone i,
E[X] = (n^2 - sum n_i^2) / (n - 1) exactly (each of the n ring edges crosses with probability
1 - sum n_i (n_i - 1) / (n (n - 1))).

Load: a boundary that crosses the ATSW layer keeps all the host's rails busy in one direction
(nics_per_host x nic_speed); a zone's ATSW capacity per direction is its CTSW uplinks. The ratio of
a zone's crossing demand to that capacity above 1 means the job is ATSW-bound there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from netgen.intent.fabric import Fabric
from netgen.scheduler.model import SchedulerTopology
from netgen.topology.model import Role, Topology

GIB = 1 << 30


@dataclass(frozen=True)
class Traffic:
    """ATSW figures of one placement and rank order."""

    crossings: float  # X (expected, for a random order)
    bytes_per_allreduce: float  # X * 2(R-1)/R * S
    demand_tbps: dict[int, float]  # per zone: ATSW demand per direction (Tb/s)
    load: dict[int, float]  # per zone: demand / that zone's ATSW capacity

    def as_dict(self) -> dict[str, Any]:
        return {"crossings": round(self.crossings, 3), "bytes_per_allreduce": round(self.bytes_per_allreduce),
                "gib_per_allreduce": round(self.bytes_per_allreduce / GIB, 3),
                "atsw_demand_tbps": {str(z): round(v, 3) for z, v in self.demand_tbps.items()},
                "atsw_load": {str(z): round(v, 4) for z, v in self.load.items()},
                "max_atsw_load": round(max(self.load.values(), default=0.0), 4)}


@dataclass(frozen=True)
class Placement:
    hosts: list[str]  # in rank order
    zones: dict[int, int]  # zone -> hosts
    whole_racks: int
    partial_racks: int
    traffic: Traffic
    naive_hosts: list[str] = field(default_factory=list)
    naive_zones: dict[int, int] = field(default_factory=dict)
    naive_traffic: Traffic | None = None


class PlacementError(Exception):
    """The job does not fit the free hosts."""


def _zone_of(topo: SchedulerTopology) -> dict[str, int]:
    return {h: z.id for z in topo.zones for r in z.racks for h in r.hosts}


@dataclass(frozen=True)
class OutOfService:
    """Spines drained now (`netgen drain`): per zone its drained CTSWs, and the drained ATSWs. A
    drained CTSW takes its uplinks out of its zone's ATSW capacity; a drained ATSW takes its share of
    every CTSW's uplinks (uplinks_per_ctsw spread over the ATSWs)."""

    ctsw: dict[int, int] = field(default_factory=dict)
    atsw: int = 0


def out_of_service(topology: Topology, drained: Iterable[str]) -> OutOfService:
    """The drained spines among `drained` (switch names; others are ignored), as OutOfService."""
    devices = topology.devices
    ctsw: Counter[int] = Counter()
    atsw = 0
    for name in drained:
        device = devices.get(name)
        if device is not None and device.role is Role.CTSW and device.zone is not None:
            ctsw[device.zone] += 1
        elif device is not None and device.role is Role.ATSW:
            atsw += 1
    return OutOfService(dict(ctsw), atsw)


def atsw_capacity_tbps(fabric: Fabric, out: OutOfService | None = None) -> dict[int, float]:
    """Per zone, the CTSW-to-ATSW bandwidth in one direction in service (0 without an ATSW layer)."""
    agg = fabric.aggregation
    if agg is None:
        return {z.id: 0.0 for z in fabric.zones}
    out = out or OutOfService()
    atsw_kept = max(agg.atsw_count - out.atsw, 0) / agg.atsw_count
    return {z.id: max(z.ctsw_count - out.ctsw.get(z.id, 0), 0) * agg.uplinks_per_ctsw * agg.link_speed / 1000
            * atsw_kept for z in fabric.zones}


def _rails_tbps(fabric: Fabric) -> dict[int, float]:
    return {z.id: z.nics_per_host * z.nic_speed / 1000 for z in fabric.zones}


def _gpus(fabric: Fabric, zones: Counter[int] | dict[int, int]) -> int:
    per_host = {z.id: z.gpus_per_host for z in fabric.zones}
    return sum(per_host[z] * n for z, n in zones.items())


def _traffic(fabric: Fabric, crossings: float, out_of: dict[int, float], gpus: int, message_bytes: int,
             drained: OutOfService | None = None) -> Traffic:
    factor = 2 * (gpus - 1) / gpus if gpus else 0.0
    capacity, rails = atsw_capacity_tbps(fabric, drained), _rails_tbps(fabric)
    demand = {z: n * rails[z] for z, n in out_of.items() if n}
    load = {z: (d / capacity[z] if capacity[z] else float("inf")) for z, d in demand.items()}
    return Traffic(crossings, crossings * factor * message_bytes, demand, load)


def ring_traffic(fabric: Fabric, zone_of: dict[str, int], order: list[str], message_bytes: int,
                 drained: OutOfService | None = None) -> Traffic:
    """The figures of one rank order: each ring edge between zones leaves its first host's zone."""
    out: dict[int, float] = {}
    crossings = 0
    for i, host in enumerate(order):
        nxt = order[(i + 1) % len(order)]
        if len(order) > 1 and zone_of[host] != zone_of[nxt]:
            crossings += 1
            out[zone_of[host]] = out.get(zone_of[host], 0) + 1
    return _traffic(fabric, crossings, out, _gpus(fabric, Counter(zone_of[h] for h in order)), message_bytes, drained)


def random_order_traffic(fabric: Fabric, zones: dict[int, int], message_bytes: int,
                         drained: OutOfService | None = None) -> Traffic:
    """Expected figures of a uniformly random rank order over hosts with `zones` (zone -> hosts):
    E[X] = (n^2 - sum n_i^2) / (n - 1); zone i's expected out-crossings n_i (n - n_i) / (n - 1)."""
    n = sum(zones.values())
    if n <= 1:
        return _traffic(fabric, 0.0, {}, _gpus(fabric, zones), message_bytes, drained)
    crossings = (n * n - sum(c * c for c in zones.values())) / (n - 1)
    out = {z: c * (n - c) / (n - 1) for z, c in zones.items()}
    return _traffic(fabric, crossings, out, _gpus(fabric, zones), message_bytes, drained)


def _take(topo: SchedulerTopology, zone_ids: list[int], free: set[str], count: int) -> tuple[list[str], int, int]:
    """`count` free hosts from these zones in order: whole free racks first (rack order), then the
    partly free racks with the most free hosts; ranks zone by zone, rack by rack."""
    chosen: list[str] = []
    whole = partial = 0
    for zone in (z for z in topo.zones if z.id in zone_ids):
        want = count - len(chosen)
        if want <= 0:
            break
        racks = [(r, [h for h in r.hosts if h in free]) for r in zone.racks]
        full = [(r, hs) for r, hs in racks if hs and len(hs) == len(r.hosts)]
        part = sorted(((r, hs) for r, hs in racks if hs and len(hs) < len(r.hosts)), key=lambda x: -len(x[1]))
        picked: list[tuple[int, list[str]]] = []
        for r, hs in [*full, *part]:
            if want <= 0:
                break
            take = hs[:want]
            picked.append((zone.racks.index(r), take))
            want -= len(take)
            if len(take) == len(r.hosts):
                whole += 1
            else:
                partial += 1
        for _, hs in sorted(picked):
            chosen += hs
    return chosen, whole, partial


def place(fabric: Fabric, topo: SchedulerTopology, count: int, free: set[str] | None = None,
          message_bytes: int = GIB, drained: OutOfService | None = None) -> Placement:
    """The fewest zones that hold `count` free hosts (one zone: the fullest one that fits, keeping
    emptier zones for bigger jobs; else the zones with the most free hosts first). `drained`: the
    spines out of service now, which lower the ATSW capacity the load figures divide by."""
    free = set(topo.hosts()) if free is None else free
    available = {z.id: sum(1 for r in z.racks for h in r.hosts if h in free) for z in topo.zones}
    total = sum(available.values())
    if count < 1:
        raise PlacementError("a job needs at least one host")
    if count > total:
        raise PlacementError(f"{count} hosts asked for, {total} free")
    fitting = [z for z, n in available.items() if n >= count]
    if fitting:
        zone_ids = [min(fitting, key=lambda z: (available[z], z))]
    else:
        zone_ids, held = [], 0
        for z in sorted(available, key=lambda z: (-available[z], z)):
            zone_ids.append(z)
            held += available[z]
            if held >= count:
                break
    hosts, whole, partial = _take(topo, zone_ids, free, count)
    zone_of = _zone_of(topo)
    naive = sorted(free)[:count]  # a topology-blind scheduler: the first free hosts by name
    naive_zones = dict(sorted(Counter(zone_of[h] for h in naive).items()))
    return Placement(hosts, dict(sorted(Counter(zone_of[h] for h in hosts).items())), whole, partial,
                     ring_traffic(fabric, zone_of, hosts, message_bytes, drained), naive, naive_zones,
                     random_order_traffic(fabric, naive_zones, message_bytes, drained))


def min_zones(topo: SchedulerTopology, count: int, free: set[str] | None = None) -> int:
    """The fewest zones any placement of `count` hosts can use (zones by free hosts, largest first)."""
    free = set(topo.hosts()) if free is None else free
    sizes = sorted((sum(1 for r in z.racks for h in r.hosts if h in free) for z in topo.zones), reverse=True)
    held = 0
    for used, size in enumerate(sizes, 1):
        held += size
        if held >= count:
            return used
    return len(sizes)
