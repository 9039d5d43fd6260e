"""The scheduler releases netgen writes for, and what changes between them.

Each format has an oldest supported release, the default: the first release of the format generation
every later release still reads, so a file written for the default loads on that release and on
every newer one checked (`newest_checked`). Releases before it used another format generation, which
the later ones refuse, so a default reaching back to them would write files the current releases
reject; netgen refuses them (exit 2) and says why. Releases newer than the newest checked are taken
to read what the newest checked one reads.

The sources behind each boundary (read at the release tags named):

* Slurm topology/block: 23.11 (src/plugins/topology/block/topology_block.c, _read_topo_file) reads
  `BlockLevels`, not `BlockSizes`, and fatals on a block whose node count differs from the first
  block's; 24.05 replaced it with `BlockSizes` (block_record.c, commit f3a43d9c03), which 23.11
  refuses as an unrecognized key (s_p_parse_file without PARSE_FLAGS_IGNORE_NEW). A `BlockName`
  without `Nodes` fails _parse_block ("block %s hasn't got nodes") and so the whole file up to
  24.11.7; 25.05.0 accepts it as an empty block (commit 700ca4f85f, "Support for topology/block with
  gaps in the block definitions"; 8f59f086f8 removed the AllowGaps switch before the release).
  topology/tree's `SwitchName` lines are read the same by every release (Debian 12's 22.05 loads
  them in the slurm test tier), so the tree format has no minimum.
* Kueue (config/components/crd/bases/kueue.x-k8s.io_topologies.yaml and _resourceflavors.yaml): the
  Topology kind is v1alpha1 from 0.9 to 0.13, with topology-aware scheduling an alpha feature gate
  off by default (pkg/features/kube_features.go); 0.14 serves Topology as v1beta1 only and turns the
  gate on by default; 0.15 adds v1beta2 for Topology and ResourceFlavor (served, storage from 0.16,
  where v1beta1 is deprecated but still served, up to 0.19 at least).
* Volcano (volcano-sh/apis pkg/apis/topology/v1alpha1/hypernode_types.go; the CRD in
  volcano-sh/volcano config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml): HyperNode
  first ships in 1.12; `spec.tierName` exists from 1.14 (commit caa5259), so 1.12 and 1.13 refuse
  every object carrying it (unknown field under strict field validation).
* NVIDIA topograph (pkg/models/model.go, CHANGELOG.md): the simulation model took three shapes,
  switch and capacity-block lists (0.1-0.3), maps with top-level `nodes` and `capacity_blocks`
  (0.4-0.5), and from 1.0 `switches` plus `blocks[]` naming their leaf switch (PR #394); each
  release ignores the others' keys, so a model of another shape loads as a fabric without nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Release = tuple[int, int]

_RELEASE = re.compile(r"^v?(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})*(?:-\w+)?$")


def parse(text: str) -> Release:
    """`24.05`, `24.05.3`, `v0.14.2` -> (major, minor); ValueError for anything else."""
    match = _RELEASE.match(text.strip())
    if match is None:
        raise ValueError(f"{text[:40]!r} is not a release number (MAJOR.MINOR, e.g. 24.05 or 0.14)")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True, slots=True)
class Scheduler:
    name: str
    option: str  # the command-line option that sets the target
    oldest: Release  # the oldest supported release, the default
    newest_checked: Release
    width: int  # digits of the minor number as the project writes it (Slurm: 24.05)
    why_oldest: str  # what the releases before `oldest` lack, for the refusal

    def show(self, release: Release) -> str:
        return f"{release[0]}.{release[1]:0{self.width}d}"


SLURM = Scheduler("Slurm", "--slurm-version", (24, 5), (26, 5), 2,
                  "Slurm 23.11's topology/block reads BlockLevels where later releases read BlockSizes, refuses"
                  " a BlockSizes line, and needs every block to hold the same number of nodes; 23.11 is past"
                  " SchedMD's support")
KUEUE = Scheduler("Kueue", "--kueue-version", (0, 14), (0, 19), 1,
                  "before 0.14 Kueue's Topology is v1alpha1 (not served from 0.14 on) and topology-aware scheduling"
                  " is an alpha feature gate, off by default")
VOLCANO = Scheduler("Volcano", "--volcano-version", (1, 12), (1, 15), 1,
                    "Volcano has HyperNodes from 1.12 on")
TOPOGRAPH = Scheduler("topograph", "--topograph-version", (1, 0), (1, 0), 1,
                      "topograph's simulation model before 1.0 has another shape (top-level nodes and"
                      " capacity_blocks), in which this model loads as a fabric without nodes")

# Releases where the written format changes (see the module docstring for the sources).
SLURM_EMPTY_BLOCKS: Release = (25, 5)  # a BlockName without Nodes is accepted (a gap)
KUEUE_V1BETA2: Release = (0, 15)  # Topology and ResourceFlavor served as kueue.x-k8s.io/v1beta2
VOLCANO_TIER_NAME: Release = (1, 14)  # HyperNode spec.tierName


def target(scheduler: Scheduler, text: str | None, *, any_release: bool = False) -> Release:
    """The release to write for: `text` parsed (None: the oldest supported); ValueError when it is not
    a release number or is older than the oldest supported (unless `any_release`: a format every
    release reads, Slurm's tree), saying why."""
    if text is None:
        return scheduler.oldest
    release = parse(text)
    if release < scheduler.oldest and not any_release:
        raise ValueError(f"{scheduler.name} {scheduler.show(release)} is not supported, netgen writes for"
                         f" {scheduler.show(scheduler.oldest)} and later: {scheduler.why_oldest}")
    return release
