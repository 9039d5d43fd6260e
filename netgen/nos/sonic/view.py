"""Per-device view of a SONiC switch: every value its config_db.json and frr.conf carry.

All decisions are made here; the templates in templates/sonic/ only lay the values out. Design
choices that a SONiC operator will ask about:

* docker_routing_config_mode = split-unified: FRR reads netgen's single integrated frr.conf
  (/etc/sonic/frr/frr.conf). netgen emits no BGP_* or STATIC_ROUTE tables, because bgpcfgd still
  runs in split modes and would push them into FRR on top of the file: one source of truth.
* buffer_model = traditional: Broadcom ASICs have no dynamic (Lua) headroom model in SONiC. Pools
  and profiles are the switch vendor's SKU settings (netgen/topology/buffers.py); netgen writes
  the lossless PG profiles itself, with the SKU's reserved size, xon and xon_offset and an xoff
  never below the SKU's row for the cable. CABLE_LENGTH is "0m" on every port on purpose:
  buffermgrd skips ports with a 0m cable, so it never replaces netgen's BUFFER_PG / profiles with
  its pg_profile_lookup.ini rows. The real lengths are in the profile names and `netgen headroom`.
  A SKU that ships no buffer tables (the SDK sets them) gets none from netgen either.
* Map tables are named AZURE and the WRED profile AZURE_LOSSLESS, the names SONiC's own tools
  (ecnconfig, qos reload) use, so those tools keep working on a netgen-managed switch.
* ECN on/off flips only the QUEUE -> wred_profile binding of the lossless queue; the profile stays
  defined so `ecnconfig -q N on` remains a one-line operator action.
* default_pfcwd_status = disable: netgen writes PFC_WD itself; SONiC's `pfcwd start_default`
  would otherwise replace it with scaled defaults at boot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netgen.context import DesignContext
from netgen.intent.catalog import PlatformModel, ProfileSetting
from netgen.nos.sonic.services import services_tables
from netgen.platforms.features import dscp_to_tc, hashes_on_qp, runs_pfc_watchdog, tc_to_queue
from netgen.platforms.routing import BgpPlan, bgp_plan, interface_text
from netgen.platforms.services import ServicesPlan, services_plan
from netgen.rendered import RenderError
from netgen.topology.buffers import FROM_SKU, DeviceBufferPlan
from netgen.topology.model import Device, Port, PortKind, Role
from netgen.topology.ports import PORT_NAMERS

MAP_NAME = "AZURE"
INGRESS_POOL = "ingress_lossless_pool"  # SONiC's pool names (buffers_config.j2, buffermgrd)
EGRESS_POOL = "egress_lossless_pool"
WRED_PROFILE = "AZURE_LOSSLESS"
HOST_VLAN = 1000
DEVICE_TYPES = {Role.RTSW: "BackEndToRRouter", Role.CTSW: "BackEndLeafRouter", Role.ATSW: "BackEndSpineRouter"}
FIVE_TUPLE = ["DST_IP", "SRC_IP", "IP_PROTOCOL", "L4_DST_PORT", "L4_SRC_PORT"]
FLEX_COUNTERS = ["PFCWD", "QUEUE", "QUEUE_WATERMARK", "PG_WATERMARK", "BUFFER_POOL_WATERMARK", "PORT"]


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    lanes: str  # "17,18,19,20": SONiC stores the lane list as one comma-separated string
    alias: str  # front-panel alias, as the SKU's port_config.ini names it
    index: int  # front-panel index, as port_config.ini numbers it
    speed_mbps: int
    fec: str
    mtu: int
    admin_status: str  # "up" for used ports, "down" for spare cages and the SKU's extra ports
    description: str
    used: Port | None  # the topology port, or None for a spare cage/sub-port


@dataclass(frozen=True, slots=True)
class BufferProfileRow:
    """One BUFFER_PROFILE entry: its fields in config_db order, values already strings."""

    name: str
    fields: dict[str, str]


@dataclass
class SonicView:
    hostname: str
    asn: int
    device_type: str
    hwsku: str
    mtu: int
    ports: list[SonicPort]
    routed: list[tuple[str, list[str]]]  # port -> its /31 and /127 prefixes
    loopbacks: list[str]
    host_vlan: int | None
    host_gateways: list[str]
    host_members: list[str]
    backend_ports: list[str]  # PFC, maps, watchdog and buffers apply to these
    # QoS
    map_name: str
    dscp_to_tc: dict[str, str]
    tc_to_queue: dict[str, str]
    tc_to_pg: dict[str, str]
    pfc_to_queue: dict[str, str]
    pfc_enable: str
    pfcwd_enable: str  # "" when the watchdog does not run on this tier
    schedulers: dict[str, dict[str, str]]
    queue_scheduler: dict[int, str]
    lossless_queue: int
    lossless_pg: int
    wred_profile: str
    wred: dict[str, str]
    ecn_enabled: bool
    # buffers (None: the SKU ships none; the SDK's MMU defaults apply)
    buffer_pools: dict[str, dict[str, str]] | None
    buffer_profiles: list[BufferProfileRow]
    lossless_profile_of: dict[str, str]  # port -> its lossless PG profile name
    lossy_queue_ranges: list[str]
    # PFC watchdog
    pfcwd: dict[str, str] | None
    pfcwd_poll_ms: int
    flex_counters: list[str]
    # hashing
    ecmp_hash: list[str]
    rdma_hash: list[str]  # empty unless the platform release has RDMA hash fields
    # routing
    bgp: BgpPlan
    # switch services (management port eth0)
    services: ServicesPlan
    services_db: dict[str, dict[str, Any]]  # their CONFIG_DB tables (sonic/services.py)


def _ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 7] -> ["0-2", "4-5", "7"] (SONiC's BUFFER_QUEUE keys take ranges)."""
    out: list[str] = []
    start = prev = None
    for value in sorted(values):
        if start is None:
            start = prev = value
        elif prev is not None and value == prev + 1:
            prev = value
        else:
            out.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = value
    if start is not None:
        out.append(f"{start}-{prev}" if start != prev else f"{start}")
    return out


