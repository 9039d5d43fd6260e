"""The expanded fabric: devices, ports, links, BGP sessions and host NIC attachments.

Plain frozen dataclasses with slots, built by trusted code (netgen.topology.expand) from an already
validated intent, so building 100k objects costs no validation (ANTA's lesson on pydantic in hot
loops). Everything later stages need is here; nothing here is re-derived from the intent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from ipaddress import IPv4Address, IPv4Interface, IPv4Network, IPv6Interface, IPv6Network


class Role(StrEnum):
    RTSW = "rtsw"  # rack switch (leaf), one per rack
    CTSW = "ctsw"  # cluster switch (spine) of one AI Zone
    ATSW = "atsw"  # aggregation switch stitching zones


class PortKind(StrEnum):
    HOST = "host"  # RTSW port to a GPU NIC
    UPLINK = "uplink"  # towards the next tier up
    DOWNLINK = "downlink"  # towards the next tier down


class LinkTier(StrEnum):
    RTSW_CTSW = "rtsw-ctsw"
    CTSW_ATSW = "ctsw-atsw"


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    role: Role
    zone: int | None  # None for the ATSW layer
    number: int  # rack number (RTSW), spine number (CTSW) or ATSW number; 1-based
    model: str  # catalog model name
    nos: str
    asn: int
    loopback_ipv4: IPv4Interface
    loopback_ipv6: IPv6Interface | None
    ecmp_width: int  # widest equal-cost group: RTSW/CTSW uplinks; ATSW links into one zone
    host_subnet_ipv4: IPv4Network | None = None  # RTSW only
    host_gateway_ipv4: IPv4Interface | None = None
    host_subnet_ipv6: IPv6Network | None = None
    host_gateway_ipv6: IPv6Interface | None = None
    mgmt_ipv4: IPv4Interface | None = None  # out-of-band management address (services.management)


@dataclass(frozen=True, slots=True)
class Port:
    device: str
    name: str
    cage: int  # 0-based front-panel cage
    lane_offset: int  # first lane inside the cage (non-zero for breakout sub-ports)
    lanes: int
    speed_gbps: int
    kind: PortKind
    peer_device: str  # device or host name on the other end
    peer_port: str  # port name, or "nicN" for a host
    cable_m: int
    ipv4: IPv4Interface | None = None  # None on host ports (they sit in the rack's host subnet)
    ipv6: IPv6Interface | None = None


@dataclass(frozen=True, slots=True)
class LinkEnd:
    device: str
    port: str
    ipv4: IPv4Interface
    ipv6: IPv6Interface | None


@dataclass(frozen=True, slots=True)
class Link:
    tier: LinkTier
    lower: LinkEnd  # the RTSW end (rtsw-ctsw) or the CTSW end (ctsw-atsw)
    upper: LinkEnd
    speed_gbps: int
    cable_m: int

    @property
    def key(self) -> str:
        return f"{self.lower.device}:{self.lower.port}--{self.upper.device}:{self.upper.port}"


@dataclass(frozen=True, slots=True)
class BgpSession:
    """One eBGP session over a fabric link (one per address family that the link carries)."""

    afi: str  # "ipv4" | "ipv6"
    lower_device: str
    lower_ip: IPv4Interface | IPv6Interface
    lower_asn: int
    upper_device: str
    upper_ip: IPv4Interface | IPv6Interface
    upper_asn: int


@dataclass(frozen=True, slots=True)
class HostNic:
    host: str
    nic: int  # 1-based
    rtsw: str
    port: str
    speed_gbps: int
    ipv4: IPv4Interface
    gateway_ipv4: IPv4Address


@dataclass(frozen=True, slots=True)
class PoolUse:
    """How full one slot of one address pool is (for the exhaustion check and `netgen show`)."""

    pool: str  # e.g. "p2p_ipv4"
    slot: str  # "zone 3" or "atsw layer"
    what: str  # what the addresses are for
    needed: int  # addresses needed
    capacity: int  # addresses available in that part of the slot
    share: int = 1  # the part is 1/share of the slot (loopbacks and /31s split slots in halves)


@dataclass
class Topology:
    fabric: str
    devices: dict[str, Device] = field(default_factory=dict)  # ordered: ATSW, then per zone CTSW, RTSW
    ports: dict[str, list[Port]] = field(default_factory=dict)  # device name -> ports in cage order
    links: list[Link] = field(default_factory=list)
    sessions: list[BgpSession] = field(default_factory=list)
    host_nics: list[HostNic] = field(default_factory=list)
    pool_use: list[PoolUse] = field(default_factory=list)

    def by_role(self, role: Role) -> list[Device]:
        return [d for d in self.devices.values() if d.role is role]

    def zone_devices(self, zone: int, role: Role) -> list[Device]:
        return [d for d in self.devices.values() if d.zone == zone and d.role is role]
