"""PFC headroom and per-device buffer plans.

Headroom follows SONiC's dynamic buffer model (sonic-swss cfgmgr/buffer_headroom_*.lua, HLD
"Dynamically Headroom Calculation"): after a port sends PAUSE, it must still absorb what is on the
cable in both directions, what the peer sends before it reacts, one MTU in flight at each end and
the MAC/PHY latency; small packets waste cells, which `cell occupancy` accounts for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.fabric import Fabric, TierBuffers
from netgen.topology.model import Device, Port, Role, Topology

SPEED_OF_LIGHT_IN_FIBRE_M_S = 198_000_000  # SONiC's constant (about 2/3 c)

# IEEE 802.3 Annex 31B pause quanta a peer may still need before it stops (one quantum = 512
# bit times), as SONiC tabulates them per port speed in Gb/s.
PAUSE_QUANTA_BY_SPEED = {800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67}


def _roundup_1k(value: float) -> int:
    return math.ceil(value / 1024) * 1024


@dataclass(frozen=True, slots=True)
class Headroom:
    """Per lossless priority group, bytes."""

    xon: int
    xoff: int
    size: int


@lru_cache(maxsize=1024)
def pg_headroom(
    speed_gbps: int,
    cable_m: int,
    port_mtu: int,
    lossless_mtu: int,
    small_packet_percent: int,
    cell_bytes: int,
    pipeline_latency: int,
    mac_phy_delay: int,
    gearbox_delay: int = 0,
    lanes: int = 4,
) -> Headroom:
    """Headroom of one lossless PG on one port (SONiC dynamic-model formula, no shared headroom pool)."""
    speed_mbps = speed_gbps * 1000
    quanta = PAUSE_QUANTA_BY_SPEED.get(speed_gbps, 905)
    peer_response = quanta * 512 // 8
    bytes_on_cable = 2 * cable_m * speed_mbps * 1_000_000 / SPEED_OF_LIGHT_IN_FIBRE_M_S / 8
    # How many 64-byte packets' worth of cells one small packet can occupy, in the worst case.
    worst_case_factor = -(-cell_bytes // 64) if cell_bytes > 128 else -(-2 * cell_bytes // (1 + cell_bytes))
    small = small_packet_percent
    small_share = 100 * 64 / ((small * 64 + (100 - small) * lossless_mtu) / 100)
    cell_occupancy = (100 - small_share + small_share * worst_case_factor) / 100
    propagation = port_mtu + bytes_on_cable + 2 * gearbox_delay + mac_phy_delay + peer_response
    xoff = _roundup_1k(lossless_mtu + propagation * cell_occupancy)
    # 8-lane ports double the pipeline latency and need one more MTU of room (SONiC does the same).
    eight_lane = lanes >= 8
    xon = _roundup_1k(pipeline_latency * (2 if eight_lane else 1))
    size = _roundup_1k(xon + xoff + (port_mtu if eight_lane else 0))
    return Headroom(xon=xon, xoff=xoff, size=size)


def port_headroom(fabric: Fabric, model: PlatformModel, port: Port) -> Headroom:
    constants = model.headroom
    return pg_headroom(
        port.speed_gbps,
        port.cable_m,
        fabric.mtu,
        fabric.qos.lossless.roce_mtu,
        fabric.buffers.small_packet_percent,
        model.cell_bytes,
        constants.pipeline_latency,
        constants.mac_phy_delay,
        constants.gearbox_delay,
        port.lanes,
    )


@dataclass(frozen=True, slots=True)
class BufferDomain:
    """One ASIC's buffer on a device and what the plan takes from it."""

    index: int
    buffer_bytes: int
    ports: int  # used ports in this domain
    lossless_ports: int
    headroom_bytes: int  # sum of PG headroom over lossless ports
    static_bytes: int  # sum of static per-port partitions (static mode)
    per_port_static: int  # 0 in shared mode

    @property
    def committed(self) -> int:
        return self.headroom_bytes + self.static_bytes

    @property
    def free(self) -> int:
        """Buffer left for the shared pool (shared mode) or unallocated (static mode)."""
        return self.buffer_bytes - self.committed

    def queue_limit(self, mode: str, dynamic_th: int) -> int:
        """The most one congested queue can hold. Static: its partition. Shared with dynamic
        thresholds: a queue may grow to alpha x the free pool, so alone it settles at
        alpha / (1 + alpha) of it (alpha = 2^dynamic_th)."""
        if mode == "static_per_port":
            return self.per_port_static
        alpha = 2.0**dynamic_th
        return int(self.free * alpha / (1 + alpha))


@dataclass(frozen=True, slots=True)
class DeviceBufferPlan:
    device: str
    mode: str
    lossless_priorities: int
    headroom: dict[str, Headroom]  # port name -> headroom of its lossless PG
    domains: tuple[BufferDomain, ...]

    @property
    def worst(self) -> BufferDomain:
        return max(self.domains, key=lambda d: d.committed / d.buffer_bytes if d.buffer_bytes else 1.0)


def tier_buffers(fabric: Fabric, role: Role) -> TierBuffers:
    policy: TierBuffers = getattr(fabric.buffers, role.value)
    return policy


def plan_device(fabric: Fabric, model: PlatformModel, device: Device, ports: list[Port]) -> DeviceBufferPlan:
    policy = tier_buffers(fabric, device.role)
    lossless = 1 if model.capabilities.pfc else 0
    per_domain = model.ports_per_buffer_domain or model.port_count
    headroom: dict[str, Headroom] = {}
    grouped: dict[int, list[Port]] = {}
    for port in ports:
        grouped.setdefault(port.cage // per_domain, []).append(port)
        if lossless:
            headroom[port.name] = port_headroom(fabric, model, port)
    domains = []
    for index in sorted(grouped):
        members = grouped[index]
        used_headroom = sum(headroom[p.name].size for p in members) if lossless else 0
        static = per_port = 0
        if policy.mode == "static_per_port":
            if policy.per_port is not None:
                per_port = policy.per_port
            else:
                per_port = max(0, (model.buffer_bytes - used_headroom) // len(members))
            static = per_port * len(members)
        domains.append(BufferDomain(index, model.buffer_bytes, len(members), len(members) if lossless else 0,
                                    used_headroom, static, per_port))
    if not domains:
        domains.append(BufferDomain(0, model.buffer_bytes, 0, 0, 0, 0, 0))
    return DeviceBufferPlan(device.name, policy.mode, lossless, headroom, tuple(domains))


def plan_buffers(fabric: Fabric, catalog: Catalog, topology: Topology) -> dict[str, DeviceBufferPlan]:
    """Buffer plan of every device. PFC (one lossless PG) is on every backend port."""
    return {
        name: plan_device(fabric, catalog.get(device.model), device, topology.ports[name])
        for name, device in topology.devices.items()
    }
