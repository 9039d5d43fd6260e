"""The hosts' side of the fabric, decided from the same intent as the switches: per host class
(hosts whose NIC and NCCL settings are identical) the NIC QoS and NCCL environment, and per host
its rails (RDMA device, the RTSW port it is cabled to, its address).

The decisions, each the host half of a switch setting:
* trust DSCP, as the switches classify (qos.trust);
* every DSCP 0-63 mapped explicitly to a priority, as the switches class it: the lossless DSCPs on
  the switches' PFC priority (PFC on that priority only), every other class's DSCPs on its traffic
  class as priority, the DSCPs no class lists on the default class's (a NIC's own default map would
  put DSCP 24-31 on priority 3, paused, where the switches treat all but the lossless DSCPs as lossy);
* the CTS priority strict (never paused);
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

from netgen.intent.fabric import DSCP_VALUES, Fabric, Qos, Zone
from netgen.topology.model import HostNic, Topology

PRIORITIES = 8  # IEEE 802.1Q priorities, the unit of PFC
# NCCL's config-file reader (NVIDIA/nccl src/misc/param.cc, setEnvFile) copies at most 1023 bytes of a
# name or a value (char envVar[1024], envValue[1024]); longer ones would be cut without a word.
NCCL_CONF_MAX_FIELD = 1023


def tos(dscp: int) -> int:
    """The IP ToS / traffic-class byte of a DSCP with the ECN bits clear (DSCP << 2)."""
    return dscp << 2


@dataclass(frozen=True, slots=True)
class HostQos:
    """One NIC's RoCE QoS: what the NIC must do so the switches' QoS holds end to end."""

    trust: str  # "dscp"
    dscp_priority: tuple[tuple[int, int], ...]  # (DSCP, 802.1Q priority) for every DSCP 0-63, DSCP order
    pfc_priority: int  # the one priority with PFC on (the switches' lossless PFC priority)
    strict_priority: int  # the CTS priority, scheduled strict on the NIC as on the switches
    traffic_class: int  # NCCL_IB_TC and the rdma_cm default ToS
    fifo_traffic_class: int  # NCCL_IB_FIFO_TC
    roce_dscp: int  # the DSCP of RoCE data: NCCL_IB_TC's (Thor2's roce_dscp)
    cnp_dscp: int  # the DSCP CNPs carry: the CTS class's last (48 by default; Thor2's cnp_dscp)
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
    return fabric.hosts.rdma_devices(rails)


def dscp_priorities(qos: Qos) -> tuple[tuple[int, int], ...]:
    """(DSCP, priority) for all 64 DSCPs, read from the classes: a lossless DSCP on the PFC priority,
    a CTS or lossy class's DSCP on its traffic class, any other on the default traffic class. All 64,
    because a NIC left to itself maps DSCP >> 3 (ConnectX after `mlnx_qos --trust dscp` lists priority
    3 with DSCP 24-31: NVIDIA community DOC-2792, and the sample output in att/netarbiter
    nvmf/OUTPUTSAMPLE.setup-nic-lossless-layer3.sh.md), which pauses DSCP 24-31 with the lossless class.
    A DSCP listed twice (NG302) ends where the switches put it: the last class listing it wins, as in
    the switches' DSCP_TO_TC_MAP / `qos map dscp` (netgen.platforms.features.dscp_to_tc)."""
    priority = dict.fromkeys(range(DSCP_VALUES), qos.default_traffic_class)
    for dscp in qos.lossless.dscp:
        priority[dscp] = qos.lossless.pfc_priority
    for dscp in qos.cts.dscp:
        priority[dscp] = qos.cts.traffic_class
    for lossy in qos.classes:
        for dscp in lossy.dscp:
            priority[dscp] = lossy.traffic_class
    return tuple(sorted(priority.items()))


def host_qos(fabric: Fabric) -> HostQos:
    qos, hosts = fabric.qos, fabric.hosts
    lossless, cts = qos.lossless, qos.cts
    pinned = hosts.nccl
    traffic_class = pinned.traffic_class if pinned.traffic_class is not None else tos(lossless.dscp[0])
    return HostQos(
        trust=qos.trust,
        dscp_priority=dscp_priorities(qos),
        pfc_priority=lossless.pfc_priority,
        strict_priority=cts.traffic_class,
        traffic_class=traffic_class,
        fifo_traffic_class=pinned.fifo_traffic_class if pinned.fifo_traffic_class is not None else tos(cts.dscp[0]),
        roce_dscp=traffic_class >> 2,
        # CNPs ride the strict CTS class: its last DSCP, 48 by default (NVIDIA's and Broadcom's CNP DSCP)
        cnp_dscp=cts.dscp[-1],
        dcqcn=hosts.dcqcn if hosts.dcqcn is not None else qos.ecn.enabled,
        mtu=hosts.mtu,
        roce_mtu=lossless.roce_mtu,
    )


@dataclass(frozen=True, slots=True)
class NicDscpSetting:
    """One place the NIC scripts put a DSCP on an 802.1Q priority."""

    setting: str  # what sets it, as the script writes it
    dscp: int
    priority: int


def nic_dscp_settings(fabric: Fabric) -> list[NicDscpSetting]:
    """Every DSCP-to-priority mapping `netgen hosts` writes for the fabric's NIC family: the full map
    (ConnectX: `mlnx_qos --dscp2prio` and `dcb app`; Thor2: `dcb app`) and, on Thor2, the bnxt_re
    configfs pairs, which program the NIC's DSCP table too (Broadcom bnxt_re configfs.c
    bnxt_re_init_d2p_map: roce_dscp on roce_prio, cnp_dscp on cnp_prio)."""
    qos = host_qos(fabric)
    table = "mlnx_qos --dscp2prio / dcb app dscp-prio" if fabric.hosts.nic == "connectx" else "dcb app dscp-prio"
    found = [NicDscpSetting(table, dscp, prio) for dscp, prio in qos.dscp_priority]
    if fabric.hosts.nic == "thor2":
        found += [NicDscpSetting("bnxt_re cc roce_dscp/roce_prio", qos.roce_dscp, qos.pfc_priority),
                  NicDscpSetting("bnxt_re cc cnp_dscp/cnp_prio", qos.cnp_dscp, qos.strict_priority)]
    return found


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
