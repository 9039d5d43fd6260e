"""Slurm topology.conf, as a tree (topology/tree) or as blocks (topology/block); topology.conf(5).

Tree: one line per rack switch with its hosts, one per zone (its CTSW plane) with its rack switches,
one for the ATSW layer with the zones. Slurm then prefers the fewest switch levels for a job, which is
the fewest zones and racks.

Blocks: a block per rack (the base block), each zone's racks written one after the other and every
zone padded with empty blocks to the same power of two. Slurm's block plugin forms a higher-level
block only from an aligned power-of-two run of base blocks consecutive in the file
(src/plugins/topology/block/eval_nodes_block.c), so without the padding a zone of 3 racks would
shift every later zone off its alignment and zone-level blocks would straddle zones (NVIDIA
topograph and GCP's cluster toolkit pad the same way).
"""

from __future__ import annotations

from netgen.scheduler.hostlist import compress
from netgen.scheduler.model import SchedulerTopology

MAX_SWITCH_NAME = 64  # topology.conf(5): switch names are at most 64 characters


def _header(topo: SchedulerTopology, plugin: str) -> list[str]:
    return [f"# netgen: Slurm topology of fabric {topo.fabric}, for TopologyPlugin=topology/{plugin}",
            "# Generated from the fabric intent; a zone's CTSW plane is one switch (it is non-blocking)."]


def tree(topo: SchedulerTopology) -> str:
    lines = _header(topo, "tree")
    for zone in topo.zones:
        for rack in zone.racks:
            lines.append(f"SwitchName={rack.switch} Nodes={compress(rack.hosts)}")
    for zone in topo.zones:
        lines.append(f"SwitchName={zone.switch} Switches={compress(r.switch for r in zone.racks)}")
    if topo.top is not None:
        lines.append(f"SwitchName={topo.top} Switches={compress(z.switch for z in topo.zones)}")
    return "\n".join(lines) + "\n"


def padded_racks(topo: SchedulerTopology) -> int:
    """Base blocks per zone: the smallest power of two holding the largest zone's racks."""
    most = max(len(z.racks) for z in topo.zones)
    return 1 << (most - 1).bit_length()


def block_sizes(topo: SchedulerTopology) -> list[int]:
    """The base block (the smallest rack's hosts: every block must hold that many) and the zone."""
    base = min(len(r.hosts) for z in topo.zones for r in z.racks)
    sizes = [base]
    if padded_racks(topo) > 1:
        sizes.append(base * padded_racks(topo))
    return sizes


def blocks(topo: SchedulerTopology) -> str:
    lines = _header(topo, "block")
    lines.append(f"# every zone padded to {padded_racks(topo)} base blocks (empty BlockName lines) so zone-level"
                 " blocks stay aligned to zones")
    per_zone = padded_racks(topo)
    for zone in topo.zones:
        for rack in zone.racks:
            lines.append(f"BlockName={rack.switch} Nodes={compress(rack.hosts)}")
        for pad in range(len(zone.racks) + 1, per_zone + 1):
            lines.append(f"BlockName={zone.switch}-pad{pad:04d}")
    lines.append("BlockSizes=" + ",".join(str(size) for size in block_sizes(topo)))
    return "\n".join(lines) + "\n"
