"""PFC headroom and per-device buffer plans, in the switch vendor's own buffer model.

The catalog carries, per ASIC family, the vendor's SONiC buffer settings (pools, reserved sizes,
thresholds, the pg_profile_lookup.ini rows) and a headroom formula fitted to the vendor's published
tables. A port's lossless priority group gets the vendor's profile for its speed and cable, with an
xoff of at least the vendor's row for that cable (netgen's formula only ever adds headroom, for
cables longer than the table). The budget is counted the way a Broadcom MMU counts it:

* the ingress pool `size` includes the shared headroom pool (`xoff`): every PG's headroom is drawn
  from that one pool once the PG has sent PAUSE, capped by the PG's own xoff;
* reserved PG and queue sizes come on top of the pool and must fit the ASIC's buffer;
* a shared headroom pool smaller than the sum of the PGs' xoff is oversubscribed: lossless traffic
  is safe only while fewer PGs than the pool can hold fill their headroom at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from netgen.intent.catalog import Catalog, HeadroomFormula, LosslessRow, PlatformModel, VendorBuffers
from netgen.intent.fabric import Fabric, TierBuffers
from netgen.topology.model import Device, Port, Role, Topology

# Where a device's buffer numbers come from.
FROM_SKU = "sku"  # the SONiC SKU netgen renders: these are the device's tables
FROM_REFERENCE = "reference"  # the NOS sets buffers itself (EOS): the vendor's SONiC settings for the ASIC
UNPUBLISHED = "unpublished"  # neither: the SDK's defaults, values not published (NG507 says so)


@lru_cache(maxsize=4096)
def formula_xoff(formula: HeadroomFormula, speed_gbps: int, cable_m: int, mtu: int) -> int:
    """xoff from the family's formula (see HeadroomFormula), rounded up to its granularity."""
    rate_bytes_per_s = speed_gbps * 1e9 / 8
    in_flight_s = 2 * cable_m / formula.propagation_m_per_s + formula.response_ns * 1e-9
    raw = formula.fixed_bytes + formula.cell_occupancy * (2 * mtu + rate_bytes_per_s * in_flight_s)
    return math.ceil(raw / formula.round_to_bytes) * formula.round_to_bytes


@dataclass(frozen=True, slots=True)
class LosslessPg:
    """The lossless priority group of one port: the vendor's profile, netgen's xoff."""

    port: str
    speed_gbps: int
    cable_m: int
    row: LosslessRow | None  # the vendor row whose profile the PG uses (None: the vendor has none)
    xoff: int  # max(computed, vendor) - what the PG may draw from the shared headroom pool
    computed_xoff: int | None  # the family formula (None: no formula for this family)
    vendor_xoff: int | None  # the vendor's row for a cable at least this long (None: longer than the table)

    @property
    def size(self) -> int:
        """Reserved (guaranteed) bytes of the PG."""
        return self.row.size if self.row else 0

    @property
    def xon(self) -> int:
        return self.row.xon if self.row else 0

    @property
    def xon_offset(self) -> int:
        return self.row.xon_offset if self.row else 0

    @property
    def vendor_cable_m(self) -> int | None:
        return self.row.cable_m if self.row and self.vendor_xoff is not None else None


_Headroom = tuple[LosslessRow | None, int, int | None, int | None]  # row, xoff, computed, vendor xoff


def _headroom(vendor: VendorBuffers | None, formula: HeadroomFormula | None, speed_gbps: int, cable_m: int,
              mtu: int) -> _Headroom:
    row = vendor.lossless_row(speed_gbps, cable_m) if vendor else None
    vendor_xoff = row.xoff if row is not None and row.cable_m >= cable_m else None
    computed = formula_xoff(formula, speed_gbps, cable_m, mtu) if formula else None
    known = [x for x in (computed, vendor_xoff) if x is not None]
    return row, max(known, default=0), computed, vendor_xoff


