"""The cabling plan: one row per cable, in the order a technician walks the hall.

Per zone, rack by rack: the rack's NIC cables (host by host, NIC by NIC) and then its RTSW's uplinks
to the spine row (a cable is listed once, at its lower end); after the zone's racks, its CTSWs'
uplinks to the ATSW layer. Media and length come from the intent: NIC to RTSW is copper DAC
(`cable_length_m.host_m`), RTSW to CTSW single-mode fibre (`rtsw_ctsw_m`), CTSW to ATSW single-mode
fibre (`aggregation.cable_length_m`), as the fabric file documents them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from netgen.intent.fabric import Fabric
from netgen.topology.model import LinkTier, Topology

DAC = "copper DAC"
SMF = "single-mode fibre"
_NUMBER = re.compile(r"(\d+)")


def _natural(text: str) -> tuple[str | int, ...]:
    return tuple(int(part) if index % 2 else part for index, part in enumerate(_NUMBER.split(text)))


@dataclass(frozen=True, slots=True)
class Cable:
    zone: int | None  # None: the ATSW layer
    rack: int | None  # the rack the cable starts in (None for spine-row cables)
    tier: str  # "host", "rtsw-ctsw", "ctsw-atsw"
    a_device: str  # the lower end: a host, an RTSW or a CTSW
    a_port: str
    b_device: str
    b_port: str
    speed_gbps: int
    media: str
    length_m: int

    @property
    def label(self) -> str:
        """Printed on both ends: where each end goes."""
        return f"{self.a_device}:{self.a_port} <> {self.b_device}:{self.b_port}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}


COLUMNS = ("zone", "rack", "tier", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "media", "length_m",
           "label")


def cabling_plan(fabric: Fabric, topology: Topology) -> list[Cable]:
    zones = {z.id: z for z in fabric.zones}
    devices = topology.devices
    cables: list[tuple[tuple[Any, ...], Cable]] = []
    for nic in topology.host_nics:
        rtsw = devices[nic.rtsw]
        zone = zones[rtsw.zone or 0]
        cable = Cable(rtsw.zone, rtsw.number, "host", nic.host, f"nic{nic.nic}", nic.rtsw, nic.port, nic.speed_gbps,
                      DAC, zone.cable_length_m.host_m)
        cables.append(((rtsw.zone, 0, rtsw.number, 0, _natural(nic.host), nic.nic), cable))
    for link in topology.links:
        lower, upper = devices[link.lower.device], devices[link.upper.device]
        if link.tier is LinkTier.RTSW_CTSW:
            cable = Cable(lower.zone, lower.number, link.tier.value, lower.name, link.lower.port, upper.name,
                          link.upper.port, link.speed_gbps, SMF, link.cable_m)
            key: tuple[Any, ...] = (lower.zone, 0, lower.number, 1, _natural(link.lower.port), 0)
        else:
            cable = Cable(lower.zone, None, link.tier.value, lower.name, link.lower.port, upper.name, link.upper.port,
                          link.speed_gbps, SMF, link.cable_m)
            key = (lower.zone, 1, lower.number, 0, _natural(link.lower.port), 0)
        cables.append((key, cable))
    cables.sort(key=lambda item: item[0])
    return [cable for _, cable in cables]


def bill(cables: list[Cable]) -> list[dict[str, Any]]:
    """Cables per media, speed and length: what to order."""
    counts = Counter((c.media, c.speed_gbps, c.length_m) for c in cables)
    return [{"media": media, "speed_gbps": speed, "length_m": length, "count": count}
            for (media, speed, length), count in sorted(counts.items())]


def plan_text(fabric: Fabric, cables: list[Cable], fmt: str) -> str:
    """The plan as a file: `csv`, one row per cable under a header of COLUMNS; `json`, the cables and
    the bill of cables."""
    if fmt == "json":
        return json.dumps({"fabric": fabric.name, "cables": [c.as_dict() for c in cables], "bill": bill(cables)},
                          indent=1) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for cable in cables:
        row = cable.as_dict()
        writer.writerow(["" if row[c] is None else row[c] for c in COLUMNS])
    return buffer.getvalue()
