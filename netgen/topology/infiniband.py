"""The InfiniBand alternative of a fabric, expanded: a rail-optimised fat tree for the same hosts.

Sizing (docs/explanation/infiniband-alternative.md gives the reasoning and the worked figures):
  leaf    one per rail per group of `h` hosts of a zone (host k's NIC n is on rail n's leaf); h host
          ports down and h uplinks (non-blocking), h = hosts_per_leaf or half the radix (fewer if the
          zone has fewer hosts).
  spine   a zone's rails are split into spine groups of g rails; each leaf of a group has k links to
          every one of the group's S spines (S x k = h). A spine has D = g x leaves-per-rail x k ports
          down and U = D x (up:down) up to the core, the same cross-zone ratio as the RoCE fabric's CTSW.
  core    every core has the same number of links (m) to every spine group: C = S x U / m cores, at
          least two; none when the fabric is a single spine group.
(g, S) is chosen for the fewest switches with D + U within the radix and at least two spines per group,
preferring wider groups (more rails non-blocking to each other inside a zone). Everything is a function
of the zone's own counts, so a rack or a zone more only adds leaves, HCAs and cables.

GUIDs are netgen's planned ones, positional like every address here: 0x024e47 (a locally administered
EUI-64 prefix) | kind | position | port nibble. A switch's port GUID is its node GUID; an HCA port's
is node GUID + port number, as ibsim assigns them (linux-rdma/ibsim sim_net.c, init_ports). Real
hardware has its own GUIDs; the lab and the OpenSM files read from here use these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction

from netgen.intent.catalog import Catalog, InfinibandSwitchModel
from netgen.intent.fabric import Fabric, Zone
from netgen.intent.infiniband import Infiniband
from netgen.topology.expand import host_name

GUID_PREFIX = 0x024E47  # locally administered (U/L bit set): never a vendor's OUI
MIN_REDUNDANT = 2  # spines per group and cores: no single switch between two halves of the fabric


class IbTier(StrEnum):
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"


class IbCableTier(StrEnum):
    HOST_LEAF = "host-leaf"
    LEAF_SPINE = "leaf-spine"
    SPINE_CORE = "spine-core"


_TIER_CODE = {IbTier.LEAF: 1, IbTier.SPINE: 2, IbTier.CORE: 3}


def switch_guid(tier: IbTier, zone: int, lane: int, number: int) -> int:
    """`lane`: a leaf's rail, a spine's group, 0 for the core (each below 64; `number` below 16384)."""
    position = (_TIER_CODE[tier] << 28) | (zone << 20) | (lane << 14) | number
    return (GUID_PREFIX << 40) | (1 << 36) | (position << 4)


def hca_guid(zone: int, rack: int, host: int, nic: int) -> int:
    position = (zone << 24) | (rack << 12) | (host << 6) | nic
    return (GUID_PREFIX << 40) | (2 << 36) | (position << 4)


@dataclass(frozen=True, slots=True)
class IbSwitch:
    name: str
    tier: IbTier
    zone: int | None  # None for the core
    group: int | None  # spine group in the zone (leaf, spine), 1-based
    rails: tuple[int, ...]  # rails it carries (leaf: one; spine: its group's; core: all)
    number: int  # 1-based within its rail (leaf), group (spine) or the core
    model: str
    ports: int  # radix
    guid: int


@dataclass(frozen=True, slots=True)
class IbHca:
    """One single-port HCA: a host's NIC on the InfiniBand fabric."""

    host: str
    zone: int
    rack: int
    nic: int  # 1-based; also its rail
    device: str  # RDMA device name (mlx5_0 for NIC 1)
    guid: int  # node GUID
    port_guid: int  # port 1's GUID: planned, guid + 1 (as ibsim numbers ports); or the installed HCA's

    @property
    def node(self) -> str:
        """Node description as rdma-core's rdma-ndd sets it: '<hostname> <device>'."""
        return f"{self.host} {self.device}"


