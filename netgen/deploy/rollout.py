"""Staged rollout: which devices may change together, so that a bad change never takes more of the
fabric than it can spare.

Order: one canary RTSW, then one canary CTSW, then RTSW batches, CTSW batches and ATSW batches.
Failure domains bound every batch:
  * RTSWs: at most `rtsw_batch_size` per batch, and at most `max_zone_share` of a zone's racks
    (at least one) from any one zone: a zone keeps most of its racks if a batch goes bad;
  * CTSWs: at most `ctsw_per_zone` spines of any one zone per batch (default one: a zone loses at
    most 1/N of its spine bandwidth at a time);
  * ATSWs: at most `atsw_per_batch` per batch.
The planner is pure; `violations()` re-checks any batch list against the same rules, and the
tests check every plan with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from netgen.deploy.inventory import RolloutPolicy
from netgen.topology.model import Device, Role, Topology


@dataclass(frozen=True, slots=True)
class Batch:
    index: int  # 1-based, in rollout order
    label: str  # "canary rtsw", "rtsw 3", "ctsw 2", ...
    devices: tuple[str, ...]


def zone_rtsw_limit(topology: Topology, zone: int | None, policy: RolloutPolicy) -> int:
    """Most RTSWs of one zone allowed in one batch: the policy's share of the zone's racks (the
    whole zone counts, not just the devices being deployed), never below one."""
    racks = len(topology.zone_devices(zone, Role.RTSW)) if zone is not None else 1
    return max(1, math.floor(racks * policy.max_zone_share))


def _spread(devices: list[Device], zone_cap: dict[int | None, int], cap: int | None) -> list[list[Device]]:
    """Fill each batch one device per zone in turn, so a batch spreads over zones instead of
    emptying one zone first, within the per-zone and overall caps."""
    queues: dict[int | None, list[Device]] = {}
    for device in devices:
        queues.setdefault(device.zone, []).append(device)
    batches: list[list[Device]] = []
    while any(queues.values()):
        batch: list[Device] = []
        taken: dict[int | None, int] = {}
        moved = True
        while moved and (cap is None or len(batch) < cap):
            moved = False
            for zone, queue in queues.items():
                if queue and taken.get(zone, 0) < zone_cap[zone] and (cap is None or len(batch) < cap):
                    batch.append(queue.pop(0))
                    taken[zone] = taken.get(zone, 0) + 1
                    moved = True
        batches.append(batch)
    return batches


def plan_batches(topology: Topology, names: Iterable[str], policy: RolloutPolicy) -> list[Batch]:
    selected = [topology.devices[n] for n in names]
    by_role = {role: [d for d in selected if d.role is role] for role in Role}
    groups: list[tuple[str, list[Device]]] = []
    rtsws, ctsws, atsws = by_role[Role.RTSW], by_role[Role.CTSW], by_role[Role.ATSW]
    if rtsws:
        groups.append(("canary rtsw", [rtsws[0]]))
        rtsws = rtsws[1:]
    if ctsws:
        groups.append(("canary ctsw", [ctsws[0]]))
        ctsws = ctsws[1:]
    zone_caps = {d.zone: zone_rtsw_limit(topology, d.zone, policy) for d in rtsws}
    for i, batch in enumerate(_spread(rtsws, zone_caps, policy.rtsw_batch_size), 1):
        groups.append((f"rtsw {i}", batch))
    spine_caps = {d.zone: policy.ctsw_per_zone for d in ctsws}
    for i, batch in enumerate(_spread(ctsws, spine_caps, None), 1):
        groups.append((f"ctsw {i}", batch))
    for i in range(0, len(atsws), policy.atsw_per_batch):
        groups.append((f"atsw {i // policy.atsw_per_batch + 1}", atsws[i:i + policy.atsw_per_batch]))
    return [Batch(index, label, tuple(d.name for d in devices))
            for index, (label, devices) in enumerate(groups, 1)]


def violations(batches: list[Batch], topology: Topology, policy: RolloutPolicy) -> list[str]:
    """Every way these batches break the policy (empty: safe)."""
    problems: list[str] = []
    seen: set[str] = set()
    for batch in batches:
        devices = [topology.devices[n] for n in batch.devices]
        if not devices:
            problems.append(f"batch {batch.index} is empty")
        if seen & set(batch.devices):
            problems.append(f"batch {batch.index} repeats {sorted(seen & set(batch.devices))}")
        seen |= set(batch.devices)
        if len({d.role for d in devices}) > 1:
            problems.append(f"batch {batch.index} mixes tiers")
        per_zone: dict[tuple[Role, int | None], int] = {}
        for d in devices:
            per_zone[(d.role, d.zone)] = per_zone.get((d.role, d.zone), 0) + 1
        for (role, zone), count in per_zone.items():
            if role is Role.CTSW and count > policy.ctsw_per_zone:
                problems.append(f"batch {batch.index}: {count} CTSWs of zone {zone} (policy {policy.ctsw_per_zone})")
            if role is Role.RTSW and count > zone_rtsw_limit(topology, zone, policy):
                problems.append(f"batch {batch.index}: {count} RTSWs of zone {zone} (more than"
                                f" {policy.max_zone_share:.0%} of its racks)")
        rtsw = sum(1 for d in devices if d.role is Role.RTSW)
        if rtsw > max(1, policy.rtsw_batch_size):
            problems.append(f"batch {batch.index}: {rtsw} RTSWs (batch size {policy.rtsw_batch_size})")
        atsw = sum(1 for d in devices if d.role is Role.ATSW)
        if atsw > policy.atsw_per_batch:
            problems.append(f"batch {batch.index}: {atsw} ATSWs (policy {policy.atsw_per_batch})")
    return problems
