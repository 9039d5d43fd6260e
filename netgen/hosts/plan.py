"""The hosts' side of the fabric, decided from the same intent as the switches: per host class
(hosts whose NIC and NCCL settings are identical) the NIC QoS and NCCL environment, and per host
its rails (RDMA device, the RTSW port it is cabled to, its address).

The decisions, each the host half of a switch setting:
* trust DSCP, as the switches classify (qos.trust);
* the lossless DSCPs on the switches' PFC priority, PFC on that priority only;
* the CTS DSCPs on the CTS class's traffic class as priority, that priority strict (never paused);
* NCCL_IB_TC / NCCL_IB_FIFO_TC: the ToS byte (DSCP << 2, RFC 2474 / RFC 3168 layout) of the lossless
  and CTS classes' first DSCP, so NCCL's data rides the lossless queue and its clear-to-send
  messages the strict one;
* DCQCN on the NICs exactly when the switches mark ECN (qos.ecn.enabled), unless pinned;
* NCCL_IB_QPS_PER_CONNECTION from hashing.qps_per_connection (the switches hash on the BTH
  destination QP, so more QPs mean more paths).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from netgen.intent.fabric import Fabric, Zone
from netgen.intent.hosts import HCA_NAME_TEMPLATES
from netgen.topology.model import HostNic, Topology

PRIORITIES = 8  # IEEE 802.1Q priorities, the unit of PFC


def tos(dscp: int) -> int:
    """The IP ToS / traffic-class byte of a DSCP with the ECN bits clear (DSCP << 2)."""
    return dscp << 2


@dataclass(frozen=True, slots=True)
class HostQos:
    """One NIC's RoCE QoS: what the NIC must do so the switches' QoS holds end to end."""

    trust: str  # "dscp"
    dscp_priority: tuple[tuple[int, int], ...]  # (DSCP, 802.1Q priority) the NIC maps explicitly
    pfc_priority: int  # the one priority with PFC on (the switches' lossless PFC priority)
    strict_priority: int  # the CTS priority, scheduled strict on the NIC as on the switches
    traffic_class: int  # NCCL_IB_TC and the RoCE ToS of the RDMA device
    fifo_traffic_class: int  # NCCL_IB_FIFO_TC
    dcqcn: bool  # ECN reaction and notification point on the lossless priority
    mtu: int  # netdev MTU
    roce_mtu: int  # the largest RoCE payload the lossless class carries

    @property
    def pfc_flags(self) -> tuple[int, ...]:
        return tuple(int(p == self.pfc_priority) for p in range(PRIORITIES))


@dataclass(frozen=True, slots=True)
class HostClass:
    """Hosts whose NIC and NCCL settings are identical: one set of files serves them all."""

    name: str  # e.g. "connectx-8nic"
    nic: str  # NIC family
    hcas: tuple[str, ...]  # RDMA devices, rail 0 first
    qos: HostQos
    nccl: tuple[tuple[str, str], ...]  # NCCL environment, in the order it is written
    zones: tuple[int, ...]
    hosts: int


@dataclass(frozen=True, slots=True)
class Rail:
    index: int  # 0-based, the order of NCCL_IB_HCA
    hca: str
    nic: str  # the topology's NIC name (nic1 ...)
    rtsw_port: str
    ipv4: str
    gateway_ipv4: str


@dataclass(frozen=True, slots=True)
class HostEntry:
    name: str
    zone: int
    rack: int
    rtsw: str
    host_class: str
    rails: tuple[Rail, ...]


@dataclass(frozen=True, slots=True)
class HostPlan:
    classes: dict[str, HostClass]
    hosts: list[HostEntry]


def hca_names(fabric: Fabric, rails: int) -> tuple[str, ...]:
    """The RDMA devices of `rails` NICs, rail 0 first (the intent's list, else the driver's names);
    fewer listed than rails is NG705, and the missing ones are named by the driver's rule."""
    listed = fabric.hosts.hca_names or []
    template = HCA_NAME_TEMPLATES[fabric.hosts.nic]
    return tuple(listed[i] if i < len(listed) else template.format(rail=i) for i in range(rails))


