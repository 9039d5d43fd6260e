"""The report's device table: one row per switch, in the topology's order (ATSW, then per zone CTSW
and RTSW), every cell already the text the page shows. A column no switch has a value for (IPv6
loopbacks, management addresses on a fabric without services.management) is left out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from netgen.topology.model import Device, Port, PortKind, Topology

NONE = "-"


@dataclass(frozen=True, slots=True)
class Column:
    heading: str
    numeric: bool = False  # right-aligned


@dataclass(frozen=True, slots=True)
class DeviceTable:
    columns: list[Column]
    rows: list[list[str]]

    @property
    def numeric_columns(self) -> list[int]:
        """1-based positions of the right-aligned columns (CSS nth-child)."""
        return [index for index, column in enumerate(self.columns, 1) if column.numeric]


def _ports(ports: list[Port], kind: PortKind) -> str:
    """'16 x 400G', '8 x 400G + 8 x 800G', or '-'."""
    speeds = Counter(p.speed_gbps for p in ports if p.kind is kind)
    return " + ".join(f"{count} x {speed}G" for speed, count in sorted(speeds.items())) or NONE


def device_table(topology: Topology) -> DeviceTable:
    devices = list(topology.devices.values())
    ipv6 = any(d.loopback_ipv6 is not None for d in devices)
    management = any(d.mgmt_ipv4 is not None for d in devices)
    columns = [Column("name"), Column("tier"), Column("zone", numeric=True), Column("model"), Column("NOS"),
               Column("ASN", numeric=True), Column("loopback IPv4")]
    columns += [Column("loopback IPv6")] if ipv6 else []
    columns += [Column("management")] if management else []
    columns += [Column("host ports", numeric=True), Column("downlinks", numeric=True),
                Column("uplinks", numeric=True)]

    def row(device: Device) -> list[str]:
        ports = topology.ports.get(device.name, [])
        cells = [device.name, device.role.value, NONE if device.zone is None else str(device.zone), device.model,
                 device.nos, str(device.asn), str(device.loopback_ipv4)]
        cells += [str(device.loopback_ipv6 or NONE)] if ipv6 else []
        cells += [str(device.mgmt_ipv4 or NONE)] if management else []
        return [*cells, _ports(ports, PortKind.HOST), _ports(ports, PortKind.DOWNLINK), _ports(ports, PortKind.UPLINK)]

    return DeviceTable(columns, [row(d) for d in devices])