@dataclass(frozen=True, slots=True)
class IbCable:
    """One cable, lower end first: (HCA node, port 1) or a switch and its port number (1-based)."""

    tier: IbCableTier
    lower: str
    lower_port: int
    upper: str
    upper_port: int
    cable_m: int

    @property
    def key(self) -> str:
        return f"{self.lower}[{self.lower_port}]--{self.upper}[{self.upper_port}]"


@dataclass(frozen=True, slots=True)
class ZoneSizing:
    """How one zone is built (docs/explanation/infiniband-alternative.md)."""

    zone: int
    hosts: int
    rails: int
    hosts_per_leaf: int
    leaves_per_rail: int
    rails_per_group: int
    spines_per_group: int
    links_leaf_spine: int  # k: links from one leaf to one spine of its group
    spine_down: int  # D
    spine_up: int  # U

    @property
    def groups(self) -> int:
        return self.rails // self.rails_per_group

    @property
    def leaves(self) -> int:
        return self.rails * self.leaves_per_rail

    @property
    def spines(self) -> int:
        return self.groups * self.spines_per_group


@dataclass
class IbFabric:
    fabric: str
    switch_model: str
    link_speed_gbps: int
    sizing: list[ZoneSizing] = field(default_factory=list)
    cores: int = 0
    core_links_per_group: int = 0  # m
    switches: dict[str, IbSwitch] = field(default_factory=dict)  # leaves and spines per zone, then cores
    hcas: list[IbHca] = field(default_factory=list)
    cables: list[IbCable] = field(default_factory=list)

    def tier(self, tier: IbTier) -> list[IbSwitch]:
        return [s for s in self.switches.values() if s.tier is tier]

    def with_guids(self, node_guids: dict[str, int], port_guids: dict[str, int]) -> IbFabric:
        """The same fabric with the installed hardware's GUIDs (netgen.infiniband.discovered) in place of
        the planned ones, for every node named in the maps."""
        switches = {name: replace(s, guid=node_guids.get(name, s.guid)) for name, s in self.switches.items()}
        hcas = [replace(h, guid=node_guids.get(h.node, h.guid), port_guid=port_guids.get(h.node, h.port_guid))
                for h in self.hcas]
        return IbFabric(self.fabric, self.switch_model, self.link_speed_gbps, self.sizing, self.cores,
                        self.core_links_per_group, switches, hcas, self.cables)

    def slice(self, zones: set[int], racks: int | None = None) -> IbFabric:
        """The part a lab runs: the hosts of these zones (their first `racks` racks), the leaves they
        use, their zones' spines and the whole core; cables with both ends kept. Sizing is the whole
        fabric's, so every kept port and GUID is the one the whole fabric has."""
        hcas = [h for h in self.hcas if h.zone in zones and (racks is None or h.rack <= racks)]
        nodes = {h.node for h in hcas}
        leaves = {c.upper for c in self.cables if c.tier is IbCableTier.HOST_LEAF and c.lower in nodes}
        switches = {name: s for name, s in self.switches.items()
                    if name in leaves or (s.tier is IbTier.SPINE and s.zone in zones) or s.tier is IbTier.CORE}
        nodes.update(switches)
        cables = [c for c in self.cables if c.lower in nodes and c.upper in nodes]
        return IbFabric(self.fabric, self.switch_model, self.link_speed_gbps,
                        [s for s in self.sizing if s.zone in zones], self.cores, self.core_links_per_group,
                        switches, hcas, cables)


class IbSizingError(ValueError):
    """The section asks for what the switch model cannot build; the message says what and how to fix it."""


def leaf_name(fabric: Fabric, zone: int, rail: int, number: int) -> str:
    return f"{fabric.hostname_prefix}z{zone:02d}-r{rail}-leaf{number:02d}"


def spine_name(fabric: Fabric, zone: int, group: int, number: int) -> str:
    return f"{fabric.hostname_prefix}z{zone:02d}-g{group}-spine{number:02d}"


