"""Slurm topology.conf, as a tree (topology/tree) or as blocks (topology/block); topology.conf(5).

Tree: one line per rack switch with its hosts, one per zone (its CTSW plane) with its rack switches,
one for the ATSW layer with the zones. Slurm then prefers the fewest switch levels for a job, which is
the fewest zones and racks. Every Slurm release reads these lines alike.

Blocks: a block per rack (the base block), each zone's racks written one after the other. Slurm's
block plugin forms a higher-level block of 2^k base blocks only from the base blocks [j*2^k,
(j+1)*2^k) in file order (src/plugins/topology/block/: eval_nodes_block.c takes base block i into
block i / 2^k in 24.05; block_record.c, block_record_validate, aggregates at i % 2^k == 0 from
24.11 on). Where zone boundaries do not fall on multiples of 2^k, a zone-level block straddles two
zones and a job placed "in one block" crosses the ATSW layer. Two ways to keep blocks inside zones,
by release (netgen/scheduler/versions.py has the sources):

* From 25.05, a BlockName without Nodes is an empty block (a gap): every zone is padded with empty
  blocks to the same power of two, so each zone-level block is exactly one zone (NVIDIA topograph
  and GCP's cluster toolkit pad the same way).
* 24.05 and 24.11 refuse an empty block ("block %s hasn't got nodes" fails the whole file) and a
  block with fewer nodes than the first BlockSizes value, and real nodes cannot be in two blocks,
  so zones cannot be padded. The zone-level block is then the largest power of two of racks that
  every boundary between zones is a multiple of (192-rack zones: 64 racks, three blocks per zone);
  the last zone needs no alignment (the plugin closes a short last block). A job larger than that
  block may be given blocks in different zones; with zones whose rack counts share no power of two
  there is no level above the rack.
"""

from __future__ import annotations

import math

from netgen.scheduler.hostlist import compress
from netgen.scheduler.model import SchedulerTopology
from netgen.scheduler.versions import SLURM, SLURM_EMPTY_BLOCKS, Release

MAX_SWITCH_NAME = 64  # topology.conf(5): switch names are at most 64 characters


def _header(topo: SchedulerTopology, plugin: str, release: Release | None = None) -> list[str]:
    written_for = f", Slurm {SLURM.show(release)} and later" if release is not None else ""
    return [f"# netgen: Slurm topology of fabric {topo.fabric}, for TopologyPlugin=topology/{plugin}{written_for}",
            f"# Generated from the fabric intent; {topo.levels}."]


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
    """Base blocks per zone when zones are padded: the smallest power of two holding the largest zone."""
    most = max(len(z.racks) for z in topo.zones)
    return 1 << (most - 1).bit_length()


def zone_block_racks(topo: SchedulerTopology, release: Release) -> int:
    """Base blocks (racks) in the zone-level block written for `release`: a padded zone, or without
    padding the largest power of two dividing every boundary between zones (the racks of each zone
    but the last), at most a padded zone; 1 when there is no such level above the rack."""
    if release >= SLURM_EMPTY_BLOCKS or len(topo.zones) == 1:
        return padded_racks(topo)
    boundaries = math.gcd(*(len(z.racks) for z in topo.zones[:-1]))
    return min(boundaries & -boundaries, padded_racks(topo))  # x & -x: x's lowest set bit


def block_sizes(topo: SchedulerTopology, release: Release) -> list[int]:
    """BlockSizes, in nodes: the base block first (the smallest rack's hosts: 24.05-24.11 fatal on a
    block holding fewer than the first value), then the zone-level block."""
    base = min(len(r.hosts) for z in topo.zones for r in z.racks)
    per_zone_block = zone_block_racks(topo, release)
    return [base] if per_zone_block == 1 else [base, base * per_zone_block]


def blocks(topo: SchedulerTopology, release: Release = SLURM.oldest) -> str:
    lines = _header(topo, "block", release)
    pad = release >= SLURM_EMPTY_BLOCKS
    per_zone_block = zone_block_racks(topo, release)
    if pad:
        lines.append(f"# every zone padded to {per_zone_block} base blocks (empty BlockName lines, read from"
                     " Slurm 25.05 on) so zone-level blocks stay aligned to zones")
    elif per_zone_block > 1:
        lines.append(f"# zones not padded (before 25.05 Slurm refuses a BlockName without Nodes): zone-level"
                     f" blocks of {per_zone_block} racks, the largest power of two every zone boundary falls on")
    else:
        lines.append("# zones not padded (before 25.05 Slurm refuses a BlockName without Nodes), and no power of"
                     " two above 1 divides every zone boundary: racks are the only block level")
    for zone in topo.zones:
        for rack in zone.racks:
            lines.append(f"BlockName={rack.switch} Nodes={compress(rack.hosts)}")
        if pad:
            for number in range(len(zone.racks) + 1, per_zone_block + 1):
                lines.append(f"BlockName={zone.switch}-pad{number:04d}")
    lines.append("BlockSizes=" + ",".join(str(size) for size in block_sizes(topo, release)))
    return "\n".join(lines) + "\n"