def host_qos(fabric: Fabric) -> HostQos:
    qos, hosts = fabric.qos, fabric.hosts
    lossless, cts = qos.lossless, qos.cts
    pairs = [(d, lossless.pfc_priority) for d in lossless.dscp] + [(d, cts.traffic_class) for d in cts.dscp]
    pinned = hosts.nccl
    return HostQos(
        trust=qos.trust,
        dscp_priority=tuple(sorted(pairs)),
        pfc_priority=lossless.pfc_priority,
        strict_priority=cts.traffic_class,
        traffic_class=pinned.traffic_class if pinned.traffic_class is not None else tos(lossless.dscp[0]),
        fifo_traffic_class=pinned.fifo_traffic_class if pinned.fifo_traffic_class is not None else tos(cts.dscp[0]),
        dcqcn=hosts.dcqcn if hosts.dcqcn is not None else qos.ecn.enabled,
        mtu=hosts.mtu,
        roce_mtu=lossless.roce_mtu,
    )


def qps_per_connection(fabric: Fabric) -> int:
    pinned = fabric.hosts.nccl.qps_per_connection
    return pinned if pinned is not None else fabric.hashing.qps_per_connection


def nccl_environment(fabric: Fabric, hcas: Iterable[str], qos: HostQos) -> tuple[tuple[str, str], ...]:
    """NCCL's variables (NVIDIA NCCL user guide, "Environment Variables")."""
    nccl = fabric.hosts.nccl
    env = [
        # "=" : these devices exactly (no prefix match), ":1" their port 1, in rail order
        ("NCCL_IB_HCA", "=" + ",".join(f"{hca}:1" for hca in hcas)),
        ("NCCL_IB_TC", str(qos.traffic_class)),
        ("NCCL_IB_FIFO_TC", str(qos.fifo_traffic_class)),
        ("NCCL_IB_QPS_PER_CONNECTION", str(qps_per_connection(fabric))),
        ("NCCL_IB_SPLIT_DATA_ON_QPS", "1" if nccl.split_data_on_qps else "0"),
        # an ECMP fabric: no adaptive routing on the switches for NCCL to use
        ("NCCL_IB_ADAPTIVE_ROUTING", "0"),
    ]
    if nccl.gid_index is not None:
        env.append(("NCCL_IB_GID_INDEX", str(nccl.gid_index)))
    return tuple(env)


def class_name(fabric: Fabric, zone: Zone) -> str:
    return f"{fabric.hosts.nic}-{zone.nics_per_host}nic"


def plan_hosts(fabric: Fabric, topology: Topology) -> HostPlan:
    qos = host_qos(fabric)
    classes: dict[str, HostClass] = {}
    zone_class: dict[int, str] = {}
    for zone in fabric.zones:
        name = class_name(fabric, zone)
        zone_class[zone.id] = name
        known = classes.get(name)
        if known is None:
            hcas = hca_names(fabric, zone.nics_per_host)
            classes[name] = HostClass(name, fabric.hosts.nic, hcas, qos, nccl_environment(fabric, hcas, qos),
                                      (zone.id,), zone.racks * zone.hosts_per_rack)
        else:
            classes[name] = HostClass(name, known.nic, known.hcas, qos, known.nccl, (*known.zones, zone.id),
                                      known.hosts + zone.racks * zone.hosts_per_rack)
    by_host: dict[str, list[HostNic]] = {}
    for nic in topology.host_nics:
        by_host.setdefault(nic.host, []).append(nic)
    hosts = []
    for host, nics in by_host.items():
        rtsw = topology.devices[nics[0].rtsw]
        zone_id = rtsw.zone if rtsw.zone is not None else 0
        hcas = classes[zone_class[zone_id]].hcas
        rails = tuple(Rail(nic.nic - 1, hcas[nic.nic - 1], f"nic{nic.nic}", nic.port, str(nic.ipv4),
                           str(nic.gateway_ipv4)) for nic in sorted(nics, key=lambda n: n.nic))
        hosts.append(HostEntry(host, zone_id, rtsw.number, rtsw.name, zone_class[zone_id], rails))
    return HostPlan(classes, hosts)
