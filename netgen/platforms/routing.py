"""The eBGP plan of one device, shared by every NOS view: neighbours, peer groups, announced
networks, ECMP width, timers, BFD and route policy (policy.py). Each NOS only decides how to
spell it."""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Interface, IPv6Address, IPv6Interface

from netgen.context import DesignContext
from netgen.intent.secrets import placeholder
from netgen.platforms.policy import RoutePolicy, route_policy
from netgen.topology.model import Device, Port, PortKind


@dataclass(frozen=True, slots=True)
class BgpNeighbor:
    address: str
    remote_as: int
    peer_group: str  # UPLINK / DOWNLINK, with _V6 for IPv6 sessions
    description: str  # "<peer device>:<peer port>"
    afi: str  # "ipv4" | "ipv6"


@dataclass(frozen=True, slots=True)
class Bfd:
    rx_ms: int
    tx_ms: int
    multiplier: int


@dataclass(frozen=True, slots=True)
class BgpPlan:
    asn: int
    router_id: str
    neighbors: list[BgpNeighbor]
    peer_groups: list[str]
    networks_v4: list[str]
    networks_v6: list[str]
    maximum_paths: int
    keepalive: int
    hold: int
    bfd: Bfd | None
    policy: RoutePolicy
    password: str | None = None  # TCP MD5 key: a placeholder the deploy fills (intent/secrets.py), never the key

    @property
    def neighbors_v4(self) -> list[BgpNeighbor]:
        return [n for n in self.neighbors if n.afi == "ipv4"]

    @property
    def neighbors_v6(self) -> list[BgpNeighbor]:
        return [n for n in self.neighbors if n.afi == "ipv6"]

    @property
    def groups_v4(self) -> list[str]:
        return [g for g in self.peer_groups if not g.endswith("_V6")]

    @property
    def groups_v6(self) -> list[str]:
        return [g for g in self.peer_groups if g.endswith("_V6")]


def peer_ip(local: IPv4Interface | IPv6Interface) -> str:
    """The other address of a /31 or /127 (int() of an interface is its address: no object built
    for the local address, which a fabric asks for a hundred thousand times)."""
    other = int(local) ^ 1
    if isinstance(local, IPv4Interface):
        return _dotted(other)
    return str(IPv6Address(other))


def interface_text(interface: IPv4Interface | IPv6Interface) -> str:
    """str(interface), "10.1.0.1/31", without ipaddress's general formatting for IPv4 (a fabric's
    views write sixty thousand of them)."""
    if isinstance(interface, IPv4Interface):
        return f"{_dotted(int(interface))}/{interface.network.prefixlen}"
    return str(interface)


def _dotted(value: int) -> str:
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def maximum_paths(ports: list[Port], asn_of: dict[str, int]) -> int:
    """The widest equal-cost group: the most links towards one peer ASN. RTSW: every uplink (one
    zone CTSW layer); CTSW: the parallel links to one RTSW, or the uplinks to the ATSW layer; ATSW:
    every link into one zone."""
    per_asn: dict[int, int] = {}
    for port in ports:
        if port.kind is not PortKind.HOST:
            asn = asn_of[port.peer_device]
            per_asn[asn] = per_asn.get(asn, 0) + 1
    return max(per_asn.values(), default=1)


def bgp_plan(ctx: DesignContext, device: Device) -> BgpPlan:
    topo, fabric = ctx.topology, ctx.fabric
    ports = topo.ports[device.name]
    neighbors: list[BgpNeighbor] = []
    peers: list[tuple[str, str, str]] = []  # (address, peer group, peer device) for the route policy
    for port in ports:
        if port.ipv4 is None:
            continue
        peer = topo.devices[port.peer_device]
        group = "UPLINK" if port.kind is PortKind.UPLINK else "DOWNLINK"
        description = f"{peer.name}:{port.peer_port}"
        neighbors.append(BgpNeighbor(peer_ip(port.ipv4), peer.asn, group, description, "ipv4"))
        peers.append((peer_ip(port.ipv4), group, peer.name))
        if port.ipv6 is not None:
            neighbors.append(BgpNeighbor(peer_ip(port.ipv6), peer.asn, f"{group}_V6", description, "ipv6"))
            peers.append((peer_ip(port.ipv6), f"{group}_V6", peer.name))
    networks_v4 = [str(device.loopback_ipv4)]
    networks_v6 = [str(device.loopback_ipv6)] if device.loopback_ipv6 else []
    if device.host_subnet_ipv4 is not None:
        networks_v4.append(str(device.host_subnet_ipv4))
    if device.host_subnet_ipv6 is not None:
        networks_v6.append(str(device.host_subnet_ipv6))
    bfd = fabric.bgp.bfd
    return BgpPlan(
        asn=device.asn,
        router_id=str(device.loopback_ipv4.ip),
        neighbors=neighbors,
        peer_groups=sorted({n.peer_group for n in neighbors}),
        networks_v4=networks_v4,
        networks_v6=networks_v6,
        maximum_paths=maximum_paths(ports, ctx.asn_of),
        keepalive=fabric.bgp.keepalive_s,
        hold=fabric.bgp.hold_s,
        bfd=Bfd(bfd.min_rx_ms, bfd.min_tx_ms, bfd.multiplier) if bfd.enabled else None,
        policy=route_policy(ctx, device, peers),
        password=placeholder("bgp.password") if fabric.bgp.password is not None else None,
    )
