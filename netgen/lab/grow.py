"""`netgen lab grow`: a running netns lab grown to a bigger fabric (a rack, a CTSW, a zone added to
the intent) or to a wider slice of the same one, the way `netgen grow` (netgen/day2/grow.py) rolls a
growth out: new switches first, then the existing ones whose config changes, rack switches before
CTSWs before ATSWs, each loaded with only its difference. Growing adds; it never takes away: a plan
that removes a node, a cable or a session, or changes anything an existing node already has (an
address, an ASN), is refused before anything is touched.

What it proves is read from the routers, not inferred: every session of the lab before the growth
is still Established afterwards with the same count of established connections and none dropped
(FRR's own `show bgp summary json` counters, read before and after), and the grown lab converges
(every session, full ECMP on every RTSW, LLDP on both ends of every cable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from netgen.lab.backend import LabBackend, StageHook
from netgen.lab.plan import LabInterface, LabLink, LabNode, LabPlan, LabSession
from netgen.lab.verify import FrrReader, LabResult, Peer, in_parallel, up_state, wait_for

if TYPE_CHECKING:
    from netgen.lab.netns import NetnsBackend

# The order `netgen grow` pushes existing switches in (netgen/day2/grow.py PHASES; a test keeps the
# two equal): a spine learns its new neighbour once the neighbour is there.
RELOAD_ORDER = ("rtsw", "ctsw", "atsw")
# what of an existing node must not change for the growth to be one (its interfaces are compared one by one)
_KEPT = ("kind", "nos", "role", "zone", "asn", "announces", "gateway_v4", "host_ipv4", "attached_to")


@dataclass
class LabGrowth:
    """What growing the lab from one plan to another adds and changes, or why it is refused."""

    new_nodes: list[str] = field(default_factory=list)  # routers, then hosts
    new_links: list[LabLink] = field(default_factory=list)
    new_ports: dict[str, list[LabInterface]] = field(default_factory=dict)  # existing router -> its new ports
    reloaded: list[str] = field(default_factory=list)  # existing routers whose FRR config changes, in order
    refusals: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.new_nodes or self.new_links or self.reloaded)


@dataclass
class GrowSteps:
    done: list[str] = field(default_factory=list)


def _link_key(link: LabLink) -> tuple[str, str, str, str]:
    return link.a, link.a_if, link.b, link.b_if


def _session_key(session: LabSession) -> tuple[str, str, str, str, str]:
    return session.afi, session.a, session.a_ip, session.b, session.b_ip


def _node_changes(old: LabNode, new: LabNode) -> list[str]:
    problems = [f"{old.name}: its {attr} changes from {getattr(old, attr)!r} to {getattr(new, attr)!r}"
                for attr in _KEPT if getattr(old, attr) != getattr(new, attr)]
    now = {i.name: i for i in new.interfaces}
    for intf in old.interfaces:
        if intf.name not in now:
            problems.append(f"{old.name}: interface {intf.rendered} would go")
        elif now[intf.name] != intf:
            problems.append(f"{old.name}: interface {intf.rendered} changes (addresses {list(intf.addresses)}"
                            f" -> {list(now[intf.name].addresses)}, mtu {intf.mtu} -> {now[intf.name].mtu})")
    return problems


def compare_plans(old: LabPlan, new: LabPlan) -> LabGrowth:
    """The growth from `old` (the running lab) to `new`; refusals name every removal or change."""
    growth = LabGrowth()
    growth.refusals += [f"node {name} would go" for name in old.nodes if name not in new.nodes]
    growth.new_nodes = ([n.name for n in new.routers() if n.name not in old.nodes]
                        + [n.name for n in new.hosts() if n.name not in old.nodes])
    order = {role: i for i, role in enumerate(RELOAD_ORDER)}
    position = {name: i for i, name in enumerate(new.nodes)}
    for name in sorted((n for n in old.nodes if n in new.nodes),
                       key=lambda n: (order.get(old.nodes[n].role or "", len(order)), position[n])):
        before, after = old.nodes[name], new.nodes[name]
        growth.refusals += _node_changes(before, after)
        known = {i.name for i in before.interfaces}
        added = [i for i in after.interfaces if i.name not in known]
        if added and (before.kind != "router" or any(i.kind != "port" for i in added)):
            growth.refusals.append(f"{name}: gains {[i.rendered for i in added]}, which only a new router's"
                                   " ports can")
        elif added:
            growth.new_ports[name] = added
        if before.kind == "router" and before.frr_conf != after.frr_conf:
            growth.reloaded.append(name)
    links = {_link_key(link) for link in old.links}
    present = {_link_key(link) for link in new.links}
    growth.refusals += [f"cable {link.a}:{link.a_port} - {link.b}:{link.b_port} would go"
                        for link in old.links if _link_key(link) not in present]
    growth.new_links = [link for link in new.links if _link_key(link) not in links]
    sessions = {_session_key(s) for s in new.sessions}
    growth.refusals += [f"session {s.label()} would go" for s in old.sessions if _session_key(s) not in sessions]
    return growth


def session_counters(backend: LabBackend, routers: list[str]) -> dict[tuple[str, str], Peer]:
    """(router, peer address) -> the session as the router's FRR reports it (`show bgp summary json`,
    with its connection counters)."""
    seen = in_parallel(routers, lambda node: FrrReader().peers(backend, node))
    return {(node, address): peer for node, peers in seen.items() for address, peer in peers.items()}


def kept_sessions(plan: LabPlan, before: dict[tuple[str, str], Peer],
                  after: dict[tuple[str, str], Peer]) -> tuple[int, list[str], list[str]]:
    """(sessions kept up, sessions reset or down, sessions that were not up before): each session of
    `plan` judged on both ends by its counters before and after."""
    kept, reset, not_up = 0, [], []
    for s in plan.sessions:
        ends = ((s.a, s.b_ip), (s.b, s.a_ip))
        if any(before.get(end) is None or before[end].state != "Established" for end in ends):
            not_up.append(s.label())
            continue
        problems = []
        for end in ends:
            was, now = before[end], after.get(end)
            if now is None:
                problems.append(f"{end[0]} no longer has neighbour {end[1]}")
            elif now.state != "Established":
                problems.append(f"{end[0]} sees it {now.state}")
            elif (now.established, now.dropped) != (was.established, was.dropped):
                problems.append(f"{end[0]}: connections established {was.established} -> {now.established},"
                                f" dropped {was.dropped} -> {now.dropped}")
        if problems:
            reset.append(f"{s.label()}: {'; '.join(problems)}")
        else:
            kept += 1
    return kept, reset, not_up


@dataclass
class LabGrowReport:
    lab: str
    old_slice: str
    plan: LabPlan
    growth: LabGrowth
    steps: list[str] = field(default_factory=list)
    results: list[LabResult] = field(default_factory=list)
    seconds: float = 0.0
    kept: int = 0
    reset: list[str] = field(default_factory=list)
    not_up_before: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[LabResult]:
        return [r for r in self.results if not r.ok]

    @property
    def ok(self) -> bool:
        return not (self.growth.refusals or self.failed or self.reset)

    def as_dict(self) -> dict[str, Any]:
        g = self.growth
        return {
            "ok": self.ok, "lab": self.lab, "fabric": self.plan.fabric, "slice_before": self.old_slice,
            "slice": self.plan.slice, "refused": bool(g.refusals), "refusals": g.refusals,
            "new_nodes": g.new_nodes,
            "new_links": [f"{link.a}:{link.a_port} - {link.b}:{link.b_port}" for link in g.new_links],
            "new_ports": {name: [p.rendered for p in ports] for name, ports in g.new_ports.items()},
            "reloaded": g.reloaded, "steps": self.steps,
            "converged": bool(self.results) and not self.failed, "converge_seconds": round(self.seconds, 2),
            "sessions_expected": len(self.plan.sessions),
            "sessions_established": sum(1 for r in self.results if r.check == "bgp-session" and r.ok),
            "existing_sessions": {"kept_up": self.kept, "reset": self.reset, "not_up_before": self.not_up_before},
            "failures": [r.as_dict() for r in self.failed[:50]],
        }


def grow_lab(backend: NetnsBackend, plan: LabPlan, timeout: float, progress: StageHook | None = None,
             tick: Callable[[list[LabResult]], None] | None = None) -> LabGrowReport:
    """Grow the running lab to `plan`, then judge it: converged, and every session it had kept up."""
    old = backend.plan()
    report = LabGrowReport(backend.lab, old.slice, plan, compare_plans(old, plan))
    if report.growth.refusals:
        return report
    existing = [n.name for n in old.routers()]
    before = session_counters(backend, existing)
    if report.growth.empty:
        report.steps = ["nothing to grow: the lab already runs this slice of the fabric"]
    else:
        report.steps = backend.grow(plan, report.growth, progress).done
    report.results, report.seconds = wait_for(up_state(backend, plan),
                                              timeout, tick)
    report.kept, report.reset, report.not_up_before = kept_sessions(old, before, session_counters(backend, existing))
    return report


__all__ = ["RELOAD_ORDER", "GrowSteps", "LabGrowReport", "LabGrowth", "compare_plans",
           "grow_lab", "kept_sessions", "session_counters"]
