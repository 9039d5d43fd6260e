"""The InfiniBand alternative of a fabric: the same GPUs, hosts, racks and zones on a rail-optimised
InfiniBand fat tree routed by a subnet manager (OpenSM), instead of the RoCE Clos.

Meta built both for the same 24K GPUs (engineering.fb.com, "Building Meta's GenAI infrastructure",
2024); this section says only what InfiniBand needs beyond the RoCE intent. Sizing follows the
rail-optimised fat trees of NVIDIA's DGX SuperPOD reference architectures: a leaf per rail per group
of hosts, non-blocking to its spines; the cross-zone oversubscription is the RoCE fabric's unless
given. docs/explanation/infiniband-alternative.md says how each number is derived.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from netgen.intent.types import IntentModel, RatioStr, SafeName, Speed

# P_Keys (InfiniBand Architecture Specification vol. 1, 10.9.1): 15 bits of key and a membership bit;
# 0x7fff is the default partition, which OpenSM always defines (opensm partition-config.txt).
DEFAULT_PKEY = 0x7FFF
MAX_PARTITIONS = 64


class IbCables(IntentModel):
    """Cable lengths of the InfiniBand fabric, for the cabling plan and the comparison; every cable is
    fibre. Omitted = the RoCE fabric's length for the same kind of run: a rail-optimised leaf takes one
    NIC from each of many racks, so it sits in a network rack as a CTSW does and its host cables run
    as far as the RTSW-CTSW ones [netgen]; leaf to spine as RTSW to CTSW, spine to core as CTSW to ATSW."""

    host_m: int | None = Field(default=None, ge=0, le=10_000, description="HCA to leaf.")
    leaf_spine_m: int | None = Field(default=None, ge=0, le=10_000, description="Leaf to spine.")
    spine_core_m: int | None = Field(default=None, ge=0, le=10_000, description="Spine to core.")


class IbPartition(IntentModel):
    """A partition (P_Key) for a tenant: the hosts of the listed zones are its full members; the
    subnet manager's own port is a member of every partition."""

    name: SafeName = Field(description="Partition name in OpenSM's partition file.")
    pkey: int = Field(ge=0x0001, le=0x7FFE,
                      description="15-bit P_Key (0x7fff is the default partition; 0 is invalid).")
    zones: list[int] = Field(min_length=1, max_length=255, description="Zones whose hosts are full members.")
    ipoib: bool = Field(default=False, description="Create the IPoIB broadcast group of the partition.")


class SubnetManager(IntentModel):
    """OpenSM's settings that netgen derives the routing from."""

    routing_engine: Literal["ftree", "updn", "minhop"] = Field(
        default="ftree",
        description="OpenSM routing engine (opensm -R). ftree uses netgen's root and compute-node GUID files."
                    " [industry: fat-tree routing on fat trees]")
    priority: int = Field(default=15, ge=0, le=15,
                          description="SM priority of the master (opensm -p); a standby takes a lower one.")
    partition_enforcement: Literal["both", "in", "out", "off"] = Field(
        default="both", description="P_Key enforcement on switch ports (opensm -Z). [OpenSM default both]")


class Infiniband(IntentModel):
    """The InfiniBand alternative of this fabric (`netgen infiniband`, `netgen compare`)."""

    switch_model: SafeName = Field(description="Catalog InfiniBand switch model (infiniband_switches).")
    link_speed: Speed = Field(default="400G", validate_default=True,
                              description="Speed of every HCA and switch port. [NDR: 400G]")
    hosts_per_leaf: int | None = Field(
        default=None, ge=1, le=2048,
        description="Hosts per leaf (one HCA port each, on the leaf of its rail); omitted = half the radix, or"
                    " the zone's hosts if fewer. Leaves are non-blocking: as many uplinks as host ports.")
    rails_per_group: int | None = Field(
        default=None, ge=1, le=32,
        description="Rails whose leaves share a spine group (a divisor of nics_per_host): 1 keeps every rail on"
                    " spines of its own, all rails make a zone one group. Omitted = the widest group with the fewest"
                    " spines.")
    spines_per_group: int | None = Field(
        default=None, ge=1, le=2048,
        description="Spines of one zone's rail; every leaf of the rail has the same number of links to each."
                    " Omitted = the fewest (at least 2) whose down and up ports fit the radix.")
    core_oversubscription: RatioStr | None = Field(
        default=None,
        description="Spine up:down ratio towards the core; omitted = the RoCE fabric's CTSW up:down ratio"
                    " (1:1 without an aggregation layer).")
    hca_model: SafeName = Field(default="connectx-7", description="HCA model, for the cabling plan and the comparison.")
    cable_length_m: IbCables = Field(default_factory=IbCables, description="Cable lengths; omitted = RoCE's.")
    service_level: int = Field(default=0, ge=0, le=14,
                               description="Service level of NCCL's traffic (NCCL_IB_SL). [NCCL default 0]")
    subnet_manager: SubnetManager = Field(default_factory=SubnetManager, description="OpenSM settings.")
    partitions: list[IbPartition] = Field(
        default_factory=list, max_length=MAX_PARTITIONS,
        description="Tenant partitions beside the default one (0x7fff, every port).")

    @model_validator(mode="after")
    def _unique_partitions(self) -> Infiniband:
        names = [p.name for p in self.partitions]
        keys = [f"0x{p.pkey:04x}" for p in self.partitions]
        for what, values in (("name", names), ("pkey", keys)):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise ValueError(f"partition {what} repeated: {', '.join(repeated)}")
        return self
