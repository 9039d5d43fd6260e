"""The fabric as a scheduler sees it: hosts under their rack switch, racks under their zone, zones under
the ATSW layer. A zone's CTSW plane is non-blocking, so to a scheduler it is one (virtual) switch;
the ATSW layer is oversubscribed, so crossing it is what placement avoids."""

from __future__ import annotations

from dataclasses import dataclass

from netgen.intent.fabric import Fabric
from netgen.topology.infiniband import IbCableTier, IbFabric, IbTier
from netgen.topology.model import Role, Topology


@dataclass(frozen=True, slots=True)
class Rack:
    switch: str  # the RTSW
    hosts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ZoneView:
    id: int
    switch: str  # the zone's CTSW plane, one virtual switch
    racks: tuple[Rack, ...]

    @property
    def hosts(self) -> int:
        return sum(len(r.hosts) for r in self.racks)


@dataclass(frozen=True, slots=True)
class SchedulerTopology:
    fabric: str
    top: str | None  # the ATSW layer; None for a single zone without one
    zones: tuple[ZoneView, ...]
    levels: str = "a zone's CTSW plane is one switch (it is non-blocking)"  # what the virtual switches stand for

    def hosts(self) -> list[str]:
        return [h for z in self.zones for r in z.racks for h in r.hosts]


def zone_switch(fabric: Fabric, zone: int) -> str:
    """The virtual switch of a zone's CTSW plane, e.g. z01 (never a device name: those end in a role)."""
    return f"{fabric.hostname_prefix}z{zone:02d}"


def top_switch(fabric: Fabric) -> str:
    return f"{fabric.hostname_prefix}atsw"


def scheduler_topology(fabric: Fabric, topology: Topology) -> SchedulerTopology:
    hosts_of: dict[str, list[str]] = {}
    for nic in topology.host_nics:
        hosts = hosts_of.setdefault(nic.rtsw, [])
        if not hosts or hosts[-1] != nic.host:
            hosts.append(nic.host)
    zones = []
    for zone in fabric.zones:
        rtsws = sorted((d for d in topology.devices.values() if d.role is Role.RTSW and d.zone == zone.id),
                       key=lambda d: d.number)
        racks = tuple(Rack(d.name, tuple(hosts_of.get(d.name, ()))) for d in rtsws)
        zones.append(ZoneView(zone.id, zone_switch(fabric, zone.id), racks))
    zones.sort(key=lambda z: z.id)
    top = top_switch(fabric) if fabric.aggregation is not None or len(zones) > 1 else None
    return SchedulerTopology(fabric.name, top, tuple(zones))


def leaf_group_switch(fabric: Fabric, zone: int, number: int) -> str:
    """The virtual switch of an InfiniBand zone's leaves number N on every rail (their hosts share them)."""
    return f"{fabric.hostname_prefix}z{zone:02d}-leaves{number:02d}"


def ib_scheduler_topology(fabric: Fabric, ib: IbFabric) -> SchedulerTopology:
    """The InfiniBand alternative as a scheduler sees it. A host has a leaf on every rail, and the hosts
    of leaf N of one rail are those of leaf N of every rail (rail-optimised): those hosts are the
    'rack' (one hop apart on every rail), a zone's spine groups its virtual switch, the core the top."""
    leaf_number = {s.name: s.number for s in ib.switches.values() if s.tier is IbTier.LEAF}
    groups: dict[tuple[int, int], list[str]] = {}
    first_rail = {cable.lower: cable.upper for cable in ib.cables if cable.tier is IbCableTier.HOST_LEAF}
    for hca in ib.hcas:
        if hca.nic != 1:
            continue
        hosts = groups.setdefault((hca.zone, leaf_number[first_rail[hca.node]]), [])
        hosts.append(hca.host)
    zones = []
    for zone in sorted({z for z, _ in groups}):
        racks = tuple(Rack(leaf_group_switch(fabric, zone, n), tuple(groups[(z, n)]))
                      for z, n in sorted(groups) if z == zone)
        zones.append(ZoneView(zone, zone_switch(fabric, zone), racks))
    top = f"{fabric.hostname_prefix}ibcore" if ib.cores else None
    return SchedulerTopology(fabric.name, top, tuple(zones),
                             "InfiniBand: hosts sharing a leaf on every rail are one switch, a zone's spines one")
