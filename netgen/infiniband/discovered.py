"""An installed InfiniBand fabric as `ibnetdiscover` prints it, matched against netgen's plan.

Real switches and HCAs carry burnt-in GUIDs, and OpenSM's fat-tree files need exactly those. netgen finds
each planned node in the discovered fabric by its place, not by trusting names: an HCA by its node
description (rdma-ndd's default `<hostname> <device>`, the names netgen plans), a leaf as the switch its
HCAs are cabled to, a spine as the switch on the other end of a leaf's uplink, a core likewise above a
spine. Every planned cable is then checked end to end (switch and port); any difference (a node missing,
a cable on another port or switch, a switch found in two places) is a problem naming both ends, and no
GUID file is written from a fabric that differs from the plan.

The file is input netgen did not write: it is read bounded, line by line; a line that is not one of
ibnetdiscover's record forms is ignored, and descriptions are only compared, never written out as read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from netgen.topology.infiniband import IbCable, IbCableTier, IbFabric, IbTier

MAX_DISCOVERED_BYTES = 256 * 1024 * 1024  # meta-24k's whole fabric prints about 15 MB
MAX_PROBLEMS = 200

Port = tuple[str, int]  # (node id as ibnetdiscover names it, e.g. S-0002c903..., port number)


class DiscoveredError(ValueError):
    """The file cannot be read as ibnetdiscover output (exit 2, naming the file)."""


@dataclass
class DiscoveredNode:
    node_id: str  # "S-<guid>" or "H-<guid>"
    kind: str  # "Switch" or "Ca"
    description: str
    guid: int
    port_guids: dict[int, int] = field(default_factory=dict)  # CA ports; a switch's ports share its GUID


@dataclass
class DiscoveredFabric:
    nodes: dict[str, DiscoveredNode] = field(default_factory=dict)
    links: dict[Port, Port] = field(default_factory=dict)  # both directions

    @property
    def switches(self) -> set[str]:
        return {n.description for n in self.nodes.values() if n.kind == "Switch"}

    @property
    def hcas(self) -> set[str]:
        return {n.description for n in self.nodes.values() if n.kind == "Ca"}

    @property
    def cables(self) -> set[frozenset[tuple[str, int]]]:
        """Every cable as its two ends by node description."""
        return {frozenset({(self.nodes[a].description, pa), (self.nodes[b].description, pb)})
                for (a, pa), (b, pb) in self.links.items() if a in self.nodes and b in self.nodes}


_NODE = re.compile(r'^(Switch|Ca)\s+\d+\s+"([SH]-([0-9a-fA-F]{1,16}))"\s*#\s*"([^"]*)"')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]{1,16})\))?\s+"([SH]-[0-9a-fA-F]{1,16})"\[(\d+)\]')


def parse_ibnetdiscover(text: str) -> DiscoveredFabric:
    """ibnetdiscover's default output: a header per node (`Switch|Ca <ports> "<id>" # "<description>"`)
    and a line per connected port (`[port](port GUID) "<peer id>"[peer port]`), records apart by blank lines."""
    fabric = DiscoveredFabric()
    current: DiscoveredNode | None = None
    # A GUID is burnt in, unique and never 0 (IBTA: EUI-64): one that repeats or is 0 is a broken
    # discovery or a hand edit, and OpenSM's files written from it would route to the wrong port.
    seen: dict[int, str] = {}

    def unique(guid: int, what: str, number: int) -> None:
        if guid == 0:
            raise DiscoveredError(f"line {number}: {what} has GUID 0, which no HCA or switch carries")
        if guid in seen and seen[guid] != what:
            raise DiscoveredError(f"line {number}: {what} has GUID 0x{guid:016x}, already {seen[guid]}'s")
        seen[guid] = what

    for number, line in enumerate(text.splitlines(), start=1):
        if (node := _NODE.match(line)) is not None:
            current = DiscoveredNode(node.group(2), node.group(1), node.group(4), int(node.group(3), 16))
            if current.node_id in fabric.nodes:
                raise DiscoveredError(f"line {number}: node {current.node_id} is listed twice")
            unique(current.guid, f"node {current.node_id}", number)
            fabric.nodes[current.node_id] = current
        elif (port := _PORT.match(line)) is not None and current is not None:
            local = int(port.group(1))
            if port.group(2) is not None and current.kind == "Ca":
                guid = int(port.group(2), 16)
                if guid != current.guid:  # an HCA's port 1 often carries the node GUID + 1; equal is allowed
                    unique(guid, f"{current.node_id} port {local}", number)
                current.port_guids[local] = guid
            fabric.links[(current.node_id, local)] = (port.group(3), int(port.group(4)))
        elif not line.strip():
            current = None
    return fabric


def read_discovered(path: Path) -> DiscoveredFabric:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_DISCOVERED_BYTES + 1)
    except OSError as exc:
        raise DiscoveredError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if len(data) > MAX_DISCOVERED_BYTES:
        limit = MAX_DISCOVERED_BYTES // (1024 * 1024)
        raise DiscoveredError(f"{path}: larger than {limit} MB; not ibnetdiscover output of one fabric")
    try:
        fabric = parse_ibnetdiscover(data.decode("utf-8", errors="replace"))
    except DiscoveredError as exc:
        raise DiscoveredError(f"{path}: {exc}") from None
    if not fabric.nodes:
        raise DiscoveredError(f"{path}: no Switch or Ca record: not ibnetdiscover output")
    return fabric


@dataclass
class GuidMatch:
    """Planned name -> the discovered node's GUID (switches) or port 1's GUID (HCAs), and what differs."""

    node_guids: dict[str, int] = field(default_factory=dict)
    port_guids: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    cables_checked: int = 0

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


def match_plan(plan: IbFabric, found: DiscoveredFabric) -> GuidMatch:
    """Find every planned node in the discovered fabric by its place (module docstring) and check every
    planned cable against what is cabled."""
    matcher = _Matcher(found)
    matcher.hcas(plan)
    # switches by place: tier by tier upwards, each from a cable whose lower end is already found
    for tier in (IbCableTier.HOST_LEAF, IbCableTier.LEAF_SPINE, IbCableTier.SPINE_CORE):
        for cable in (c for c in plan.cables if c.tier is tier):
            matcher.cable(cable)
    result = matcher.result
    for name, switch in plan.switches.items():
        if name not in matcher.where:
            reached = "" if switch.tier is IbTier.LEAF else " (found through the tier below)"
            result.problem(f"switch {name}: not found{reached}")
    planned = len(plan.cables)
    discovered = len({frozenset({a, b}) for a, b in found.links.items()})
    if not result.problems and discovered != planned:
        result.problem(f"the discovered fabric has {discovered} cables, the plan {planned}: extra cables")
    return result


class _Matcher:
    def __init__(self, found: DiscoveredFabric) -> None:
        self.found = found
        self.result = GuidMatch()
        self.where: dict[str, str] = {}  # planned name -> discovered node id
        self.owner: dict[str, str] = {}  # discovered node id -> the planned name found there

    def hcas(self, plan: IbFabric) -> None:
        by_description: dict[str, DiscoveredNode] = {}
        for node in self.found.nodes.values():
            if node.kind == "Ca" and by_description.setdefault(node.description, node) is not node:
                self.result.problem(f"two HCAs describe themselves as {node.description!r}: hostnames must be unique")
        for hca in plan.hcas:
            seen = by_description.get(hca.node)
            if seen is None:
                self.result.problem(f"HCA {hca.node}: not in the discovered fabric")
                continue
            self.where[hca.node], self.owner[seen.node_id] = seen.node_id, hca.node
            self.result.node_guids[hca.node] = seen.guid
            self.result.port_guids[hca.node] = seen.port_guids.get(1, seen.guid)

    def cable(self, cable: IbCable) -> None:
        """One planned cable whose lower end is found: its upper end must be the switch and port planned
        (the first cable to reach a switch says which discovered switch it is)."""
        result, end = self.result, f"{cable.lower} port {cable.lower_port}"
        lower = self.where.get(cable.lower)
        if lower is None:
            return
        peer = self.found.links.get((lower, cable.lower_port))
        peer_node = self.found.nodes.get(peer[0]) if peer is not None else None
        if peer is None or peer_node is None or peer_node.kind != "Switch":
            what = "no cable" if peer is None else "cabled to a node that is not a switch"
            result.problem(f"{end}: {what} (planned to {cable.upper} port {cable.upper_port})")
            return
        known = self.where.get(cable.upper)
        if known is None:
            taken = self.owner.get(peer[0])
            if taken is not None:
                result.problem(f"{end}: cabled to the switch found as {taken}, planned to {cable.upper}")
                return
            self.where[cable.upper], self.owner[peer[0]] = peer[0], cable.upper
            result.node_guids[cable.upper] = result.port_guids[cable.upper] = peer_node.guid
        elif known != peer[0]:
            result.problem(f"{end}: cabled to another switch than {cable.upper} (GUID 0x{peer_node.guid:016x})")
            return
        if peer[1] != cable.upper_port:
            result.problem(f"{end}: on {cable.upper} port {peer[1]}, planned port {cable.upper_port}")
            return
        result.cables_checked += 1