def lossless_pg(vendor: VendorBuffers | None, formula: HeadroomFormula | None, port: Port, mtu: int,
                seen: dict[tuple[int, int], _Headroom] | None = None) -> LosslessPg:
    """The port's lossless PG. `seen` memoizes the part that depends only on speed and cable (a
    device has hundreds of ports and a handful of distinct pairs)."""
    pair = (port.speed_gbps, port.cable_m)
    known = seen.get(pair) if seen is not None else None
    if known is None:
        known = _headroom(vendor, formula, port.speed_gbps, port.cable_m, mtu)
        if seen is not None:
            seen[pair] = known
    row, xoff, computed, vendor_xoff = known
    return LosslessPg(port.name, port.speed_gbps, port.cable_m, row, xoff, computed, vendor_xoff)


@dataclass(frozen=True, slots=True)
class BufferDomain:
    """One ASIC's buffer on a device and what the plan takes from it (bytes)."""

    index: int
    buffer_bytes: int  # the ASIC's packet buffer
    ports: int  # used ports in this domain
    lossless_ports: int
    pool_bytes: int  # ingress pool size, shared headroom pool included
    headroom_pool_bytes: int  # the shared headroom pool (the ingress pool's xoff)
    egress_pool_bytes: int
    reserved_bytes: int  # ingress: reserved sizes of the lossless and lossy PGs
    egress_reserved_bytes: int  # egress: reserved sizes of the queues
    xoff_bytes: int  # sum of the lossless PGs' xoff
    max_xoff: int  # the largest one PG may draw
    static_bytes: int  # static per-port partitions (static mode)
    per_port_static: int  # 0 in shared mode

    @property
    def shared_bytes(self) -> int:
        """The part of the ingress pool PG thresholds share (the pool less its headroom pool)."""
        return self.pool_bytes - self.headroom_pool_bytes

    @property
    def ingress_committed(self) -> int:
        return self.pool_bytes + self.reserved_bytes

    @property
    def egress_committed(self) -> int:
        return self.egress_pool_bytes + self.egress_reserved_bytes

    @property
    def committed(self) -> int:
        return max(self.ingress_committed, self.egress_committed)

    @property
    def headroom_oversubscription(self) -> float:
        """Sum of xoff over the shared headroom pool: above 1, not every PG can fill its headroom at once."""
        return self.xoff_bytes / self.headroom_pool_bytes if self.headroom_pool_bytes else 0.0

    @property
    def pgs_covered(self) -> int:
        """How many lossless PGs can fill their whole xoff at the same time."""
        if not self.max_xoff:
            return self.lossless_ports
        return min(self.lossless_ports, self.headroom_pool_bytes // self.max_xoff)

    def queue_limit(self, mode: str, dynamic_th: int) -> int:
        """The most one congested lossless queue can hold before PFC stops its senders. Static: the
        partition. Shared with dynamic thresholds: a PG may grow to alpha x the free shared pool, so
        alone it settles at alpha / (1 + alpha) of it (alpha = 2^dynamic_th)."""
        if mode == "static_per_port":
            return self.per_port_static
        alpha = 2.0**dynamic_th
        return int(max(0, self.shared_bytes - self.reserved_bytes) * alpha / (1 + alpha))


@dataclass(frozen=True, slots=True)
class DeviceBufferPlan:
    device: str
    mode: str
    source: str  # FROM_SKU, FROM_REFERENCE or UNPUBLISHED
    vendor: VendorBuffers | None  # the vendor settings the plan follows
    dynamic_th: int  # lossless PG threshold: the intent's, else the vendor's
    lossless: dict[str, LosslessPg]  # port name -> its lossless PG
    domains: tuple[BufferDomain, ...]

    @property
    def worst(self) -> BufferDomain:
        return max(self.domains, key=lambda d: (d.committed / d.buffer_bytes, d.headroom_oversubscription))


def tier_buffers(fabric: Fabric, role: Role) -> TierBuffers:
    policy: TierBuffers = getattr(fabric.buffers, role.value)
    return policy


def vendor_buffers(catalog: Catalog, model: PlatformModel) -> tuple[VendorBuffers | None, str]:
    """The buffer settings a device of this model follows, and where they come from."""
    if model.sonic is not None:
        return model.sonic.buffers, FROM_SKU if model.sonic.buffers else UNPUBLISHED
    reference = catalog.family(model).reference
    return reference, FROM_REFERENCE if reference else UNPUBLISHED


def plan_device(fabric: Fabric, catalog: Catalog, model: PlatformModel, device: Device,
                ports: list[Port]) -> DeviceBufferPlan:
    policy = tier_buffers(fabric, device.role)
    family = catalog.family(model)
    vendor, source = vendor_buffers(catalog, model)
    pfc = model.capabilities.pfc
    lossless: dict[str, LosslessPg] = {}
    if pfc and source != UNPUBLISHED:
        seen: dict[tuple[int, int], _Headroom] = {}
        lossless = {p.name: lossless_pg(vendor, family.headroom, p, fabric.mtu, seen) for p in ports}
    rows = [pg.row for pg in lossless.values() if pg.row]
    dynamic_th = policy.dynamic_th if policy.dynamic_th is not None else (rows[0].threshold if rows else 0)
    per_domain = model.ports_per_buffer_domain or model.port_count
    grouped: dict[int, list[Port]] = {}
    for port in ports:
        grouped.setdefault(port.cage // per_domain, []).append(port)
    domains = [_domain(index, grouped[index], lossless, vendor, family.buffer_bytes, model.queues, policy)
               for index in sorted(grouped)] or [_domain(0, [], {}, vendor, family.buffer_bytes, model.queues, policy)]
    return DeviceBufferPlan(device.name, policy.mode, source, vendor, dynamic_th, lossless, tuple(domains))


def _domain(index: int, members: list[Port], lossless: dict[str, LosslessPg], vendor: VendorBuffers | None,
            buffer_bytes: int, queues: int, policy: TierBuffers) -> BufferDomain:
    pgs = [lossless[p.name] for p in members if p.name in lossless]
    if vendor is None:
        return BufferDomain(index, buffer_bytes, len(members), len(pgs), 0, 0, 0, 0, 0, 0, 0, 0, 0)
    pool = vendor.ingress_pool
    egress_pool = vendor.egress_pool or pool
    reserved = sum(pg.size for pg in pgs) + vendor.ingress_lossy.size * len(members)
    lossless_queues = 1 if pgs else 0
    egress_reserved = len(members) * (vendor.egress_lossless.size * lossless_queues
                                      + vendor.egress_lossy.size * (queues - lossless_queues))
    static = per_port = 0
    if policy.mode == "static_per_port" and members:
        shared = pool.size - pool.xoff - reserved
        per_port = policy.per_port if policy.per_port is not None else max(0, shared // len(members))
        static = per_port * len(members)
    return BufferDomain(
        index=index, buffer_bytes=buffer_bytes, ports=len(members), lossless_ports=len(pgs),
        pool_bytes=pool.size, headroom_pool_bytes=pool.xoff, egress_pool_bytes=egress_pool.size,
        reserved_bytes=reserved, egress_reserved_bytes=egress_reserved,
        xoff_bytes=sum(pg.xoff for pg in pgs), max_xoff=max((pg.xoff for pg in pgs), default=0),
        static_bytes=static, per_port_static=per_port,
    )


def plan_buffers(fabric: Fabric, catalog: Catalog, topology: Topology) -> dict[str, DeviceBufferPlan]:
    """Buffer plan of every device. PFC (one lossless PG) is on every backend port.

    A plan depends on the device's tier, model and ports (name, cage, speed, cable) only, and most
    devices share their layout with hundreds of others (every RTSW of a fabric, say): devices of one
    layout share one plan's parts (frozen, and the lossless dict is never changed after planning)."""
    plans: dict[str, DeviceBufferPlan] = {}
    by_layout: dict[tuple[object, ...], DeviceBufferPlan] = {}
    for name, device in topology.devices.items():
        ports = topology.ports[name]
        layout = (device.role, device.model, *((p.name, p.cage, p.speed_gbps, p.cable_m) for p in ports))
        same = by_layout.get(layout)
        if same is None:
            plans[name] = by_layout[layout] = plan_device(fabric, catalog, catalog.get(device.model), device, ports)
        else:
            plans[name] = replace(same, device=name)
    return plans