def _alias(pattern: str, cage: int, sub: int, first_lane: int) -> str:
    return (pattern.replace("{index}", str(cage + 1)).replace("{letter}", "abcdefgh"[sub])
            .replace("{lane}", str(first_lane + 1)))


_Slot = tuple[int, int, str, str, str]  # (cage, lane offset, the port's name when spare, its lanes, its alias)


@dataclass
class _SkuPorts:
    """A SKU's ports, the same for every switch of a model: worked out once per model per process."""

    slots: list[_Slot]  # every port of the SKU, in port_config.ini's order
    index: dict[tuple[int, int], int]  # (cage, lane offset) -> its position in slots
    spares: dict[int, tuple[SonicPort, ...]]  # MTU -> every port as a spare (admin down), extra ports last


_SKU_PORTS: dict[int, tuple[PlatformModel, _SkuPorts]] = {}


def _sku_ports(model: PlatformModel) -> _SkuPorts:
    cached = _SKU_PORTS.get(id(model))
    if cached is not None and cached[0] is model:
        return cached[1]
    assert model.sonic is not None
    sku = model.sonic
    per_cage = model.ports_per_cage(sku.port_speed)
    lanes_each = model.lanes_per_port // per_cage
    namer = PORT_NAMERS[model.port_naming]
    slots = []
    for cage in range(model.port_count):
        lanes = model.cage_lanes(cage)
        for sub in range(per_cage):
            offset = sub * lanes_each
            slots.append((cage, offset, namer(model, cage, offset),
                          ",".join(str(lane) for lane in lanes[offset:offset + lanes_each]),
                          _alias(sku.alias, cage, sub, offset)))
    ports = _SkuPorts(slots, {(cage, offset): i for i, (cage, offset, *_) in enumerate(slots)}, {})
    _SKU_PORTS[id(model)] = (model, ports)
    return ports


def _sku_slots(model: PlatformModel) -> list[_Slot]:
    return _sku_ports(model).slots


def port_alias(model: PlatformModel, port: Port) -> str:
    """The alias config_db.json gives a used port (the SKU's front-panel name for its cage and lanes)."""
    for cage, offset, _, _, alias in _sku_slots(model):
        if (cage, offset) == (port.cage, port.lane_offset):
            return alias
    raise RenderError(f"{port.device}: port {port.name} (cage {port.cage}, lane {port.lane_offset}) is not a port"
                      f" of {model.description or 'its model'}")


