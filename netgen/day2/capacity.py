"""The capacity guard of `netgen drain`: what is left of each zone when a set of switches and links
is out of service, before anything moves. Per RTSW its uplinks in service (its ECMP width towards
the CTSWs), their bandwidth and the oversubscription against its hosts' NICs; per zone the RTSW-CTSW
and CTSW-ATSW bandwidth left; per CTSW its ECMP width towards the ATSWs. Each is judged against the
fabric file's `maintenance` bounds, and a bound broken by the change asked for is a Violation.

A bound is judged only where the change reaches: a zone already below a bound (a drain forced
earlier) does not refuse a drain in another zone, and a drain that makes a broken bound no worse
(e.g. undraining) is never refused."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from netgen.day2.targets import DrainSet
from netgen.intent.fabric import Maintenance
from netgen.topology.model import Link, LinkTier, Role, Topology


@dataclass(frozen=True, slots=True)
class Violation:
    """A maintenance bound the change would break: the fabric file's path of the bound and why."""

    rule: str  # e.g. "maintenance.max_drained_ctsw_per_zone"
    message: str
    zone: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "zone": self.zone, "message": self.message}


@dataclass(frozen=True, slots=True)
class Paths:
    """One switch's paths up a tier: links (its ECMP width) and their bandwidth, in service before
    the change and after it."""

    device: str
    zone: int | None
    before: int
    after: int
    gbps_before: int
    gbps_after: int
    host_gbps: int = 0  # RTSW: its hosts' NICs, the traffic its uplinks carry at full load
    drained: bool = False  # the switch itself is drained after the change

    @property
    def oversubscription(self) -> float | None:
        """Host bandwidth over uplink bandwidth after the change (None: no uplink, or no hosts)."""
        if not self.host_gbps or not self.gbps_after:
            return None
        return self.host_gbps / self.gbps_after

    def as_dict(self) -> dict[str, Any]:
        over = self.oversubscription
        return {"device": self.device, "zone": self.zone, "paths_before": self.before, "paths_after": self.after,
                "gbps_before": self.gbps_before, "gbps_after": self.gbps_after, "host_gbps": self.host_gbps,
                "oversubscription": None if over is None else round(over, 3), "drained": self.drained}


@dataclass(frozen=True, slots=True)
class ZoneCapacity:
    """One zone after the change: its drained CTSWs and the bandwidth left in each tier."""

    zone: int
    ctsw_drained: tuple[str, ...]
    spine_gbps: int  # RTSW-CTSW, every link of the racks (RTSWs) in service after the change
    spine_gbps_after: int  # of those, the links in service
    atsw_gbps: int  # CTSW-ATSW, every link (0: no ATSW layer)
    atsw_gbps_after: int

    @staticmethod
    def _pct(after: int, before: int) -> float:
        return 100.0 * after / before if before else 100.0

    @property
    def spine_pct(self) -> float:
        return self._pct(self.spine_gbps_after, self.spine_gbps)

    @property
    def atsw_pct(self) -> float:
        return self._pct(self.atsw_gbps_after, self.atsw_gbps)

    def as_dict(self) -> dict[str, Any]:
        return {"zone": self.zone, "ctsw_drained": list(self.ctsw_drained), "spine_gbps": self.spine_gbps,
                "spine_gbps_after": self.spine_gbps_after, "spine_pct": round(self.spine_pct, 2),
                "atsw_gbps": self.atsw_gbps, "atsw_gbps_after": self.atsw_gbps_after,
                "atsw_pct": round(self.atsw_pct, 2)}


@dataclass(frozen=True, slots=True)
class CapacityReport:
    """What the fabric keeps with `after` out of service (`before` was, `change` adds or removes)."""

    before: DrainSet
    after: DrainSet
    zones: list[ZoneCapacity]  # the zones the change reaches
    rtsw: list[Paths]  # every RTSW whose uplinks the change reaches
    ctsw: list[Paths]  # every CTSW whose ATSW uplinks the change reaches
    atsw_drained: tuple[str, ...]
    violations: list[Violation] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict[str, Any]:
        return {"allowed": self.allowed, "before": self.before.as_dict(), "after": self.after.as_dict(),
                "violations": [v.as_dict() for v in self.violations],
                "zones": [z.as_dict() for z in self.zones], "rtsw": [p.as_dict() for p in self.rtsw],
                "ctsw": [p.as_dict() for p in self.ctsw], "atsw_drained": list(self.atsw_drained)}


def _paths(topology: Topology, tier: LinkTier, before: DrainSet, after: DrainSet) -> dict[str, Paths]:
    """Per lower-end switch of `tier`, its links up and their bandwidth in service before and after."""
    links: dict[str, list[Link]] = defaultdict(list)
    for link in topology.links:
        if link.tier is tier:
            links[link.lower.device].append(link)
    host_gbps: dict[str, int] = defaultdict(int)
    if tier is LinkTier.RTSW_CTSW:
        for nic in topology.host_nics:
            host_gbps[nic.rtsw] += nic.speed_gbps
    out = {}
    for name, ups in links.items():
        kept_before = [link for link in ups if before.carries(link)]
        kept_after = [link for link in ups if after.carries(link)]
        out[name] = Paths(name, topology.devices[name].zone, len(kept_before), len(kept_after),
                          sum(link.speed_gbps for link in kept_before), sum(link.speed_gbps for link in kept_after),
                          host_gbps[name], name in after.devices)
    return out


def _zone_gbps(topology: Topology, tier: LinkTier, drained: DrainSet | None) -> dict[int, int]:
    """Per zone, the bandwidth of `tier`'s links (in service with `drained` out; None: every link)."""
    total: dict[int, int] = defaultdict(int)
    for link in topology.links:
        if link.tier is tier and (drained is None or drained.carries(link)):
            zone = topology.devices[link.lower.device].zone
            if zone is not None:
                total[zone] += link.speed_gbps
    return total