def core_name(fabric: Fabric, number: int) -> str:
    return f"{fabric.hostname_prefix}ibcore{number:02d}"


def uplink_share(fabric: Fabric, ib: Infiniband, zone: Zone) -> Fraction:
    """Spine uplink bandwidth per unit of downlink bandwidth: the given ratio, else the RoCE CTSW's."""
    if ib.core_oversubscription is not None:
        ratio = ib.core_oversubscription
        return Fraction(str(ratio.up)) / Fraction(str(ratio.down))
    agg = fabric.aggregation
    if agg is None:
        return Fraction(1)
    return Fraction(agg.ctsw_uplink_gbps, zone.ctsw_downlink_gbps)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _ceil(value: Fraction) -> int:
    return -(-value.numerator // value.denominator)


def size_zone(fabric: Fabric, ib: Infiniband, model: InfinibandSwitchModel, zone: Zone,
              needs_core: bool) -> ZoneSizing:
    """The zone's leaves and spines (module docstring). IbSizingError when nothing fits the radix."""
    radix = model.ports
    hosts = zone.racks * zone.hosts_per_rack
    rails = zone.nics_per_host
    if ib.hosts_per_leaf is not None:
        per_leaf = ib.hosts_per_leaf
        if 2 * per_leaf > radix:
            raise IbSizingError(
                f"zone {zone.id}: hosts_per_leaf {per_leaf} needs {2 * per_leaf} ports for a non-blocking leaf;"
                f" {ib.switch_model} has {radix}: at most {radix // 2}")
    else:
        per_leaf = min(radix // 2, hosts)
    leaves_per_rail = -(-hosts // per_leaf)
    share = uplink_share(fabric, ib, zone) if needs_core else Fraction(0)
    best: tuple[tuple[int, int], ZoneSizing] | None = None
    spine_choices = [ib.spines_per_group] if ib.spines_per_group is not None else _divisors(per_leaf)
    if ib.rails_per_group is not None and rails % ib.rails_per_group:
        raise IbSizingError(f"zone {zone.id}: rails_per_group {ib.rails_per_group} does not divide its {rails} rails")
    group_choices = [ib.rails_per_group] if ib.rails_per_group is not None else _divisors(rails)
    for group_rails in group_choices:
        for spines in spine_choices:
            if per_leaf % spines or (spines < MIN_REDUNDANT <= per_leaf and ib.spines_per_group is None):
                continue
            links = per_leaf // spines
            down = group_rails * leaves_per_rail * links
            up = _ceil(down * share)
            if down + up > radix:
                continue
            sizing = ZoneSizing(zone.id, hosts, rails, per_leaf, leaves_per_rail, group_rails, spines, links, down, up)
            # fewest spines (cores follow from them), then the widest group
            rank = (sizing.spines, -group_rails)
            if best is None or rank < best[0]:
                best = (rank, sizing)
    if best is None:
        given = f"spines_per_group {ib.spines_per_group}" if ib.spines_per_group is not None else "any spine count"
        raise IbSizingError(
            f"zone {zone.id}: with {per_leaf} hosts per leaf and {leaves_per_rail} leaves per rail, {given} gives"
            f" spines more than {radix} ports ({ib.switch_model}); lower hosts_per_leaf, or set spines_per_group"
            f" to a divisor of {per_leaf}")
    return best[1]


def _core_layout(sizing: list[ZoneSizing], radix: int) -> tuple[int, int]:
    """(cores, links from each core to each spine group). Every group gives the core the same number of
    uplinks (S x U) when the zones are alike; m is the most links per group a core can take with a port
    for every group, keeping at least two cores."""
    groups = sum(s.groups for s in sizing)
    uplinks = max(s.spines_per_group * s.spine_up for s in sizing)
    if groups <= 1 or uplinks == 0:
        return 0, 0
    if groups > radix:
        raise IbSizingError(
            f"{groups} spine groups need a core port each; the core switch has {radix}: a larger core (a fourth"
            " tier) is not modelled: raise hosts_per_leaf or use fewer, larger zones")
    fits = [m for m in _divisors(uplinks) if m * groups <= radix and uplinks // m >= min(MIN_REDUNDANT, uplinks)]
    per_group = max(fits)
    return uplinks // per_group, per_group


@dataclass(frozen=True, slots=True)
class IbSizing:
    """The fat tree's numbers, without its switches and cables: what the design checks read."""

    sizing: list[ZoneSizing]
    cores: int
    core_links_per_group: int


def size_infiniband(fabric: Fabric, catalog: Catalog) -> IbSizing:
    """The sizing of the fabric's `infiniband:` section (which must be set); IbSizingError when it does not
    fit the switch model."""
    ib = fabric.infiniband
    if ib is None:
        raise IbSizingError("the fabric has no infiniband: section")
    model = catalog.infiniband_switches[ib.switch_model]
    needs_core = len(fabric.zones) > 1 or fabric.zones[0].nics_per_host > 1  # else a single spine group
    sizing = [size_zone(fabric, ib, model, zone, needs_core) for zone in fabric.zones]
    if sum(s.groups for s in sizing) == 1:  # one zone whose spines take every rail: no core
        sizing = [size_zone(fabric, ib, model, zone, False) for zone in fabric.zones]
    cores, per_group = _core_layout(sizing, model.ports)
    return IbSizing(sizing, cores, per_group)


def plan_infiniband(fabric: Fabric, catalog: Catalog, sized: IbSizing | None = None) -> IbFabric:
    """The InfiniBand fat tree of the fabric's `infiniband:` section: its switches, HCAs and cables."""
    sized = sized or size_infiniband(fabric, catalog)
    ib = fabric.infiniband
    if ib is None:
        raise IbSizingError("the fabric has no infiniband: section")
    model = catalog.infiniband_switches[ib.switch_model]
    result = IbFabric(fabric=fabric.name, switch_model=ib.switch_model, link_speed_gbps=ib.link_speed,
                      sizing=sized.sizing, cores=sized.cores, core_links_per_group=sized.core_links_per_group)
    _Builder(fabric, ib, model, result).build()
    return result


class _Builder:
    def __init__(self, fabric: Fabric, ib: Infiniband, model: InfinibandSwitchModel, result: IbFabric) -> None:
        self.fabric, self.ib, self.model, self.result = fabric, ib, model, result
        cables = ib.cable_length_m
        self.host_m = cables.host_m
        self.leaf_spine_m = cables.leaf_spine_m
        agg = fabric.aggregation
        self.spine_core_m = cables.spine_core_m if cables.spine_core_m is not None else (
            agg.cable_length_m if agg is not None else 500)

    def switch(self, name: str, tier: IbTier, zone: int | None, group: int | None, rails: tuple[int, ...],
               number: int) -> None:
        lane = rails[0] if tier is IbTier.LEAF else group or 0
        guid = switch_guid(tier, zone or 0, lane, number)
        self.result.switches[name] = IbSwitch(name, tier, zone, group, rails, number, self.ib.switch_model,
                                              self.model.ports, guid)

    def build(self) -> None:
        core_ports: list[tuple[int, int, str, int]] = []  # (zone, group, spine, spine port)
        zones = {zone.id: zone for zone in self.fabric.zones}
        for sizing in self.result.sizing:
            core_ports.extend(self.zone(zones[sizing.zone], sizing))
        self.core(core_ports)

    def zone(self, zone: Zone, s: ZoneSizing) -> list[tuple[int, int, str, int]]:
        fabric, z = self.fabric, zone.id
        host_m = self.host_m if self.host_m is not None else zone.cable_length_m.rtsw_ctsw_m
        leaf_spine_m = self.leaf_spine_m if self.leaf_spine_m is not None else zone.cable_length_m.rtsw_ctsw_m
        uplinks: list[tuple[int, int, str, int]] = []
        for group in range(1, s.groups + 1):
            rails = tuple(range((group - 1) * s.rails_per_group + 1, group * s.rails_per_group + 1))
            for rail in rails:
                for leaf in range(1, s.leaves_per_rail + 1):
                    self.switch(leaf_name(fabric, z, rail, leaf), IbTier.LEAF, z, group, (rail,), leaf)
            for spine in range(1, s.spines_per_group + 1):
                self.switch(spine_name(fabric, z, group, spine), IbTier.SPINE, z, group, rails, spine)
            # leaf ports: 1..h hosts, h+1.. uplinks (spine by spine, k each); spine ports: 1..D leaves, D+1.. core
            for position, (rail, leaf) in enumerate((r, n) for r in rails for n in range(1, s.leaves_per_rail + 1)):
                lname = leaf_name(fabric, z, rail, leaf)
                for spine in range(1, s.spines_per_group + 1):
                    for link in range(s.links_leaf_spine):
                        self.result.cables.append(IbCable(
                            IbCableTier.LEAF_SPINE, lname,
                            s.hosts_per_leaf + 1 + (spine - 1) * s.links_leaf_spine + link,
                            spine_name(fabric, z, group, spine), position * s.links_leaf_spine + link + 1,
                            leaf_spine_m))
            for spine in range(1, s.spines_per_group + 1):
                for up in range(s.spine_up):
                    uplinks.append((z, group, spine_name(fabric, z, group, spine), s.spine_down + up + 1))
        devices = fabric.hosts.rdma_devices(s.rails)  # as `netgen hosts` names them for NCCL_IB_HCA
        for index in range(s.hosts):
            rack, host = divmod(index, zone.hosts_per_rack)
            leaf, port = divmod(index, s.hosts_per_leaf)
            name = host_name(fabric, z, rack + 1, host + 1)
            for nic in range(1, s.rails + 1):
                guid = hca_guid(z, rack + 1, host + 1, nic)
                hca = IbHca(name, z, rack + 1, nic, devices[nic - 1], guid, guid + 1)
                self.result.hcas.append(hca)
                self.result.cables.append(IbCable(IbCableTier.HOST_LEAF, hca.node, 1,
                                                  leaf_name(fabric, z, nic, leaf + 1), port + 1, host_m))
        return uplinks

    def core(self, uplinks: list[tuple[int, int, str, int]]) -> None:
        cores, per_group = self.result.cores, self.result.core_links_per_group
        if cores == 0:
            return
        all_rails = tuple(sorted({r for s in self.result.sizing for r in range(1, s.rails + 1)}))
        for number in range(1, cores + 1):
            self.switch(core_name(self.fabric, number), IbTier.CORE, None, None, all_rails, number)
        # a group's uplink j goes to core j mod C; a core's ports: m per group, groups in fabric order
        group_index: dict[tuple[int, int], int] = {}
        taken: dict[tuple[int, int], int] = {}  # (group index, core) -> its links so far
        given: dict[int, int] = {}  # group index -> its uplinks so far
        for zone, group, spine, spine_port in uplinks:
            g = group_index.setdefault((zone, group), len(group_index))
            core = given.get(g, 0) % cores
            given[g] = given.get(g, 0) + 1
            nth = taken.get((g, core), 0)
            taken[(g, core)] = nth + 1
            self.result.cables.append(IbCable(IbCableTier.SPINE_CORE, spine, spine_port,
                                              core_name(self.fabric, core + 1), g * per_group + nth + 1,
                                              self.spine_core_m))

__all__ = ["IbCable", "IbCableTier", "IbFabric", "IbHca", "IbSizing", "IbSizingError", "IbSwitch", "IbTier",
           "ZoneSizing", "plan_infiniband", "size_infiniband"]