def _all_ports(model: PlatformModel, used: list[Port], mtu: int) -> list[SonicPort]:
    """Every port of the SKU, as its port_config.ini lists them: used ports as the topology says,
    spare sub-ports and the SKU's extra ports admin down, so a `config replace` never deletes one.
    A switch's list starts as a copy of the model's spares (frozen entries, shared safely)."""
    if model.sonic is None:
        raise RenderError(f"{model.description or 'model'} has no SONiC SKU")
    sku = model.sonic
    known = _sku_ports(model)
    if mtu not in known.spares:
        known.spares[mtu] = (
            *(SonicPort(spare_name, lanes, alias, cage + 1, sku.port_speed * 1000, sku.fec, mtu, "down", "spare", None)
              for cage, _, spare_name, lanes, alias in known.slots),
            *(SonicPort(extra.name, ",".join(str(lane) for lane in extra.lanes), extra.alias, extra.index,
                        extra.speed * 1000, extra.fec, mtu, "down", "spare", None) for extra in sku.extra_ports))
    ports = list(known.spares[mtu])
    for port in used:
        i = known.index.get((port.cage, port.lane_offset))
        if i is not None:  # a port at no slot of the SKU has no entry, as port_config.ini has none
            cage, _, _, lanes, alias = known.slots[i]
            ports[i] = SonicPort(port.name, lanes, alias, cage + 1, port.speed_gbps * 1000, sku.fec, mtu, "up",
                                 f"{port.peer_device}:{port.peer_port}", port)
    return ports


def _profile_fields(setting: ProfileSetting, pool: str, static_th: int | None = None) -> dict[str, str]:
    """A vendor profile; `static_th` replaces its threshold (static per-port partitions)."""
    fields = {"pool": pool, "size": str(setting.size)}
    if static_th is not None:
        fields["static_th"] = str(static_th)
    elif setting.static_th is not None:
        fields["static_th"] = str(setting.static_th)
    else:
        fields["dynamic_th"] = str(setting.dynamic_th)
    return fields


def _buffers(plan: DeviceBufferPlan, ports: list[Port]) -> tuple[dict[str, dict[str, str]] | None,
                                                                   list[BufferProfileRow], dict[str, str]]:
    """BUFFER_POOL, BUFFER_PROFILE rows and each port's lossless profile, in the vendor's semantics."""
    vendor = plan.vendor
    if plan.source != FROM_SKU or vendor is None:
        return None, [], {}
    ingress, egress = vendor.ingress_pool, vendor.egress_pool
    pools = {INGRESS_POOL: {"type": ingress.type, "mode": ingress.mode, "size": str(ingress.size)}}
    if ingress.xoff:
        pools[INGRESS_POOL]["xoff"] = str(ingress.xoff)
    egress_pool = INGRESS_POOL
    if egress is not None:
        egress_pool = EGRESS_POOL
        pools[EGRESS_POOL] = {"type": egress.type, "mode": egress.mode, "size": str(egress.size)}
        if egress.xoff:
            pools[EGRESS_POOL]["xoff"] = str(egress.xoff)
    static = plan.mode == "static_per_port"
    partition = plan.worst.per_port_static if static else None
    profiles = [
        BufferProfileRow("ingress_lossy_profile", _profile_fields(vendor.ingress_lossy, INGRESS_POOL)),
        # Egress lossless keeps the vendor's threshold in every mode: it never drops, PFC stops the sender.
        BufferProfileRow("egress_lossless_profile", _profile_fields(vendor.egress_lossless, egress_pool)),
        BufferProfileRow("egress_lossy_profile", _profile_fields(vendor.egress_lossy, egress_pool, partition)),
    ]
    lossless_of: dict[str, str] = {}
    seen: dict[str, dict[str, str]] = {}
    for port in ports:
        pg = plan.lossless.get(port.name)
        if pg is None:
            continue
        # SONiC's buffermgrd naming (speed in Mb/s, cable), with the real cable length.
        name = f"pg_lossless_{pg.speed_gbps * 1000}_{pg.cable_m}m_profile"
        fields = {"pool": INGRESS_POOL, "size": str(pg.size), "xon": str(pg.xon), "xoff": str(pg.xoff),
                  "xon_offset": str(pg.xon_offset)}
        fields.update({"static_th": str(partition)} if static else {"dynamic_th": str(plan.dynamic_th)})
        if seen.setdefault(name, fields) != fields:
            raise RenderError(f"{plan.device}: two different lossless profiles would share the name {name}")
        lossless_of[port.name] = name
    profiles += [BufferProfileRow(name, fields) for name, fields in seen.items()]
    return pools, profiles, lossless_of


