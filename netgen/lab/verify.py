"""Verify a running lab against its plan: BGP sessions, ECMP width in the forwarding table,
reachability, and a failure drill. Backend-neutral: it only uses `LabBackend.exec`.

Expectations come from the plan (what the topology says), never from the routers: a session is
expected on every cable inside the slice; each RTSW must reach every other RTSW's originated
prefixes over exactly the CTSW uplinks whose CTSW can still reach that RTSW.

Not verifiable here, and said in every report: PFC, ECN, buffers, queues and QP hashing are ASIC
behaviour that neither FRR, the kernel, cEOS nor sonic-vs implement; render-time checks cover them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from ipaddress import ip_interface, ip_network
from typing import Any, Protocol

from netgen.lab.backend import ExecResult, LabBackend, LabError
from netgen.lab.plan import LabNode, LabPlan

NOT_EXERCISED = ("PFC, ECN/DCQCN, buffers, queue scheduling and QP hashing are ASIC features: neither FRR, the"
                 " kernel, cEOS nor sonic-vs implement them, so the lab cannot test them; `netgen render` checks"
                 " them against the NOS models instead")
WORKERS = 4  # parallel probes; 2 cores, and each probe is a short process


@dataclass(frozen=True, slots=True)
class LabResult:
    check: str  # bgp-session | ecmp | lldp | ping | drill
    node: str  # where it was observed (or the device at fault)
    subject: str  # the session, prefix set, or ping pair
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "node": self.node, "subject": self.subject, "ok": self.ok,
                "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Peer:
    state: str
    remote_as: int | None
    local_as: int | None


class RoutingReader(Protocol):
    def peers(self, backend: LabBackend, node: str) -> dict[str, Peer]: ...

    def bgp_routes(self, backend: LabBackend, node: str) -> dict[str, int]:
        """BGP-installed routes in the forwarding table: prefix -> number of next hops."""
        ...


def _json(result: ExecResult, node: str, what: str) -> Any:
    if not result.ok:
        raise LabError(f"{node}: {what} failed: {(result.stderr or result.stdout).strip()[:300]}")
    try:
        return json.loads(result.stdout or "null")
    except json.JSONDecodeError:
        raise LabError(f"{node}: {what} did not return JSON: {result.stdout[:200]!r}") from None


def as_number(value: object) -> int | None:
    """An ASN as an int, whether JSON gave a number, a decimal string (EOS) or asdot ("65000.8")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        high, dot, low = value.partition(".")
        if high.isdigit() and (not dot or low.isdigit()):
            return int(high) * 65536 + int(low) if dot else int(high)
    return None


def _prefix(dst: str, v6: bool) -> str:
    if dst == "default":
        return "0.0.0.0/0" if not v6 else "::/0"
    return str(ip_network(dst if "/" in dst else f"{dst}/{128 if v6 else 32}", strict=False))


class FrrReader:
    """FRR (netns routers, sonic-vs): `show bgp summary json` and the kernel FIB, which is what
    actually forwards."""

    def peers(self, backend: LabBackend, node: str) -> dict[str, Peer]:
        data = _json(backend.exec(node, ["vtysh", "-c", "show bgp summary json"]), node, "show bgp summary json")
        peers: dict[str, Peer] = {}
        for family in (data or {}).values():
            if not isinstance(family, dict):
                continue
            local_as = as_number(family.get("as"))
            for address, info in family.get("peers", {}).items():
                peers[address] = Peer(str(info.get("state", "?")), as_number(info.get("remoteAs")), local_as)
        return peers

    def bgp_routes(self, backend: LabBackend, node: str) -> dict[str, int]:
        routes: dict[str, int] = {}
        for flag, v6 in (("-4", False), ("-6", True)):
            data = _json(backend.exec(node, ["ip", "-j", flag, "route", "show", "proto", "bgp"]), node, "ip route")
            for route in data or []:
                routes[_prefix(route["dst"], v6)] = len(route.get("nexthops") or [route])
        return routes