def _zone_spine(topology: Topology, drained: DrainSet) -> tuple[dict[int, int], dict[int, int]]:
    """Per zone, the RTSW-CTSW bandwidth of the racks whose RTSW is in service, and of that what is
    in service with `drained` out. A drained RTSW takes its rack's demand with its uplinks: it
    leaves the other racks' share of the spine as it was, so it counts on neither side."""
    racks: dict[int, int] = defaultdict(int)
    kept: dict[int, int] = defaultdict(int)
    for link in topology.links:
        zone = topology.devices[link.lower.device].zone
        if link.tier is not LinkTier.RTSW_CTSW or zone is None or link.lower.device in drained.devices:
            continue
        racks[zone] += link.speed_gbps
        if drained.carries(link):
            kept[zone] += link.speed_gbps
    return racks, kept


def _drained_ctsw(topology: Topology, drained: DrainSet) -> dict[int, list[str]]:
    per_zone: dict[int, list[str]] = defaultdict(list)
    for name in sorted(drained.devices):
        device = topology.devices[name]
        if device.role is Role.CTSW and device.zone is not None:
            per_zone[device.zone].append(name)
    return per_zone


def assess(topology: Topology, bounds: Maintenance, before: DrainSet, after: DrainSet) -> CapacityReport:
    """What the fabric keeps when `after` is out of service instead of `before`, and which of the
    fabric file's maintenance bounds the change breaks (where it reaches and makes a bound worse)."""
    rtsw = _paths(topology, LinkTier.RTSW_CTSW, before, after)
    ctsw = _paths(topology, LinkTier.CTSW_ATSW, before, after)
    changed_rtsw = [p for p in rtsw.values() if (p.before, p.drained) != (p.after, p.device in before.devices)]
    changed_ctsw = [p for p in ctsw.values() if (p.before, p.drained) != (p.after, p.device in before.devices)]
    reached = [p.zone for p in (*changed_rtsw, *changed_ctsw)]
    reached += [topology.devices[d].zone for d in after.devices ^ before.devices]
    zones_reached = sorted({z for z in reached if z is not None})
    racks_before, spine_before = _zone_spine(topology, before)
    spine, spine_after = _zone_spine(topology, after)
    atsw, atsw_before, atsw_after = (_zone_gbps(topology, LinkTier.CTSW_ATSW, d) for d in (None, before, after))
    ctsw_before, ctsw_after = _drained_ctsw(topology, before), _drained_ctsw(topology, after)
    zones = [ZoneCapacity(z, tuple(ctsw_after[z]), spine[z], spine_after[z], atsw[z], atsw_after[z])
             for z in zones_reached]
    atsw_drained = tuple(sorted(d for d in after.devices if topology.devices[d].role is Role.ATSW))
    violations: list[Violation] = []
    for zone in zones:
        z = zone.zone
        if len(ctsw_after[z]) > bounds.max_drained_ctsw_per_zone and len(ctsw_after[z]) > len(ctsw_before[z]):
            violations.append(Violation(
                "maintenance.max_drained_ctsw_per_zone",
                f"zone {z}: {len(ctsw_after[z])} CTSW(s) would be drained ({', '.join(ctsw_after[z])}); the fabric"
                f" allows {bounds.max_drained_ctsw_per_zone} at once", z))
        pct_before = ZoneCapacity._pct(spine_before[z], racks_before[z])
        if zone.spine_pct < bounds.min_zone_spine_bandwidth_pct and zone.spine_pct < pct_before:
            violations.append(Violation(
                "maintenance.min_zone_spine_bandwidth_pct",
                f"zone {z}: {zone.spine_pct:.1f}% of its RTSW-CTSW bandwidth would stay in service"
                f" ({zone.spine_gbps_after:,} of {zone.spine_gbps:,} Gb/s); the fabric needs at least"
                f" {bounds.min_zone_spine_bandwidth_pct}%", z))
        if zone.atsw_gbps and zone.atsw_pct < bounds.min_atsw_bandwidth_pct and atsw_after[z] < atsw_before[z]:
            violations.append(Violation(
                "maintenance.min_atsw_bandwidth_pct",
                f"zone {z}: {zone.atsw_pct:.1f}% of its CTSW-ATSW bandwidth would stay in service"
                f" ({zone.atsw_gbps_after:,} of {zone.atsw_gbps:,} Gb/s); the fabric needs at least"
                f" {bounds.min_atsw_bandwidth_pct}%", z))
    for paths in changed_rtsw:
        if not paths.drained and paths.after < bounds.min_rtsw_uplinks and paths.after < paths.before:
            violations.append(Violation(
                "maintenance.min_rtsw_uplinks",
                f"{paths.device}: {paths.after} uplink(s) would stay in service (of {paths.before}) while its hosts"
                f" are not drained; the fabric needs at least {bounds.min_rtsw_uplinks}", paths.zone))
    atsw_before_count = sum(1 for d in before.devices if topology.devices[d].role is Role.ATSW)
    if len(atsw_drained) > bounds.max_drained_atsw and len(atsw_drained) > atsw_before_count:
        violations.append(Violation(
            "maintenance.max_drained_atsw",
            f"{len(atsw_drained)} ATSW(s) would be drained ({', '.join(atsw_drained)}); the fabric allows"
            f" {bounds.max_drained_atsw} at once"))
    return CapacityReport(before, after, zones, changed_rtsw, changed_ctsw, atsw_drained, violations)


__all__ = ["CapacityReport", "Paths", "Violation", "ZoneCapacity", "assess"]
