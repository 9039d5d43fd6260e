"""The files of the InfiniBand alternative, built from the expanded fat tree (netgen.topology.infiniband):

  opensm/opensm.conf      OpenSM's options: ftree with netgen's GUID files, partitions, SM priority
  opensm/root_guids       the fat tree's roots (the core; the spines if there is no core), one GUID a line
  opensm/cn_guids         every HCA port (compute nodes), one GUID a line
  opensm/partitions.conf  the default partition and one per tenant
  opensm/node-name-map    switch GUID -> name, for the diagnostics (--node-name-map)
  hosts/nccl-ib.env       NCCL on InfiniBand: the HCAs in rail order, the service level
  cabling/cables.csv      one row per cable, both ends and length
  ibsim/net               the fabric as an ibsim net file (the lab: OpenSM and infiniband-diags run on it)

Formats and option names: docs/developer/infiniband-sources.md. Every name written here is a
SafeName-built device or host name (no quote, space only between a host and its device, no newline),
so no value can break a line of any of these formats.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from netgen.infiniband.discovered import DiscoveredFabric, GuidMatch, match_plan
from netgen.intent.fabric import Fabric
from netgen.intent.infiniband import DEFAULT_PKEY
from netgen.rendered import RenderedFile
from netgen.topology.infiniband import IbCable, IbFabric, IbTier

OPENSM_DIR = "/etc/opensm"  # where opensm.conf says the other files are (opensm's own default directory)
OPENSM = "opensm"
HOSTS = "hosts"
CABLING = "cabling"
IBSIM = "ibsim"


@dataclass(frozen=True, slots=True)
class IbFiles:
    """What `netgen infiniband` writes, by directory (the output directory's layout), and the fat tree."""

    files: dict[str, list[RenderedFile]]
    ib: IbFabric
    matched: GuidMatch | None = None  # the installed fabric's GUIDs, when they were given

    @property
    def count(self) -> int:
        return sum(len(files) for files in self.files.values())


def guid_text(guid: int) -> str:
    return f"0x{guid:016x}"


def _lines(lines: Iterable[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def roots(ib: IbFabric) -> list[int]:
    """The fat tree's roots for ftree (opensm -a): the core, or the spines of a fabric without one."""
    tier = IbTier.CORE if ib.cores else IbTier.SPINE
    return [s.guid for s in ib.tier(tier)]


def opensm_conf(fabric: Fabric, opensm_dir: str) -> str:
    ib = fabric.infiniband
    if ib is None:
        raise ValueError("the fabric has no infiniband: section")
    sm = ib.subnet_manager
    # keys as `opensm -c` writes them (OpenSM 3.3.23; infiniband-sources.md §3; test_ib_plan checks each)
    settings: list[tuple[str, str]] = [
        ("routing_engine", sm.routing_engine),
        ("root_guid_file", f"{opensm_dir}/root_guids"),
        ("cn_guid_file", f"{opensm_dir}/cn_guids"),
        ("partition_config_file", f"{opensm_dir}/partitions.conf"),
        ("part_enforce", sm.partition_enforcement),
        ("sm_priority", str(sm.priority)),
        ("node_name_map_name", f"{opensm_dir}/node-name-map"),
        # one service level for all of NCCL's traffic (NCCL_IB_SL): no QoS policy to program
        ("qos", "FALSE"),
    ]
    header = [f"# OpenSM options for {fabric.name}, written by netgen: `opensm -F {opensm_dir}/opensm.conf`.",
              "# Keys as `opensm -c` writes them (OpenSM 3.3.23)."]
    return _lines([*header, *(f"{key} {value}" for key, value in settings)])


def partitions_conf(fabric: Fabric, ib_fabric: IbFabric) -> str:
    """OpenSM's partition file: the default partition with every port a full member when there are no
    tenants; with tenants, hosts are limited members of the default partition (they reach the SM,
    not each other) and full members of their tenant's."""
    ib = fabric.infiniband
    if ib is None:
        raise ValueError("the fabric has no infiniband: section")
    # Syntax: opensm(8) "PARTITION CONFIGURATION" (infiniband-sources.md §5): `Name=PKey[,ipoib] : members ;`,
    # members by port GUID `=full`; SELF is the SM's own port; OpenSM adds the full-member bit 0x8000 itself.
    lines = [f"# Partitions of {fabric.name}, written by netgen (OpenSM partition config file)."]
    if not ib.partitions:
        lines.append(f"Default=0x{DEFAULT_PKEY:04x}, ipoib : ALL=full ;")
        return _lines(lines)
    lines.append(f"Default=0x{DEFAULT_PKEY:04x}, ipoib : ALL=limited, SELF=full ;")
    for partition in ib.partitions:
        zones = set(partition.zones)
        members = [guid_text(h.port_guid) for h in ib_fabric.hcas if h.zone in zones]
        flags = ", ipoib" if partition.ipoib else ""
        lines.append(f"{partition.name}=0x{partition.pkey:04x}{flags} : SELF=full,")
        lines.extend(f"  {guid}=full{',' if i < len(members) - 1 else ' ;'}" for i, guid in enumerate(members))
    return _lines(lines)


def node_name_map(ib: IbFabric) -> str:
    lines = ["# GUID -> name for infiniband-diags (--node-name-map), written by netgen."]
    lines.extend(f'{guid_text(s.guid)} "{s.name}"' for s in ib.switches.values())
    return _lines(lines)


def nccl_envs(fabric: Fabric) -> list[RenderedFile]:
    """NCCL's settings per distinct NIC count: `nccl-ib.env` when every zone's hosts have the same rails
    (the usual case), else `nccl-ib-<N>rails.env` for each count."""
    counts = sorted({zone.nics_per_host for zone in fabric.zones})
    if len(counts) == 1:
        return [RenderedFile("nccl-ib.env", nccl_env(fabric, counts[0]))]
    return [RenderedFile(f"nccl-ib-{n}rails.env", nccl_env(fabric, n)) for n in counts]


def nccl_env(fabric: Fabric, rails: int) -> str:
    ib = fabric.infiniband
    if ib is None:
        raise ValueError("the fabric has no infiniband: section")
    devices = fabric.hosts.rdma_devices(rails)
    settings = [
        # "=": exactly these devices (a bare mlx5_1 is a prefix that also takes mlx5_10..), ":1" their port 1,
        # in rail order (NCCL env.rst NCCL_IB_HCA; infiniband-sources.md §9)
        ("NCCL_IB_HCA", "=" + ",".join(f"{d}:1" for d in devices)),
        # the service level of every QP NCCL opens, data and clear-to-send alike (NCCL_IB_SL, default 0, §9);
        # NCCL_IB_ADAPTIVE_ROUTING keeps NCCL's default (on for InfiniBand ports)
        ("NCCL_IB_SL", str(ib.service_level)),
    ]
    header = [f"# NCCL on the InfiniBand fabric of {fabric.name}, written by netgen. No NCCL_IB_TC,"
              " NCCL_IB_FIFO_TC or NCCL_IB_GID_INDEX:", "# those are RoCE's (a traffic class in the IP header)."]
    return _lines([*header, *(f"{key}={value}" for key, value in settings)])


def _cable_row(cable: IbCable) -> list[str]:
    return [cable.tier.value, cable.lower, str(cable.lower_port), cable.upper, str(cable.upper_port),
            str(cable.cable_m)]


def cables_csv(ib: IbFabric) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["tier", "a_node", "a_port", "b_node", "b_port", "length_m"])
    writer.writerows(_cable_row(c) for c in ib.cables)
    return buffer.getvalue()


def ibsim_net(ib: IbFabric) -> str:
    """The fabric as ibsim reads it (ibnetdiscover's record format: a header per node, a line per
    connected port, both ends of every cable). The first record is the first root switch: its port 0
    is where OpenSM runs in the lab, as on a managed switch. Every node's GUID is set before its record
    (`switchguid=` / `caguid=`, linux-rdma/ibsim sim_net.c parse_guidbase)."""
    peers: dict[str, list[tuple[int, str, int]]] = {}
    for cable in ib.cables:
        peers.setdefault(cable.lower, []).append((cable.lower_port, cable.upper, cable.upper_port))
        peers.setdefault(cable.upper, []).append((cable.upper_port, cable.lower, cable.lower_port))
    first = roots(ib)[0]
    order = sorted(ib.switches.values(), key=lambda s: s.guid != first)  # stable: the rest keep their order
    lines = [f"# {ib.fabric}: InfiniBand fat tree for ibsim, written by netgen", ""]
    for switch in order:
        lines.append(f"switchguid={guid_text(switch.guid)}")
        lines.append(f'Switch {switch.ports} "{switch.name}"')
        lines.extend(f'[{port}] "{peer}"[{peer_port}]' for port, peer, peer_port in sorted(peers.get(switch.name, [])))
        lines.append("")
    for hca in ib.hcas:
        lines.append(f"caguid={guid_text(hca.guid)}")
        lines.append(f'Hca 1 "{hca.node}"')
        lines.extend(f'[{port}] "{peer}"[{peer_port}]' for port, peer, peer_port in peers.get(hca.node, []))
        lines.append("")
    return _lines(lines)


def render_infiniband(fabric: Fabric, ib: IbFabric, opensm_dir: str = OPENSM_DIR) -> IbFiles:
    """Every file of the InfiniBand alternative, by output directory."""
    return IbFiles({
        OPENSM: [
            RenderedFile("opensm.conf", opensm_conf(fabric, opensm_dir)),
            RenderedFile("root_guids", _lines(guid_text(g) for g in roots(ib))),
            RenderedFile("cn_guids", _lines(guid_text(h.port_guid) for h in ib.hcas)),
            RenderedFile("partitions.conf", partitions_conf(fabric, ib)),
            RenderedFile("node-name-map", node_name_map(ib)),
        ],
        HOSTS: nccl_envs(fabric),
        CABLING: [RenderedFile("cables.csv", cables_csv(ib))],
        IBSIM: [RenderedFile("net", ibsim_net(ib))],
    }, ib)


OPENSM_DIR_PATTERN = re.compile(r"/[A-Za-z0-9_./-]{0,200}")


class IbInputError(ValueError):
    """A request `netgen infiniband` cannot serve (no section, an unusable directory): exit 2."""


class IbMismatch(Exception):
    """The installed fabric (ibnetdiscover) is not cabled as planned: no file is written (exit 1)."""

    def __init__(self, matched: GuidMatch) -> None:
        super().__init__(f"{len(matched.problems)} difference(s) between the installed fabric and the plan")
        self.matched = matched


def summary(ib: IbFabric) -> dict[str, Any]:
    """What the fat tree is, as data: switches per tier, cables per tier, sizing per zone."""
    tiers = Counter(s.tier.value for s in ib.switches.values())
    cables = Counter(c.tier.value for c in ib.cables)
    return {
        "switch_model": ib.switch_model, "link_speed_gbps": ib.link_speed_gbps,
        "switches": {tier.value: tiers.get(tier.value, 0) for tier in IbTier}, "hcas": len(ib.hcas),
        "cables": dict(sorted(cables.items())), "cores": ib.cores, "core_links_per_group": ib.core_links_per_group,
        "zones": [asdict(s) | {"groups": s.groups, "leaves": s.leaves, "spines": s.spines} for s in ib.sizing],
    }


def build(fabric: Fabric, ib: IbFabric | None, opensm_dir: str = OPENSM_DIR,
          discovered: DiscoveredFabric | None = None) -> IbFiles:
    """`netgen infiniband`: the files of a checked fabric's InfiniBand alternative. IbInputError when the
    fabric has none or the OpenSM directory cannot be written into opensm.conf as it is. With the
    installed fabric's ibnetdiscover output, the files carry its GUIDs (IbMismatch when it is not cabled
    as planned)."""
    if ib is None or fabric.infiniband is None:
        raise IbInputError("the fabric has no infiniband: section (see docs/how-to/infiniband-alternative.md)")
    if OPENSM_DIR_PATTERN.fullmatch(opensm_dir) is None:
        raise IbInputError(f"--opensm-dir must be an absolute path of letters, digits and _ . / - (at most 200),"
                           f" not {opensm_dir[:80]!r}")
    matched = None
    if discovered is not None:
        matched = match_plan(ib, discovered)
        if matched.problems:
            raise IbMismatch(matched)
        ib = ib.with_guids(matched.node_guids, matched.port_guids)
    files = render_infiniband(fabric, ib, opensm_dir.rstrip("/") or "/")
    return IbFiles(files.files, ib, matched)
