"""`netgen grow FABRIC --from BASE`: the rollout plan for a fabric that grows (racks, CTSWs, a zone)
from BASE (the fabric file the switches run now) to FABRIC. Growing adds; it never takes away:

* every switch of BASE is still in FABRIC, and every BGP session an existing switch has stays, with
  the same neighbour address, AS and peer; a plan that removes either is refused (exit 1, each
  removal named): that is a change to review with `netgen diff`, not a growth;
* the sessions each existing switch gains are listed, with their peers;
* the order: the new switches first (nothing points at them yet, and on their own they carry no
  traffic), then the existing switches whose rendered config changes, rack switches before CTSWs
  before ATSWs, so a spine learns a new neighbour once it is there; `netgen deploy --limit` takes
  each phase's list as it is, and keeps no two spines of a zone in the commit window at once.

An existing switch is "changed" when its rendered files differ between BASE and FABRIC (both
rendered now, by this netgen).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from netgen.context import DesignContext
from netgen.platforms.output_dir import render_or_read
from netgen.platforms.routing import bgp_plan
from netgen.topology.model import Device, Role

PHASES = (("new switches", None), ("existing RTSWs", Role.RTSW), ("existing CTSWs", Role.CTSW),
          ("existing ATSWs", Role.ATSW))


@dataclass(frozen=True, slots=True)
class Session:
    """One BGP session of a switch: the neighbour's address and AS, and which peer and port it is."""

    address: str
    remote_as: int
    peer: str  # "<peer device>:<peer port>"

    def as_dict(self) -> dict[str, Any]:
        return {"address": self.address, "remote_as": self.remote_as, "peer": self.peer}


@dataclass
class GrowPlan:
    fabric: str
    new: list[str] = field(default_factory=list)  # switches FABRIC adds, topology order
    removed: list[str] = field(default_factory=list)  # switches of BASE that FABRIC no longer has
    added_sessions: dict[str, list[Session]] = field(default_factory=dict)  # existing switch -> gained
    removed_sessions: dict[str, list[Session]] = field(default_factory=dict)  # existing switch -> lost
    changed: list[str] = field(default_factory=list)  # existing switches whose rendered files differ
    phases: list[tuple[str, list[str]]] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return bool(self.removed or self.removed_sessions)

    def as_dict(self) -> dict[str, Any]:
        def sessions(by: Mapping[str, list[Session]]) -> dict[str, list[dict[str, Any]]]:
            return {name: [s.as_dict() for s in found] for name, found in by.items()}

        return {"fabric": self.fabric, "refused": self.refused, "new": self.new, "removed": self.removed,
                "added_sessions": sessions(self.added_sessions),
                "removed_sessions": sessions(self.removed_sessions), "changed": self.changed,
                "phases": [{"phase": label, "devices": names} for label, names in self.phases]}


def sessions_of(ctx: DesignContext, device: Device) -> set[Session]:
    return {Session(n.address, n.remote_as, n.description) for n in bgp_plan(ctx, device).neighbors}


def _changed(base: DesignContext, head: DesignContext, names: list[str]) -> list[str]:
    """The switches (of both) whose rendered files differ."""
    if not names:
        return []
    old = render_or_read(base, [base.topology.devices[n] for n in names], None).files
    new = render_or_read(head, [head.topology.devices[n] for n in names], None).files
    return [n for n in names if dict(old[n]) != dict(new[n])]


def plan_growth(base: DesignContext, head: DesignContext) -> GrowPlan:
    """What growing the switches from `base` to `head` adds, changes and (refused) removes."""
    plan = GrowPlan(head.fabric.name)
    before, after = base.topology.devices, head.topology.devices
    plan.new = [n for n in after if n not in before]
    plan.removed = [n for n in before if n not in after]
    existing = [n for n in after if n in before]
    for name in existing:
        old, new = sessions_of(base, before[name]), sessions_of(head, after[name])
        if new - old:
            plan.added_sessions[name] = sorted(new - old, key=lambda s: (s.peer, s.address))
        if old - new:
            plan.removed_sessions[name] = sorted(old - new, key=lambda s: (s.peer, s.address))
    plan.changed = _changed(base, head, existing)
    plan.phases = [(label, plan.new if role is None else [n for n in plan.changed if after[n].role is role])
                   for label, role in PHASES]
    plan.phases = [(label, names) for label, names in plan.phases if names]
    return plan


__all__ = ["PHASES", "GrowPlan", "Session", "plan_growth", "sessions_of"]
