"""NG1xx: bandwidth, oversubscription and port budget."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext
from netgen.intent.types import Ratio
from netgen.topology.expand import atsw_ports_per_zone, links_per_ctsw_atsw
from netgen.topology.model import Device, PortKind

RATIO_TOLERANCE = 0.05  # for declared RTSW ratios, which carry no tolerance field


def _tbps(gbps: float) -> str:
    return f"{gbps / 1000:g}T"


@register
class ZoneNonBlocking:
    code: ClassVar[str] = "NG101"
    title: ClassVar[str] = "RTSW uplink bandwidth covers NIC bandwidth inside each zone"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for zone in ctx.fabric.zones:
            down, up = zone.rack_nic_gbps, zone.rtsw_uplink_gbps
            derived = Ratio.of(up, down)
            declared = zone.rtsw_oversubscription
            subject = f"zone {zone.id}"
            if declared is None:
                if up < down:
                    yield error(
                        self.code, subject,
                        f"RTSWs are blocking: uplinks {_tbps(up)} < NICs {_tbps(down)} (ratio {derived})",
                        "raise ctsw_count or links_per_rtsw_ctsw, or declare rtsw_oversubscription"
                        f" '{derived}' if the zone is meant to block",
                    )
            elif abs(derived.factor / declared.factor - 1) > RATIO_TOLERANCE:
                yield error(
                    self.code, subject,
                    f"RTSW ratio is {derived} (uplinks {_tbps(up)}, NICs {_tbps(down)}) but {declared} is declared",
                    f"change ctsw_count / links_per_rtsw_ctsw, or declare rtsw_oversubscription '{derived}'",
                )


@register
class AggregationOversubscription:
    code: ClassVar[str] = "NG102"
    title: ClassVar[str] = "CTSW-to-ATSW oversubscription matches the declared value"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        agg = ctx.fabric.aggregation
        if agg is None or agg.expected_oversubscription is None:
            return
        declared = agg.expected_oversubscription
        for zone in ctx.fabric.zones:
            down, up = zone.ctsw_downlink_gbps, agg.ctsw_uplink_gbps
            derived = Ratio.of(up, down)
            deviation = derived.factor / declared.factor - 1
            if abs(deviation) > agg.oversubscription_tolerance:
                needed = round(down / declared.factor / agg.link_speed)
                yield error(
                    self.code, f"zone {zone.id}",
                    f"CTSW oversubscription is {derived} ({_tbps(down)} down, {_tbps(up)} up per CTSW),"
                    f" declared {declared} (off by {deviation:+.0%}, tolerance"
                    f" {agg.oversubscription_tolerance:.0%})",
                    f"set aggregation.uplinks_per_ctsw to about {max(1, needed)}, or change"
                    " expected_oversubscription",
                )


@register
class ZonesConnected:
    code: ClassVar[str] = "NG103"
    title: ClassVar[str] = "Several zones need an aggregation layer to reach each other"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        if len(ctx.fabric.zones) > 1 and ctx.fabric.aggregation is None:
            yield error(
                self.code, "aggregation",
                f"{len(ctx.fabric.zones)} zones but no aggregation layer: zones cannot reach each other",
                "add an 'aggregation:' section (ATSW layer), or split the zones into separate fabrics",
            )


@register
class PortBudget:
    code: ClassVar[str] = "NG110"
    title: ClassVar[str] = "Every device's ports fit its model, and no port carries two links"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        failing: dict[tuple[str, str], list[Device]] = {}
        for name, device in ctx.topology.devices.items():
            model = ctx.model(device)
            kinds_by_cage: dict[int, set[PortKind]] = {}
            taken: set[tuple[int, int]] = set()
            problem = ""
            for port in ctx.topology.ports[name]:
                kinds_by_cage.setdefault(port.cage, set()).add(port.kind)
                slot = (port.cage, port.lane_offset)
                if slot in taken:
                    problem = f"two links on {port.name}"
                taken.add(slot)
            used = len(kinds_by_cage)
            if not problem and (used > model.port_count or max(kinds_by_cage, default=0) >= model.port_count):
                by_kind: dict[PortKind, int] = {}
                for kinds in kinds_by_cage.values():
                    for kind in kinds:
                        by_kind[kind] = by_kind.get(kind, 0) + 1
                detail = " + ".join(f"{count} {kind.value}" for kind, count in sorted(by_kind.items()))
                problem = f"needs {used} cages ({detail}) but {device.model} has {model.port_count}"
            if problem:
                failing.setdefault((device.role.value, problem), []).append(device)
        for (role, problem), devices in failing.items():
            yield error(
                self.code, devices_text(devices),
                f"{role.upper()} port budget: {problem}",
                "use a model with more ports, fewer links per device (links_per_rtsw_ctsw, uplinks_per_ctsw,"
                " hosts/NICs per rack), or breakout to a lower speed",
            )


@register
class PortSpeed:
    code: ClassVar[str] = "NG111"
    title: ClassVar[str] = "Every link speed is native or a breakout of the model's cages"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for role, name, model, devices in ctx.tier_models():
            speeds = {p.speed_gbps for d in devices for p in ctx.topology.ports[d.name]}
            for speed in sorted(speeds):
                if not model.supports_speed(speed):
                    allowed = ", ".join(f"{s}G" for s in [model.port_speed, *model.breakout_speeds])
                    yield error(
                        self.code, f"{role.value} model {name}",
                        f"{speed}G links on {devices_text(devices)}, but {name} cages run {allowed}",
                        f"use one of {allowed} for this tier, or another model",
                    )


@register
class UplinkDistribution:
    code: ClassVar[str] = "NG120"
    title: ClassVar[str] = "CTSW uplinks spread evenly over ATSWs"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        agg = ctx.fabric.aggregation
        if agg is not None and agg.uplinks_per_ctsw % agg.atsw_count:
            yield warning(
                self.code, "aggregation",
                f"{agg.uplinks_per_ctsw} uplinks per CTSW over {agg.atsw_count} ATSWs: some ATSWs get"
                f" {links_per_ctsw_atsw(agg)} links from each CTSW and others fewer, so ECMP is uneven",
                "make uplinks_per_ctsw a multiple of atsw_count",
            )


@register
class AtswZonePorts:
    code: ClassVar[str] = "NG121"
    title: ClassVar[str] = "ATSW ports reserved per zone hold every CTSW uplink of that zone"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        agg = ctx.fabric.aggregation
        if agg is None:
            return
        reserved = atsw_ports_per_zone(ctx.fabric)
        per_pair = links_per_ctsw_atsw(agg)
        for zone in ctx.fabric.zones:
            needed = zone.ctsw_count * per_pair
            if needed > reserved:
                yield error(
                    self.code, f"zone {zone.id}",
                    f"zone needs {needed} ports on every ATSW but aggregation.ports_per_zone is {reserved}:"
                    " its links would take the next zone's ports",
                    f"set aggregation.ports_per_zone to at least {needed}",
                )
