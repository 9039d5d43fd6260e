"""Per-device view of an Arista EOS switch: every value its running-config carries.

Platform families are data, not branches in templates: the catalog's ASIC family selects the
architecture ("sand" = Jericho VOQ chassis, "xgs" = Trident/Tomahawk), and FAMILIES below says how
that architecture spells a queue and whether it has the sand load-balance profile. A knob a model
cannot do never reaches this view: the design checks (NG501/NG502/NG411) stop it first, and the
view only renders features the model's capability flags allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from netgen.context import DesignContext
from netgen.intent.catalog import PlatformModel, PortNaming
from netgen.platforms.features import dscp_to_tc, hashes_on_qp, runs_pfc_watchdog, tc_to_queue
from netgen.platforms.routing import BgpPlan, bgp_plan, interface_text
from netgen.platforms.services import LocalUser, ServicesPlan, local_users, services_plan
from netgen.topology.model import Device, Port, PortKind
from netgen.topology.ports import PORT_NAMERS

QOS_PROFILE = "BACKEND-ROCE"
HOST_VLAN = 1000


@dataclass(frozen=True, slots=True)
class Family:
    queue_keyword: str  # the interface / qos-profile queue sub-mode
    sand_hashing: bool  # `load-balance policies` / `load-balance sand profile default`


FAMILIES = {
    "sand": Family(queue_keyword="tx-queue", sand_hashing=True),
    "xgs": Family(queue_keyword="uc-tx-queue", sand_hashing=False),
}


@dataclass(frozen=True, slots=True)
class EosInterface:
    name: str
    description: str
    shutdown: bool
    speed: str  # "400g-4" (speed and lanes) for a breakout; "" where the cage runs its native speed
    mtu: int
    routed: bool
    ipv4: str | None
    ipv6: str | None
    access_vlan: int | None
    backend: bool  # carries the RoCE QoS profile (PFC, queues)


@dataclass(frozen=True, slots=True)
class EosQueue:
    queue: int
    strict: bool
    bandwidth_percent: int | None  # DWRR share for non-strict queues
    ecn: str | None  # the full `random-detect ecn ...` arguments, or None


@dataclass
class EosView:
    hostname: str
    family: Family
    interfaces: list[EosInterface]
    loopback_v4: str
    loopback_v6: str | None
    host_vlan: int | None
    host_gateway_v4: str | None
    host_gateway_v6: str | None
    mtu: int
    dscp_to_tc: list[tuple[int, str]]  # (traffic class, up to 8 DSCP values) per `qos map dscp` line
    tc_to_queue: list[tuple[int, int]]
    qos_profile: str
    pfc_priority: int
    pfc_watchdog: bool  # per-port watchdog in the QoS profile
    watchdog_timeout: str  # decimal seconds, as EOS takes them
    watchdog_polling: str
    watchdog_recovery: str
    watchdog_action: str
    queues: list[EosQueue]
    sand_hash_payload: str | None  # "5-7" when BTH dest-QP hashing is rendered, else None
    udp_dst_port: int
    bgp: BgpPlan
    services: ServicesPlan
    users: tuple[LocalUser, ...]  # services.users, hashes resolved
    aaa_methods: str | None  # `group tacacs+ local`: the login method list in EOS words
    snmp_view: str  # the view and group netgen's SNMPv3 users read through (all of the MIB, read-only)
    snmp_group: str
    mgmt_interface: str


DSCP_PER_LINE = 8
SNMP_VIEW, SNMP_GROUP = "netgen-all", "netgen-ro"
# intent login methods in EOS's method-list words (AVD eos/aaa-authentication.j2 examples)
EOS_LOGIN_METHODS = {"tacacs": "group tacacs+", "radius": "group radius", "local": "local"}


def _chunks(values: list[int], size: int) -> list[list[int]]:
    return [values[i:i + size] for i in range(0, len(values), size)]


def _seconds(ms: int) -> str:
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _interfaces(model: PlatformModel, used: list[Port], mtu: int) -> list[EosInterface]:
    """Used ports as the topology says, and every untouched cage shut, so `configure replace`
    leaves no unplanned port up."""
    by_cage: dict[int, list[Port]] = {}
    for port in used:
        by_cage.setdefault(port.cage, []).append(port)
    namer = PORT_NAMERS[model.port_naming]
    result: list[EosInterface] = []
    for cage in range(model.port_count):
        ports = by_cage.get(cage)
        if not ports:
            # Only shut: no forced speed or mode that could fight whatever optic sits in the cage.
            result.append(EosInterface(namer(model, cage, 0), "spare", True, "", mtu, False,
                                       None, None, None, False))
            continue
        for port in sorted(ports, key=lambda p: p.lane_offset):
            host = port.kind is PortKind.HOST
            result.append(EosInterface(
                name=port.name,
                description=f"{port.peer_device}:{port.peer_port}",
                shutdown=False,
                speed="" if port.speed_gbps == model.port_speed else f"{port.speed_gbps}g-{port.lanes}",
                mtu=mtu,
                routed=not host,
                ipv4=interface_text(port.ipv4) if port.ipv4 else None,
                ipv6=interface_text(port.ipv6) if port.ipv6 else None,
                access_vlan=HOST_VLAN if host else None,
                backend=True,
            ))
    return result


def build_view(ctx: DesignContext, device: Device) -> EosView:
    fabric = ctx.fabric
    model = ctx.model(device)
    qos = fabric.qos
    used = ctx.topology.ports[device.name]
    family = FAMILIES[model.architecture]

    by_tc: dict[int, list[int]] = {}
    for dscp, tc in dscp_to_tc(fabric).items():
        by_tc.setdefault(tc, []).append(dscp)
    # A few values per line, as Arista's own examples write them; EOS's per-line limit is undocumented.
    dscp_lines = [(tc, " ".join(str(d) for d in chunk))
                  for tc, values in sorted(by_tc.items()) for chunk in _chunks(values, DSCP_PER_LINE)]

    ecn = qos.ecn
    # kbytes when both thresholds are whole kilobytes, else exact bytes: never round a threshold.
    kilo = ecn.min_threshold % 1000 == 0 and ecn.max_threshold % 1000 == 0
    scale, unit = (1000, "kbytes") if kilo else (1, "bytes")
    ecn_line = (f"minimum-threshold {ecn.min_threshold // scale} {unit} maximum-threshold"
                f" {ecn.max_threshold // scale} {unit} max-mark-probability {ecn.max_mark_probability}")
    queues = [EosQueue(qos.cts.queue, True, None, None),
              EosQueue(qos.lossless.queue, False, qos.lossless.weight,
                       ecn_line if ecn.enabled and model.capabilities.ecn else None)]
    queues += [EosQueue(c.queue, False, c.weight, None) for c in qos.classes]
    queues.sort(key=lambda q: q.queue)

    wd = qos.pfc_watchdog
    watchdog = runs_pfc_watchdog(fabric, model, device)
    hashing = fabric.hashing
    qp_hash = hashes_on_qp(fabric, model) and family.sand_hashing
    payload = hashing.payload_bytes
    host_ports = any(p.kind is PortKind.HOST for p in used)
    services = services_plan(ctx, device)
    return EosView(
        hostname=device.name,
        family=family,
        interfaces=_interfaces(model, used, fabric.mtu),
        loopback_v4=str(device.loopback_ipv4),
        loopback_v6=str(device.loopback_ipv6) if device.loopback_ipv6 else None,
        host_vlan=HOST_VLAN if host_ports else None,
        host_gateway_v4=str(device.host_gateway_ipv4) if device.host_gateway_ipv4 else None,
        host_gateway_v6=str(device.host_gateway_ipv6) if device.host_gateway_ipv6 else None,
        mtu=fabric.mtu,
        dscp_to_tc=dscp_lines,
        tc_to_queue=sorted(tc_to_queue(fabric).items()),
        qos_profile=QOS_PROFILE,
        pfc_priority=qos.lossless.pfc_priority,
        pfc_watchdog=watchdog,
        watchdog_timeout=_seconds(wd.detection_time_ms),
        watchdog_polling=_seconds(wd.polling_interval_ms),
        watchdog_recovery=_seconds(wd.restoration_time_ms),
        watchdog_action=wd.action,  # NG505 lets only `drop` through on EOS
        queues=queues,
        sand_hash_payload=f"{payload.first}-{payload.last}" if qp_hash else None,
        udp_dst_port=hashing.udp_dst_port,
        bgp=bgp_plan(ctx, device),
        services=services,
        users=local_users(ctx),
        snmp_view=SNMP_VIEW,
        snmp_group=SNMP_GROUP,
        aaa_methods=" ".join(EOS_LOGIN_METHODS[m] for m in services.aaa.login) if services.aaa else None,
        mgmt_interface=management_interface(model),
    )


def management_interface(model: PlatformModel) -> str:
    """Management0 on a modular chassis: the virtual interface that follows the active supervisor
    (Arista TOI "ManagementActive interface", EOS 4.22.0F); Management1 on fixed switches (AVD's
    default mgmt_interface)."""
    return "Management0" if model.port_naming is PortNaming.EOS_MODULAR else "Management1"
