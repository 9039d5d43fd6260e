"""Per-device view of a SONiC switch: every value its config_db.json and frr.conf carry.

All decisions are made here; the templates in templates/sonic/ only lay the values out. Design
choices that a SONiC operator will ask about:

* docker_routing_config_mode = split-unified: FRR reads netgen's single integrated frr.conf
  (/etc/sonic/frr/frr.conf). netgen emits no BGP_* or STATIC_ROUTE tables, because bgpcfgd still
  runs in split modes and would push them into FRR on top of the file: one source of truth.
* buffer_model = traditional: Broadcom ASICs have no dynamic (Lua) headroom model in SONiC.
  netgen computes headroom itself and writes the lossless profiles, and CABLE_LENGTH is "0m" on
  every port on purpose: buffermgrd skips ports with a 0m cable, so it never replaces netgen's
  BUFFER_PG / profiles with its pg_profile_lookup.ini rows. The real lengths are in the profile
  names and in `netgen show` / the headroom view.
* Map tables are named AZURE and the WRED profile AZURE_LOSSLESS, the names SONiC's own tools
  (ecnconfig, qos reload) use, so those tools keep working on a netgen-managed switch.
* ECN on/off flips only the QUEUE -> wred_profile binding of the lossless queue; the profile stays
  defined so `ecnconfig -q N on` remains a one-line operator action.
* default_pfcwd_status = disable: netgen writes PFC_WD itself; SONiC's `pfcwd start_default`
  would otherwise replace it with scaled defaults at boot.
"""

from __future__ import annotations

from dataclasses import dataclass

from netgen.checks import DesignContext
from netgen.intent.catalog import PlatformModel
from netgen.platforms.base import RenderError
from netgen.platforms.features import dscp_to_tc, hashes_on_qp, runs_pfc_watchdog, tc_to_queue
from netgen.platforms.routing import BgpPlan, bgp_plan
from netgen.topology.buffers import Headroom, tier_buffers
from netgen.topology.model import Device, Port, PortKind, Role
from netgen.topology.ports import PORT_NAMERS

MAP_NAME = "AZURE"
WRED_PROFILE = "AZURE_LOSSLESS"
HOST_VLAN = 1000
DEVICE_TYPES = {Role.RTSW: "BackEndToRRouter", Role.CTSW: "BackEndLeafRouter", Role.ATSW: "BackEndSpineRouter"}
FIVE_TUPLE = ["DST_IP", "SRC_IP", "IP_PROTOCOL", "L4_DST_PORT", "L4_SRC_PORT"]
FLEX_COUNTERS = ["PFCWD", "QUEUE", "QUEUE_WATERMARK", "PG_WATERMARK", "BUFFER_POOL_WATERMARK", "PORT"]


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str
    lanes: str  # "17,18,19,20": SONiC stores the lane list as one comma-separated string
    speed_mbps: int
    mtu: int
    admin_status: str  # "up" for used ports, "down" for spare cages
    description: str
    used: Port | None  # the topology port, or None for a spare cage/sub-port


@dataclass(frozen=True, slots=True)
class LosslessProfile:
    name: str
    headroom: Headroom
    threshold_field: str  # "dynamic_th" or "static_th"
    threshold: int


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
    # buffers
    pool_mode: str
    ingress_pool_size: int
    egress_pool_size: int
    threshold_field: str
    lossy_threshold: int
    lossless_profiles: dict[str, LosslessProfile]  # port -> profile
    profiles: list[LosslessProfile]  # each distinct lossless profile once
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


def _all_ports(model: PlatformModel, used: list[Port], mtu: int) -> list[SonicPort]:
    """Every port of the SKU: used ports as the topology says, spare sub-ports admin down, so a
    `config replace` never deletes a port the switch has."""
    sku_speed = model.sonic.port_speed if model.sonic else model.port_speed
    per_cage = model.ports_per_cage(sku_speed)
    lanes_each = model.lanes_per_port // per_cage
    by_slot = {(p.cage, p.lane_offset): p for p in used}
    namer = PORT_NAMERS[model.port_naming]
    ports = []
    for cage in range(model.port_count):
        lanes = model.cage_lanes(cage)
        for sub in range(per_cage):
            offset = sub * lanes_each
            port = by_slot.get((cage, offset))
            name = port.name if port else namer(model, cage, offset)
            description = f"{port.peer_device}:{port.peer_port}" if port else "spare"
            ports.append(SonicPort(
                name=name,
                lanes=",".join(str(lane) for lane in lanes[offset:offset + lanes_each]),
                speed_mbps=(port.speed_gbps if port else sku_speed) * 1000,
                mtu=mtu,
                admin_status="up" if port else "down",
                description=description,
                used=port,
            ))
    return ports


def build_view(ctx: DesignContext, device: Device) -> SonicView:
    fabric, topo = ctx.fabric, ctx.topology
    model = ctx.model(device)
    qos = fabric.qos
    used = topo.ports[device.name]
    plan = ctx.buffers[device.name]
    policy = tier_buffers(fabric, device.role)
    ports = _all_ports(model, used, fabric.mtu)
    backend = [p.name for p in used]

    routed = [(port.name, [str(port.ipv4)] + ([str(port.ipv6)] if port.ipv6 else []))
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

    static = plan.mode == "static_per_port"
    threshold_field = "static_th" if static else "dynamic_th"
    domain = plan.worst
    lossless_profiles: dict[str, LosslessProfile] = {}
    for port in used:
        headroom = plan.headroom.get(port.name)
        if headroom is None:
            continue
        # SONiC's naming, plus the lane count where it changes the headroom (8-lane ports).
        lanes = "_8lane" if port.lanes >= 8 else ""
        name = f"pg_lossless_{port.speed_gbps * 1000}_{port.cable_m}m{lanes}_profile"
        threshold = domain.per_port_static if static else policy.dynamic_th
        lossless_profiles[port.name] = LosslessProfile(name, headroom, threshold_field, threshold)
    profiles = list({p.name: p for p in lossless_profiles.values()}.values())
    if len(profiles) != len(set(lossless_profiles.values())):
        raise RenderError(f"{device.name}: two different lossless profiles would share a name")
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
        pool_mode="static" if static else "dynamic",
        ingress_pool_size=max(0, domain.buffer_bytes - domain.headroom_bytes),
        egress_pool_size=domain.buffer_bytes,
        threshold_field=threshold_field,
        lossy_threshold=domain.per_port_static if static else 0,
        lossless_profiles=lossless_profiles,
        profiles=profiles,
        lossy_queue_ranges=_ranges(lossy_queues),
        pfcwd=pfcwd,
        pfcwd_poll_ms=wd.polling_interval_ms,
        flex_counters=FLEX_COUNTERS,
        ecmp_hash=FIVE_TUPLE,
        rdma_hash=[*FIVE_TUPLE, "RDMA_BTH_DEST_QP"] if rdma else [],
        bgp=bgp_plan(ctx, device),
    )