class EosReader:
    """cEOS under containerlab: `show ip[v6] bgp summary | json` and `show ip[v6] route | json`.
    The field names follow EOS's documented JSON; not exercised on this machine (no cEOS image)."""

    def _cli(self, backend: LabBackend, node: str, command: str) -> Any:
        return _json(backend.exec(node, ["Cli", "-p", "15", "-c", f"{command} | json"]), node, command)

    def peers(self, backend: LabBackend, node: str) -> dict[str, Peer]:
        peers: dict[str, Peer] = {}
        for command in ("show ip bgp summary", "show ipv6 bgp summary"):
            vrf = self._cli(backend, node, command).get("vrfs", {}).get("default", {})
            for address, info in vrf.get("peers", {}).items():
                peers[address] = Peer(str(info.get("peerState", "?")), as_number(info.get("asn")),
                                      as_number(vrf.get("asn")))
        return peers

    def bgp_routes(self, backend: LabBackend, node: str) -> dict[str, int]:
        routes: dict[str, int] = {}
        for command, v6 in (("show ip route", False), ("show ipv6 route", True)):
            vrf = self._cli(backend, node, command).get("vrfs", {}).get("default", {})
            for prefix, info in vrf.get("routes", {}).items():
                if "BGP" in str(info.get("routeType", "")).upper():
                    routes[_prefix(prefix, v6)] = len(info.get("vias", []))
        return routes


READERS: dict[str, RoutingReader] = {"frr": FrrReader(), "eos": EosReader()}


def _reader(backend: LabBackend, node: str) -> RoutingReader:
    return READERS[backend.node_flavour(node)]


# --- expectations ---------------------------------------------------------------------------------