def build_view(ctx: DesignContext, device: Device) -> SonicView:
    fabric, topo = ctx.fabric, ctx.topology
    model = ctx.model(device)
    qos = fabric.qos
    used = topo.ports[device.name]
    plan = ctx.buffers[device.name]
    ports = _all_ports(model, used, fabric.mtu)
    backend = [p.name for p in used]
    services = services_plan(ctx, device)

    routed = [(port.name, [interface_text(port.ipv4)] + ([interface_text(port.ipv6)] if port.ipv6 else []))
              for port in used if port.ipv4 is not None]

    lossless = qos.lossless
    tc_to_pg = {str(tc): (str(lossless.pfc_priority) if tc == lossless.traffic_class else "0") for tc in range(8)}
    schedulers = {f"scheduler.{qos.cts.name}": {"type": "STRICT", "priority": "7"},
                  f"scheduler.{lossless.name}": {"type": "DWRR", "weight": str(lossless.weight)}}
    queue_scheduler = {qos.cts.queue: f"scheduler.{qos.cts.name}", lossless.queue: f"scheduler.{lossless.name}"}
    for cls in qos.classes:
        schedulers[f"scheduler.{cls.name}"] = {"type": "DWRR", "weight": str(cls.weight)}
        queue_scheduler[cls.queue] = f"scheduler.{cls.name}"
    ecn = qos.ecn
    wred = {"ecn": "ecn_all", "wred_green_enable": "true",
            "green_min_threshold": str(ecn.min_threshold), "green_max_threshold": str(ecn.max_threshold),
            "green_drop_probability": str(ecn.max_mark_probability)}

    buffer_pools, buffer_profiles, lossless_of = _buffers(plan, used)
    lossy_queues = [q for q in range(model.queues) if q != lossless.queue]

    wd = qos.pfc_watchdog
    watchdog = runs_pfc_watchdog(fabric, model, device)
    pfcwd = ({"action": wd.action, "detection_time": str(wd.detection_time_ms),
              "restoration_time": str(wd.restoration_time_ms)} if watchdog else None)

    rdma = hashes_on_qp(fabric, model)
    host_gateways = [str(g) for g in (device.host_gateway_ipv4, device.host_gateway_ipv6) if g is not None]
    host_members = [p.name for p in used if p.kind is PortKind.HOST]

    return SonicView(
        hostname=device.name,
        asn=device.asn,
        device_type=DEVICE_TYPES[device.role],
        hwsku=model.sonic.hwsku if model.sonic else device.model,
        mtu=fabric.mtu,
        ports=ports,
        routed=routed,
        loopbacks=[str(device.loopback_ipv4)] + ([str(device.loopback_ipv6)] if device.loopback_ipv6 else []),
        host_vlan=HOST_VLAN if host_members else None,
        host_gateways=host_gateways,
        host_members=host_members,
        backend_ports=backend,
        map_name=MAP_NAME,
        dscp_to_tc={str(d): str(tc) for d, tc in dscp_to_tc(fabric).items()},
        tc_to_queue={str(tc): str(q) for tc, q in tc_to_queue(fabric).items()},
        tc_to_pg=tc_to_pg,
        pfc_to_queue={str(lossless.pfc_priority): str(lossless.queue)},
        pfc_enable=str(lossless.pfc_priority),
        pfcwd_enable=str(lossless.pfc_priority) if watchdog else "",
        schedulers=schedulers,
        queue_scheduler=dict(sorted(queue_scheduler.items())),
        lossless_queue=lossless.queue,
        lossless_pg=lossless.pfc_priority,
        wred_profile=WRED_PROFILE,
        wred=wred,
        ecn_enabled=ecn.enabled and model.capabilities.ecn,
        buffer_pools=buffer_pools,
        buffer_profiles=buffer_profiles,
        lossless_profile_of=lossless_of,
        lossy_queue_ranges=_ranges(lossy_queues),
        pfcwd=pfcwd,
        pfcwd_poll_ms=wd.polling_interval_ms,
        flex_counters=FLEX_COUNTERS,
        ecmp_hash=FIVE_TUPLE,
        rdma_hash=[*FIVE_TUPLE, "RDMA_BTH_DEST_QP"] if rdma else [],
        bgp=bgp_plan(ctx, device),
        services=services,
        services_db=services_tables(services, backend),
    )