@dataclass
class Expectations:
    """ECMP widths the topology predicts, for a set of switches taken out of service."""

    plan: LabPlan
    down: frozenset[str] = frozenset()
    _adj: dict[tuple[str, str], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for link in self.plan.links:
            self._adj[(link.a, link.b)] = self._adj.get((link.a, link.b), 0) + 1

    def _linked(self, lower: str, upper: str) -> bool:
        return (lower, upper) in self._adj and lower not in self.down and upper not in self.down

    def _ctsw_reaches(self, ctsw: LabNode, rtsw: LabNode) -> bool:
        if ctsw.zone == rtsw.zone:  # zone spines share an ASN: only the direct link carries the route
            return self._linked(rtsw.name, ctsw.name)
        for atsw in self.plan.routers("atsw"):
            if not self._linked(ctsw.name, atsw.name):
                continue
            for other in self.plan.routers("ctsw"):
                if other.zone == rtsw.zone and self._linked(other.name, atsw.name) and self._linked(rtsw.name,
                                                                                                   other.name):
                    return True
        return False

    def width(self, source: LabNode, target: LabNode) -> int:
        """Next hops `source` (an RTSW) should have towards `target`'s prefixes."""
        total = 0
        for ctsw in self.plan.routers("ctsw"):
            if self._linked(source.name, ctsw.name) and self._ctsw_reaches(ctsw, target):
                total += self._adj[(source.name, ctsw.name)]
        return total


# --- checks ---------------------------------------------------------------------------------------


def _parallel(items: Iterable[str], work: Callable[[str], Any]) -> dict[str, Any]:
    names = list(items)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(zip(names, pool.map(work, names), strict=True))


def check_sessions(backend: LabBackend, plan: LabPlan) -> list[LabResult]:
    routers = [n.name for n in plan.routers()]
    seen = _parallel(routers, lambda n: _reader(backend, n).peers(backend, n))
    results = []
    for s in plan.sessions:
        a_view, b_view = seen[s.a].get(s.b_ip), seen[s.b].get(s.a_ip)
        problems = []
        for local, view, peer, peer_ip in ((s.a, a_view, s.b, s.b_ip), (s.b, b_view, s.a, s.a_ip)):
            if view is None:
                problems.append(f"{local} has no neighbor {peer_ip} configured")
                continue
            expected_as = plan.nodes[peer].asn
            if view.remote_as is not None and expected_as is not None and view.remote_as != expected_as:
                problems.append(f"{local} is configured with remote-as {view.remote_as} for {peer} {peer_ip},"
                                f" but {peer}'s ASN is {expected_as}")
            own = plan.nodes[local].asn
            if view.local_as is not None and own is not None and view.local_as != own:
                problems.append(f"{local} runs BGP as AS {view.local_as}, but its ASN is {own}")
            if view.state != "Established":
                problems.append(f"{local} sees it {view.state}")
        at_fault = next((p.split(" ", 1)[0] for p in problems if "remote-as" in p or "runs BGP" in p), s.a)
        results.append(LabResult("bgp-session", at_fault, s.label(), not problems,
                                 "; ".join(problems) if problems else "Established on both ends"))
    return results


def check_lldp(backend: LabBackend, plan: LabPlan) -> list[LabResult]:
    """Every cabled port hears the planned neighbour on the planned port (LLDP, both ends of every
    cable). A miscabled pair shows as two ports each hearing the other's planned neighbour; the
    result names the port, what it hears and what the plan says. Nodes whose backend cannot read
    LLDP are left out (said in one result)."""
    heard = _parallel(list(plan.nodes), backend.lldp_neighbors)
    results: list[LabResult] = []
    unread = sorted(node for node, seen in heard.items() if seen is None)
    port_of: dict[tuple[str, str], str] = {}
    # what each port sends as its LLDP port ID (the lab's lldpd sends what the node's NOS would)
    sent = {(node.name, intf.name): intf.lldp_id or intf.name for node in plan.nodes.values()
            for intf in node.interfaces}
    by_sent = {(node, port_id): (node, ifname) for (node, ifname), port_id in sent.items()}
    ends: list[tuple[str, str, str, str]] = []  # (node, ifname, planned peer, planned peer ifname)
    for link in plan.links:
        port_of[(link.a, link.a_if)], port_of[(link.b, link.b_if)] = link.a_port, link.b_port
        ends += [(link.a, link.a_if, link.b, link.b_if), (link.b, link.b_if, link.a, link.a_if)]
    for node, ifname, peer, peer_if in ends:
        seen = heard[node]
        if seen is None:
            continue
        planned = f"{peer}:{port_of[(peer, peer_if)]}"
        subject = f"{node}:{port_of[(node, ifname)]}"
        if ifname not in seen:
            results.append(LabResult("lldp", node, subject, False, f"hears no LLDP neighbour; planned {planned}"))
            continue
        system, port = seen[ifname]
        heard_port = port_of.get(by_sent.get((system, port), (system, port)), port)
        if (system, port) == (peer, sent.get((peer, peer_if), peer_if)):
            results.append(LabResult("lldp", node, subject, True, f"hears {planned} as planned"))
        else:
            results.append(LabResult("lldp", node, subject, False,
                                     f"miscabled: hears {system}:{heard_port}, planned {planned}"))
    if unread:
        results.append(LabResult("lldp", unread[0], f"{len(unread)} node(s)", True,
                                 f"LLDP not read on {', '.join(unread[:5])} (this backend cannot): not checked"))
    return results


def check_ecmp(backend: LabBackend, plan: LabPlan, down: frozenset[str] = frozenset()) -> list[LabResult]:
    expect = Expectations(plan, down)
    rtsws = [n for n in plan.routers("rtsw") if n.name not in down]
    tables = _parallel([n.name for n in rtsws], lambda n: _reader(backend, n).bgp_routes(backend, n))
    results = []
    for source in rtsws:
        table = tables[source.name]
        wrong, checked, widths = [], 0, set()
        for target in rtsws:
            if target is source:
                continue
            want = expect.width(source, target)
            for prefix in target.announces:
                checked += 1
                got = table.get(str(ip_interface(prefix).network), 0)
                widths.add(want)
                if got != want:
                    wrong.append(f"{prefix} ({target.name}) has {got} next hop(s), expected {want}")
        detail = (f"{checked} prefixes of {len(rtsws) - 1} other RTSW(s), ECMP width {sorted(widths)}"
                  if not wrong else f"{len(wrong)} of {checked} wrong: " + "; ".join(wrong[:4])
                  + (" ..." if len(wrong) > 4 else ""))
        results.append(LabResult("ecmp", source.name, "routes to every other RTSW", not wrong, detail))
    return results


@dataclass(frozen=True, slots=True)
class PingPair:
    node: str  # where ping runs
    source: str  # source address
    target: str
    target_node: str
    kind: str  # loopback | loopback-v6 | host


def ping_pairs(plan: LabPlan, skip: frozenset[str] = frozenset()) -> list[PingPair]:
    pairs = []
    rtsws = [n for n in plan.routers("rtsw") if n.name not in skip]
    for family, kind in ((4, "loopback"), (6, "loopback-v6")):
        loops = {n.name: next((a for a in n.announces if ip_interface(a).version == family
                               and ip_interface(a).network.prefixlen == ip_interface(a).max_prefixlen), None)
                 for n in rtsws}
        for a in rtsws:
            for b in rtsws:
                la, lb = loops[a.name], loops[b.name]
                if a is not b and la and lb:
                    pairs.append(PingPair(a.name, str(ip_interface(la).ip), str(ip_interface(lb).ip), b.name, kind))
    hosts = [h for h in plan.hosts() if h.attached_to not in skip]
    for a in hosts:
        for b in hosts:
            if a is not b and a.host_ipv4 and b.host_ipv4:
                pairs.append(PingPair(a.name, str(ip_interface(a.host_ipv4).ip), str(ip_interface(b.host_ipv4).ip),
                                      b.name, "host"))
    return pairs


def check_pings(backend: LabBackend, plan: LabPlan, skip: frozenset[str] = frozenset(),
                label: str = "ping") -> list[LabResult]:
    pairs = ping_pairs(plan, skip)

    def one(pair: PingPair) -> ExecResult:
        # One echo is enough when the path works; a failure gets a second chance with three echoes
        # (a first packet can be lost to ARP/ND resolution), so a pass costs milliseconds.
        base = ["ping", "-n", "-q", "-W", "1", "-I", pair.source, pair.target]
        result = backend.exec(pair.node, [*base[:-3], "-c", "1", *base[-3:]], timeout=10)
        if result.ok:
            return result
        return backend.exec(pair.node, [*base[:-3], "-c", "3", "-i", "0.2", *base[-3:]], timeout=10)

    with ThreadPoolExecutor(max_workers=WORKERS * 2) as pool:
        outcomes = list(pool.map(one, pairs))
    by_kind: dict[str, list[str]] = {}
    totals: dict[str, int] = {}
    for pair, result in zip(pairs, outcomes, strict=True):
        totals[pair.kind] = totals.get(pair.kind, 0) + 1
        if not result.ok:
            by_kind.setdefault(pair.kind, []).append(f"{pair.node} {pair.source} -> {pair.target_node} {pair.target}")
    results = []
    for kind, total in totals.items():
        failed = by_kind.get(kind, [])
        more = " ..." if len(failed) > 4 else ""
        detail = (f"{total} pairs answered" if not failed
                  else f"{len(failed)} of {total} pairs failed: " + "; ".join(failed[:4]) + more)
        results.append(LabResult(label, failed[0].split(" ", 1)[0] if failed else "*", f"{kind} mesh", not failed,
                                 detail))
    return results


def converged(results: list[LabResult]) -> bool:
    return all(r.ok for r in results)


def wait_for(probe: Callable[[], list[LabResult]], timeout: float,
             tick: Callable[[list[LabResult]], None] | None = None) -> tuple[list[LabResult], float]:
    """Poll until every result is ok or the timeout passes; returns the last results and seconds."""
    start = time.monotonic()
    interval = 0.5
    while True:
        results = probe()
        if tick:
            tick(results)
        elapsed = time.monotonic() - start
        if converged(results) or elapsed >= timeout:
            return results, elapsed
        time.sleep(interval)
        interval = min(interval * 1.5, 2.0)


def routing_state(backend: LabBackend, plan: LabPlan, down: frozenset[str] = frozenset()) -> list[LabResult]:
    return check_sessions(backend, plan) + check_ecmp(backend, plan, down)


# --- the drill ------------------------------------------------------------------------------------

DRILL_MODES = ("drain", "cut")


def _drill_commands(plan: LabPlan, target: LabNode, mode: str, restore: bool) -> list[list[str]]:
    if mode == "cut":  # every cable of the switch goes dark, as if it lost power
        state = "up" if restore else "down"
        ports = [link.b_if if link.b == target.name else link.a_if for link in plan.links
                 if target.name in (link.a, link.b)]
        return [["ip", "link", "set", "dev", port, state] for port in ports]
    # drain: shut every BGP session, as an operator drains a spine before maintenance
    neighbours = [s.a_ip if s.b == target.name else s.b_ip for s in plan.sessions if target.name in (s.a, s.b)]
    prefix = "no " if restore else ""
    script = ["vtysh", "-c", "configure terminal", "-c", f"router bgp {target.asn}"]
    for address in neighbours:
        script += ["-c", f"{prefix}neighbor {address} shutdown"]
    return [script]


def run_drill(backend: LabBackend, plan: LabPlan, target_name: str | None, mode: str,
              timeout: float = 60.0) -> list[LabResult]:
    ctsws = plan.routers("ctsw")
    if not ctsws:
        raise LabError("the drill needs a CTSW in the lab slice")
    if target_name is None:
        target = ctsws[0]
    elif target_name in plan.nodes and plan.nodes[target_name].role == "ctsw":
        target = plan.nodes[target_name]
    else:
        raise LabError(f"--drill-device {target_name!r}: choose a CTSW of the lab: "
                       + ", ".join(n.name for n in ctsws[:8]))
    if backend.node_flavour(target.name) != "frr" and mode == "drain":
        raise LabError(f"{target.name}: the drain drill needs an FRR node; use --drill-mode cut")
    results: list[LabResult] = []
    down = frozenset({target.name})
    subject = f"{mode} {target.name}"

    def apply(restore: bool) -> None:
        for argv in _drill_commands(plan, target, mode, restore):
            result = backend.exec(target.name, argv)
            if not result.ok:
                raise LabError(f"{target.name}: drill command {' '.join(argv[:6])} failed: {result.stderr.strip()}")

    before = {s.label() for s in plan.sessions if target.name not in (s.a, s.b)}
    apply(restore=False)
    try:
        ecmp, seconds = wait_for(lambda: check_ecmp(backend, plan, down), timeout)
        results.append(LabResult("drill", target.name, f"{subject}: ECMP shrinks", converged(ecmp),
                                 f"every RTSW at the reduced width after {seconds:.1f} s" if converged(ecmp)
                                 else "; ".join(r.detail for r in ecmp if not r.ok)[:600]))
        pings = check_pings(backend, plan, label="drill")
        results += [LabResult("drill", r.node, f"{subject}: {r.subject} while out", r.ok, r.detail) for r in pings]
        others = [r for r in check_sessions(backend, plan) if r.subject in before]
        bad = [r for r in others if not r.ok]
        results.append(LabResult("drill", target.name, f"{subject}: other sessions stay up", not bad,
                                  f"{len(others)} sessions not touching {target.name} stayed Established" if not bad
                                  else "; ".join(r.detail for r in bad[:3])))
    finally:
        apply(restore=True)
    state, seconds = wait_for(lambda: routing_state(backend, plan), timeout)
    results.append(LabResult("drill", target.name, f"{subject}: restored", converged(state),
                             f"all sessions Established and full ECMP again after {seconds:.1f} s"
                             if converged(state) else "; ".join(r.detail for r in state if not r.ok)[:600]))
    return results


# --- the report -----------------------------------------------------------------------------------


def verify(backend: LabBackend, drill: bool = False, drill_device: str | None = None, drill_mode: str = "drain",
           wait: float = 0.0) -> dict[str, Any]:
    plan = backend.plan()
    if wait > 0:
        routing, _ = wait_for(lambda: routing_state(backend, plan), wait)
    else:
        routing = routing_state(backend, plan)
    results = routing + check_lldp(backend, plan) + check_pings(backend, plan)
    if drill:
        results += run_drill(backend, plan, drill_device, drill_mode)
    failed = [r for r in results if not r.ok]
    sessions = [r for r in results if r.check == "bgp-session"]
    return {
        "lab": plan.lab,
        "fabric": plan.fabric,
        "slice": plan.slice,
        "ok": not failed,
        "sessions_expected": len(sessions),
        "sessions_established": sum(1 for r in sessions if r.ok),
        "sessions_outside_slice": plan.sessions_outside,
        "checks": len(results),
        "failed": len(failed),
        "results": [r.as_dict() for r in results],
        "frr_sources": sorted({f"{n.nos}: {n.frr_source}" for n in plan.routers()}),
        "not_exercised": NOT_EXERCISED,
    }
