"""Verify a running lab against its plan: BGP sessions, ECMP width in the forwarding table,
reachability, and a failure drill. Backend-neutral: it uses only the `LabBackend` contract.

Expectations come from the plan (what the topology says), never from the routers: a session is
expected on every cable inside the slice; each RTSW must reach every other RTSW's originated
prefixes over exactly the CTSW uplinks whose CTSW can still reach that RTSW.

Not verifiable here, and said in every report: PFC, ECN, buffers, queues and QP hashing are ASIC
behaviour that neither FRR, the kernel, cEOS nor sonic-vs implement; render-time checks cover them.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from ipaddress import ip_interface
from typing import Any, Protocol

from netgen.lab.backend import ExecResult, LabBackend, LabError, StatefulBackend, prefix_text
from netgen.lab.plan import LabNode, LabPlan
from netgen.lab.traffic import PhaseLoss, TrafficRun, TrafficSpec
from netgen.platforms import frr_drain

NOT_EXERCISED = ("PFC, ECN/DCQCN, buffers, queue scheduling and QP hashing are ASIC features: neither FRR, the"
                 " kernel, cEOS nor sonic-vs implement them, so the lab cannot test them; `netgen render` checks"
                 " them against the NOS models instead")
WORKERS = 4  # parallel probes: each a process or a socket read the routers answer; 2 cores


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
    established: int | None = None  # FRR's connectionsEstablished: sessions brought up since bgpd started
    dropped: int | None = None  # connectionsDropped
    received: int | None = None  # prefixes accepted from the peer (FRR's pfxRcd)
    overflow: bool = False  # the peer was stopped for sending more than its maximum-prefix


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


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class FrrReader:
    """FRR (netns routers, sonic-vs): `show bgp summary json` and the kernel FIB, which is what
    actually forwards."""

    def peers(self, backend: LabBackend, node: str) -> dict[str, Peer]:
        data = _json(backend.show(node, "bgpd", "show bgp summary json"), node, "show bgp summary json")
        peers: dict[str, Peer] = {}
        for family in (data or {}).values():
            if not isinstance(family, dict):
                continue
            local_as = as_number(family.get("as"))
            for address, info in family.get("peers", {}).items():
                peers[address] = Peer(str(info.get("state", "?")), as_number(info.get("remoteAs")), local_as,
                                      _count(info.get("connectionsEstablished")),
                                      _count(info.get("connectionsDropped")), _count(info.get("pfxRcd")),
                                      info.get("peerState") == "PfxCt")
        return peers

    def bgp_routes(self, backend: LabBackend, node: str) -> dict[str, int]:
        return backend.kernel_routes(node, "bgp")


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
                                      as_number(vrf.get("asn")), received=_count(info.get("prefixReceived")))
        return peers

    def bgp_routes(self, backend: LabBackend, node: str) -> dict[str, int]:
        routes: dict[str, int] = {}
        for command, v6 in (("show ip route", False), ("show ipv6 route", True)):
            vrf = self._cli(backend, node, command).get("vrfs", {}).get("default", {})
            for prefix, info in vrf.get("routes", {}).items():
                if "BGP" in str(info.get("routeType", "")).upper():
                    routes[prefix_text(prefix, v6)] = len(info.get("vias", []))
        return routes


READERS: dict[str, RoutingReader] = {"frr": FrrReader(), "eos": EosReader()}


def _reader(backend: LabBackend, node: str) -> RoutingReader:
    return READERS[backend.node_flavour(node)]


# --- expectations ---------------------------------------------------------------------------------


@dataclass
class Expectations:
    """ECMP widths the topology predicts, for a set of switches taken out of service. Which CTSWs
    reach an RTSW, and each RTSW's uplinks, are worked out once per RTSW: a zone's check asks for
    192 x 191 widths every poll."""

    plan: LabPlan
    down: frozenset[str] = frozenset()
    _adj: dict[tuple[str, str], int] = field(default_factory=dict)
    _ctsws: list[LabNode] = field(default_factory=list)
    _atsws: list[LabNode] = field(default_factory=list)
    _reachers: dict[str, frozenset[str]] = field(default_factory=dict)  # RTSW -> CTSWs that reach it
    _uplinks: dict[str, dict[str, int]] = field(default_factory=dict)  # RTSW -> CTSW -> links in service

    def __post_init__(self) -> None:
        for link in self.plan.links:
            self._adj[(link.a, link.b)] = self._adj.get((link.a, link.b), 0) + 1
        self._ctsws = self.plan.routers("ctsw")
        self._atsws = self.plan.routers("atsw")

    def _linked(self, lower: str, upper: str) -> bool:
        return (lower, upper) in self._adj and lower not in self.down and upper not in self.down

    def _ctsw_reaches(self, ctsw: LabNode, rtsw: LabNode) -> bool:
        if ctsw.zone == rtsw.zone:  # zone spines share an ASN: only the direct link carries the route
            return self._linked(rtsw.name, ctsw.name)
        for atsw in self._atsws:
            if not self._linked(ctsw.name, atsw.name):
                continue
            for other in self._ctsws:
                if other.zone == rtsw.zone and self._linked(other.name, atsw.name) and self._linked(rtsw.name,
                                                                                                   other.name):
                    return True
        return False

    def width(self, source: LabNode, target: LabNode) -> int:
        """Next hops `source` (an RTSW) should have towards `target`'s prefixes."""
        if target.name not in self._reachers:
            self._reachers[target.name] = frozenset(c.name for c in self._ctsws if self._ctsw_reaches(c, target))
        if source.name not in self._uplinks:
            self._uplinks[source.name] = {c.name: self._adj[(source.name, c.name)] for c in self._ctsws
                                          if self._linked(source.name, c.name)}
        reachers = self._reachers[target.name]
        return sum(links for ctsw, links in self._uplinks[source.name].items() if ctsw in reachers)


# --- checks ---------------------------------------------------------------------------------------


def in_parallel(items: Iterable[str], work: Callable[[str], Any]) -> dict[str, Any]:
    names = list(items)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return dict(zip(names, pool.map(work, names), strict=True))


def check_sessions(backend: LabBackend, plan: LabPlan) -> list[LabResult]:
    routers = [n.name for n in plan.routers()]
    seen = in_parallel(routers, lambda n: _reader(backend, n).peers(backend, n))
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
    return results + check_prefix_limits(plan, seen)


_MAX_PREFIX = re.compile(r"^\s+neighbor (\S+) maximum-prefix (\d+)")
_GROUP_MEMBER = re.compile(r"^\s*neighbor (\S+) peer-group (\S+)$")


def prefix_limits(frr_conf: str) -> dict[str, int]:
    """Each neighbor's maximum-prefix in a router's FRR config: set on the neighbor, else on its
    peer group (the smallest where several address families set one)."""
    own: dict[str, int] = {}
    groups: dict[str, str] = {}
    for line in frr_conf.splitlines():
        if match := _MAX_PREFIX.match(line):
            name, limit = match.group(1), int(match.group(2))
            own[name] = min(limit, own.get(name, limit))
        elif match := _GROUP_MEMBER.match(line):
            groups[match.group(1)] = match.group(2)
    limits = {member: own[group] for member, group in groups.items() if group in own}
    return {**limits, **{name: limit for name, limit in own.items() if name not in groups.values()}}


def check_prefix_limits(plan: LabPlan, seen: dict[str, dict[str, Peer]]) -> list[LabResult]:
    """No router's peer sends more prefixes than the rendered maximum-prefix allows (FRR would stop
    the session): one result per router with the fullest peer, so a design that runs close to its
    limits shows it."""
    results = []
    for node in plan.routers():
        limits = prefix_limits(node.frr_conf or "")
        measured = [(peer.received / limits[address], address, peer) for address, peer in seen[node.name].items()
                    if address in limits and peer.received is not None]
        if not limits or not measured:
            continue
        over = [f"{address} sent {peer.received} of {limits[address]}" + (" and was stopped" if peer.overflow else "")
                for _, address, peer in measured if peer.overflow or (peer.received or 0) > limits[address]]
        share, address, peer = max(measured, key=lambda m: m[0])
        detail = ("; ".join(over) if over else
                  f"fullest: {address} {peer.received} of {limits[address]} prefixes ({share:.0%}),"
                  f" {len(measured)} peer(s) with a limit")
        results.append(LabResult("maximum-prefix", node.name, "prefixes received within maximum-prefix", not over,
                                 detail))
    return results


def check_lldp(backend: LabBackend, plan: LabPlan) -> list[LabResult]:
    """Every cabled port hears the planned neighbour on the planned port (LLDP, both ends of every
    cable). A miscabled pair shows as two ports each hearing the other's planned neighbour; the
    result names the port, what it hears and what the plan says. Nodes whose backend cannot read
    LLDP are left out (said in one result)."""
    heard = in_parallel(list(plan.nodes), backend.lldp_neighbors)
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
    tables = in_parallel([n.name for n in rtsws], lambda n: _reader(backend, n).bgp_routes(backend, n))
    networks = {n.name: [(prefix, str(ip_interface(prefix).network)) for prefix in n.announces] for n in rtsws}
    results = []
    for source in rtsws:
        table = tables[source.name]
        wrong, checked, widths = [], 0, set()
        for target in rtsws:
            if target is source:
                continue
            want = expect.width(source, target)
            for prefix, network in networks[target.name]:
                checked += 1
                got = table.get(network, 0)
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


# Each ping is a process in a node: a full mesh of a zone's 192 racks would be 110,000 of them. Past
# this many pairs of a kind, every node pings the same number of others, spread evenly around the
# lab (every node is a source and a target equally often); the result says it sampled. Every
# route itself is checked on every RTSW by the ECMP check.
PING_PAIRS_PER_KIND = 400


def ping_offsets(count: int, limit: int = PING_PAIRS_PER_KIND) -> list[int]:
    """The offsets (in the sorted list of `count` nodes) each node pings: all others while the full
    mesh has at most `limit` pairs, else as many as fit, evenly spaced."""
    if count * (count - 1) <= limit:
        return list(range(1, count))
    per_node = max(1, limit // count)
    return sorted({max(1, min(count - 1, round(count * j / (per_node + 1)))) for j in range(1, per_node + 1)})


def ping_pairs(plan: LabPlan, skip: frozenset[str] = frozenset()) -> list[PingPair]:
    pairs = []
    rtsws = [n for n in plan.routers("rtsw") if n.name not in skip]
    for family, kind in ((4, "loopback"), (6, "loopback-v6")):
        loops = {n.name: next((a for a in n.announces if ip_interface(a).version == family
                               and ip_interface(a).network.prefixlen == ip_interface(a).max_prefixlen), None)
                 for n in rtsws}
        ends = [n for n in rtsws if loops[n.name]]
        for i, a in enumerate(ends):
            for offset in ping_offsets(len(ends)):
                b = ends[(i + offset) % len(ends)]
                la, lb = loops[a.name], loops[b.name]
                assert la and lb
                pairs.append(PingPair(a.name, str(ip_interface(la).ip), str(ip_interface(lb).ip), b.name, kind))
    hosts = [h for h in plan.hosts() if h.attached_to not in skip and h.host_ipv4]
    for i, a in enumerate(hosts):
        for offset in ping_offsets(len(hosts)):
            b = hosts[(i + offset) % len(hosts)]
            assert a.host_ipv4 and b.host_ipv4
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
    ends = {kind: len({pair.node for pair in pairs if pair.kind == kind}) for kind in totals}
    for kind, total in totals.items():
        failed = by_kind.get(kind, [])
        more = " ..." if len(failed) > 4 else ""
        mesh = ends[kind] * (ends[kind] - 1)
        sampled = (f" (sampled: each of {ends[kind]} to {total // ends[kind]} others, evenly spaced; the full mesh"
                   f" is {mesh} pairs)" if total < mesh else "")
        detail = (f"{total} pairs answered{sampled}" if not failed
                  else f"{len(failed)} of {total} pairs failed{sampled}: " + "; ".join(failed[:4]) + more)
        results.append(LabResult(label, failed[0].split(" ", 1)[0] if failed else "*", f"{kind} mesh", not failed,
                                 detail))
    return results


def converged(results: list[LabResult]) -> bool:
    return all(r.ok for r in results)


def wait_for(probe: Callable[[], list[LabResult]], timeout: float,
             tick: Callable[[list[LabResult]], None] | None = None) -> tuple[list[LabResult], float]:
    """Poll until every result is ok or the timeout passes; returns the last results and seconds.
    A read that fails while the lab converges (a router too busy to answer in time) is one failed
    "read" result of that poll, not the end of the wait: the next poll reads again."""
    start = time.monotonic()
    interval = 0.5
    while True:
        try:
            results = probe()
        except LabError as exc:
            results = [LabResult("read", str(exc).split(":", 1)[0], "lab state", False, str(exc))]
        if tick:
            tick(results)
        elapsed = time.monotonic() - start
        if converged(results) or elapsed >= timeout:
            return results, elapsed
        time.sleep(interval)
        interval = min(interval * 1.5, 2.0)


def up_state(backend: LabBackend, plan: LabPlan) -> Callable[[], list[LabResult]]:
    """What `lab up`, `lab grow` and the benchmark wait for: every session Established, every
    RTSW's ECMP as planned, then LLDP heard on both ends of every cable. LLDP is read once the
    routing has converged (a zone's LLDP read is 400 processes more per poll; LLDP is heard long
    before BGP converges); until then one failed result says it was not read."""

    def probe() -> list[LabResult]:
        routing = routing_state(backend, plan)
        if not converged(routing):
            return [*routing, LabResult("lldp", "-", "every cable", False,
                                        "not read yet: read once every session and ECMP width is as planned")]
        return routing + check_lldp(backend, plan)

    return probe


def routing_state(backend: LabBackend, plan: LabPlan, down: frozenset[str] = frozenset()) -> list[LabResult]:
    return check_sessions(backend, plan) + check_ecmp(backend, plan, down)


# --- the drill ------------------------------------------------------------------------------------

# drain: the graceful drain (its sessions and FIB stay; every neighbour stops choosing it first);
# shutdown: every BGP session shut (a hard stop); cut: every port down, as if it lost power
DRILL_MODES = ("drain", "shutdown", "cut")
# each mode's phases, as the traffic counts them: steady before, going out, out, coming back, steady after
PHASES = {"drain": ("before", "drain", "drained", "undrain", "after"),
          "shutdown": ("before", "shutdown", "shut", "no-shutdown", "after"),
          "cut": ("before", "cut", "out", "restore", "after")}


@dataclass(frozen=True, slots=True)
class GracefulDrain:
    """How the drill drains an FRR router gracefully and reads it back: by default netgen's own
    (FRR_DRAIN: netgen/platforms/frr_drain.py, as a SONiC switch is drained); a test may hand in
    another to see the drill judge a drain that fails."""

    drain: Callable[[str], list[str]]  # the router's FRR config -> the vtysh lines that drain it
    undrain: Callable[[str], list[str]]  # ... that remove exactly what `drain` added
    drained: Callable[[str], bool | None]  # its running config -> drained, not drained, or neither


FRR_DRAIN = GracefulDrain(drain=lambda conf: frr_drain.drain_commands(frr_drain.scope_of_config(conf)),
                          undrain=lambda conf: frr_drain.undrain_commands(frr_drain.scope_of_config(conf)),
                          drained=frr_drain.drained_state)


def _vtysh(lines: list[str]) -> list[str]:
    argv = ["vtysh"]
    for line in lines:
        argv += ["-c", line]
    return argv


def _drill_commands(plan: LabPlan, target: LabNode, mode: str, restore: bool,
                    graceful: GracefulDrain | None = None) -> list[list[str]]:
    if mode == "cut":  # every cable of the switch goes dark, as if it lost power
        state = "up" if restore else "down"
        ports = [link.b_if if link.b == target.name else link.a_if for link in plan.links
                 if target.name in (link.a, link.b)]
        return [["ip", "link", "set", "dev", port, state] for port in ports]
    if mode == "drain":
        if graceful is None or target.frr_conf is None:
            raise LabError(f"{target.name}: the graceful drain needs the router's FRR config and the drain's commands")
        return [_vtysh((graceful.undrain if restore else graceful.drain)(target.frr_conf))]
    # shutdown: shut every BGP session, a hard stop (routes withdrawn with the sessions)
    neighbours = [s.a_ip if s.b == target.name else s.b_ip for s in plan.sessions if target.name in (s.a, s.b)]
    prefix = "no " if restore else ""
    script = ["vtysh", "-c", "configure terminal", "-c", f"router bgp {target.asn}"]
    for address in neighbours:
        script += ["-c", f"{prefix}neighbor {address} shutdown"]
    return [script]


def ecmp_widths(backend: LabBackend, plan: LabPlan) -> dict[str, list[int]]:
    """Per RTSW, the next-hop counts in its forwarding table towards every other RTSW's prefixes
    (each distinct count once; 0 where a prefix is missing)."""
    rtsws = plan.routers("rtsw")
    tables = in_parallel([n.name for n in rtsws], lambda n: _reader(backend, n).bgp_routes(backend, n))
    return {source.name: sorted({tables[source.name].get(str(ip_interface(p).network), 0)
                                 for target in rtsws if target is not source for p in target.announces})
            for source in rtsws}


@dataclass(frozen=True, slots=True)
class _Learned:
    neighbour: str
    address: str  # the drained switch's address on this session
    paths: dict[str, str]  # prefix -> AS path, as the neighbour holds it from this session


def learned_from(backend: LabBackend, plan: LabPlan, target: LabNode) -> list[_Learned]:
    """What each neighbour of `target` learns from it, session by session (FRR `show bgp ...
    neighbors ADDRESS routes json`: the paths of that session the neighbour accepted)."""
    ends = sorted((s.b if s.a == target.name else s.a, s.a_ip if s.a == target.name else s.b_ip, s.afi)
                  for s in plan.sessions if target.name in (s.a, s.b))

    def read(end: tuple[str, str, str]) -> _Learned:
        node, address, afi = end
        command = f"show bgp {afi} unicast neighbors {address} routes json"
        data = _json(backend.show(node, "bgpd", command), node, command) or {}
        paths = {}
        for prefix, entries in (data.get("routes") or {}).items():
            for entry in entries if isinstance(entries, list) else [entries]:
                path = entry.get("path")
                paths[prefix] = str(path if path is not None else (entry.get("aspath") or {}).get("string", ""))
        return _Learned(node, address, paths)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(read, ends))


def compare_learned(before: list[_Learned], during: list[_Learned], asn: int | None) -> tuple[bool, str]:
    """Whether every neighbour learns the same prefixes from the drained switch as before, each on a
    path longer only by the switch's own ASN (prepended): no route leaked, none lost."""
    problems, extra = [], set()
    for old, new in zip(before, during, strict=True):
        if set(old.paths) != set(new.paths):
            gained, lost = sorted(set(new.paths) - set(old.paths)), sorted(set(old.paths) - set(new.paths))
            problems.append(f"{old.neighbour} from {old.address}: gained {gained[:3]}, lost {lost[:3]}")
            continue
        for prefix, path in new.paths.items():
            was, now = old.paths[prefix].split(), path.split()
            added = now[:len(now) - len(was)]
            if now[len(added):] != was or not added or set(added) != {str(asn)}:
                problems.append(f"{old.neighbour} from {old.address}: {prefix} path {path!r},"
                                f" was {old.paths[prefix]!r}")
            else:
                extra.add(len(added))
    if problems:
        return False, f"{len(problems)} difference(s): " + "; ".join(problems[:3])
    counts = {len(s.paths) for s in before}
    return True, (f"{len(before)} sessions: the same prefixes as before ({'/'.join(map(str, sorted(counts)))} each),"
                  f" every path longer by {'/'.join(map(str, sorted(extra)))} x AS {asn}")


@dataclass
class Drill:
    """A drill's results, the ECMP widths every RTSW had before, while the switch was out and after,
    and with traffic, each phase's datagrams sent and lost."""

    device: str
    mode: str
    results: list[LabResult] = field(default_factory=list)
    widths: dict[str, list[list[int]]] = field(default_factory=dict)  # RTSW -> [before, out, after]
    traffic: list[PhaseLoss] = field(default_factory=list)
    forwarded: list[int] = field(default_factory=list)  # per traffic phase: IPv4 datagrams the switch forwarded
    receiver_drops: int = 0
    send_errors: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"device": self.device, "mode": self.mode, "ecmp_widths": self.widths,
                "traffic": [{**p.as_dict(), "forwarded_by_device": n}
                            for p, n in zip(self.traffic, self.forwarded, strict=True)],
                "receiver_buffer_drops": self.receiver_drops, "send_errors": self.send_errors}


def forwarded_datagrams(backend: LabBackend, node: str) -> int:
    """The IPv4 datagrams `node` has forwarded (its namespace's Ip ForwDatagrams): the traffic
    through it, never its own BGP, BFD or LLDP."""
    result = backend.exec(node, ["cat", "/proc/net/snmp"])
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith("Ip:")]
    if not result.ok or len(rows) < 2 or "ForwDatagrams" not in rows[0]:
        raise LabError(f"{node}: no Ip ForwDatagrams in /proc/net/snmp")
    return int(rows[1][rows[0].index("ForwDatagrams")])


def _width_text(widths: list[int]) -> str:
    return "/".join(map(str, widths)) or "none"


def _running_config(backend: LabBackend, node: str) -> str:
    result = backend.exec(node, ["vtysh", "-c", "show running-config"])
    if not result.ok:
        raise LabError(f"{node}: show running-config failed: {result.stderr.strip()[:300]}")
    return result.stdout


def _drill_target(plan: LabPlan, target_name: str | None) -> LabNode:
    ctsws = plan.routers("ctsw")
    if not ctsws:
        raise LabError("the drill needs a CTSW in the lab slice")
    if target_name is None:
        return ctsws[0]
    if target_name in plan.nodes and plan.nodes[target_name].role == "ctsw":
        return plan.nodes[target_name]
    raise LabError(f"--drill-device {target_name!r}: choose a CTSW of the lab: " + ", ".join(n.name for n in ctsws[:8]))


@dataclass
class _Steps:
    """One drill's steps on its switch, and the results they add."""

    backend: LabBackend
    plan: LabPlan
    target: LabNode
    mode: str
    graceful: GracefulDrain | None
    results: list[LabResult]

    @property
    def subject(self) -> str:
        return f"{self.mode} {self.target.name}"

    def add(self, what: str, ok: bool, detail: str, node: str | None = None) -> None:
        self.results.append(LabResult("drill", node or self.target.name, f"{self.subject}: {what}", ok, detail))

    def apply(self, restore: bool) -> None:
        for argv in _drill_commands(self.plan, self.target, self.mode, restore, self.graceful):
            result = self.backend.exec(self.target.name, argv)
            if not result.ok:
                raise LabError(f"{self.target.name}: drill command {' '.join(argv[:6])} failed:"
                               f" {result.stderr.strip()}")

    def read_back(self, want: bool, what: str) -> None:
        assert self.graceful is not None
        state = self.graceful.drained(_running_config(self.backend, self.target.name))
        reads = "drained" if state else "neither drained nor undrained" if state is None else "not drained"
        self.add(what, state is want, f"its running config reads {reads}")

    def drained_checks(self, learned: list[_Learned]) -> None:
        """While a graceful drain holds: read back, drained again (nothing changes), no route leaked."""
        self.read_back(True, "read back drained")
        held = _running_config(self.backend, self.target.name)
        self.apply(restore=False)
        same = _running_config(self.backend, self.target.name) == held
        self.add("drained twice adds nothing", same, "the running config is the same after a second drain" if same
                 else "a second drain changed the running config")
        ok, detail = compare_learned(learned, learned_from(self.backend, self.plan, self.target), self.target.asn)
        self.add("no route leaked", ok, detail)

    def out_checks(self, sessions: set[str]) -> None:
        """While the switch is out, in every mode: pings, and the sessions that must stay up."""
        for r in check_pings(self.backend, self.plan, label="drill"):
            self.add(f"{r.subject} while out", r.ok, r.detail, node=r.node)
        others = [r for r in check_sessions(self.backend, self.plan) if r.subject in sessions]
        bad = [r for r in others if not r.ok]
        graceful = self.mode == "drain"
        self.add("every session stays up" if graceful else "other sessions stay up", not bad,
                 "; ".join(r.detail for r in bad[:3]) if bad else
                 f"{len(others)} sessions{'' if graceful else f' not touching {self.target.name}'} stayed Established")


def _closing_results(steps: _Steps, drill: Drill) -> None:
    steady = all(w[0] == w[2] for w in drill.widths.values())
    steps.add("ECMP widths", steady, ", ".join(f"{rtsw} {' -> '.join(_width_text(x) for x in w)}"
                                               for rtsw, w in drill.widths.items()))
    for loss, through in zip(drill.traffic, drill.forwarded, strict=True):
        # the steady phases lose nothing in every mode, a drain nothing at all; what a shutdown or
        # a cut loses is what the drill measures, never a failure
        lossless = steps.mode == "drain" or loss.phase in ("before", "after")
        steps.add(f"traffic {loss.phase}", loss.lost == 0 or not lossless,
                  f"{loss.describe()}; {drill.device} forwarded {through}")


def run_drill(backend: LabBackend, plan: LabPlan, target_name: str | None, mode: str, timeout: float = 60.0,
              graceful: GracefulDrain = FRR_DRAIN, traffic: TrafficSpec | None = None) -> Drill:
    """Take one CTSW out (`mode`), check every RTSW's ECMP shrinks, pings and sessions while it is
    out (a drain: read back, repeat-safe, no route leaked), put it back and check everything is as
    before; with `traffic`, flows between the hosts count each phase's loss. Each phase ends when
    the read-back says it has (converged), never after a set time."""
    target = _drill_target(plan, target_name)
    if backend.node_flavour(target.name) != "frr" and mode != "cut":
        raise LabError(f"{target.name}: the {mode} drill needs an FRR node; use --drill-mode cut")
    drill = Drill(target.name, mode)
    steps = _Steps(backend, plan, target, mode, graceful, drill.results)
    down = frozenset({target.name})
    going, out, coming = PHASES[mode][1:4]
    widths: list[dict[str, list[int]]] = [ecmp_widths(backend, plan)]
    learned = learned_from(backend, plan, target) if mode == "drain" else []
    sessions = {s.label() for s in plan.sessions if mode == "drain" or target.name not in (s.a, s.b)}
    with contextlib.ExitStack() as stack:
        run = stack.enter_context(TrafficRun(backend, plan, traffic)) if traffic is not None else None
        counts: list[int] = []  # the switch's forwarded datagrams at each mark

        def mark(phase: str) -> None:
            if run is not None:
                counts.append(forwarded_datagrams(backend, target.name))
                run.mark(phase)

        if run is not None:
            run.start()
            mark("before")
            # the traffic settles on a fabric the read-back finds converged, however long that takes
            wait_for(lambda: routing_state(backend, plan), timeout)
        mark(going)
        steps.apply(restore=False)
        try:
            ecmp, seconds = wait_for(lambda: check_ecmp(backend, plan, down), timeout)
            mark(out)
            steps.add("ECMP shrinks", converged(ecmp), f"every RTSW at the reduced width after {seconds:.1f} s"
                      if converged(ecmp) else "; ".join(r.detail for r in ecmp if not r.ok)[:600])
            widths.append(ecmp_widths(backend, plan))
            if mode == "drain":
                steps.drained_checks(learned)
            steps.out_checks(sessions)
        finally:
            mark(coming)
            steps.apply(restore=True)
        state, seconds = wait_for(lambda: routing_state(backend, plan), timeout)
        mark("after")
        steps.add("restored", converged(state), f"all sessions Established and full ECMP again after {seconds:.1f} s"
                  if converged(state) else "; ".join(r.detail for r in state if not r.ok)[:600])
        if mode == "drain":
            steps.read_back(False, "read back undrained")
        widths.append(ecmp_widths(backend, plan))
        if run is not None:
            routing_state(backend, plan)  # the traffic's settle after: one more whole read-back
            counts.append(forwarded_datagrams(backend, target.name))
            drill.traffic = run.stop()
            drill.forwarded = [b - a for a, b in itertools.pairwise(counts)]
            drill.receiver_drops, drill.send_errors = run.receiver_drops, run.send_errors
    drill.widths = {rtsw: [w[rtsw] for w in widths] for rtsw in widths[0]}
    _closing_results(steps, drill)
    return drill


# --- the report -----------------------------------------------------------------------------------


def lab_only_settings(backend: LabBackend) -> list[str]:
    """What the lab runs that the rendered configs do not say (recorded by the backend at build:
    netgen/lab/lab_only.py)."""
    if not isinstance(backend, StatefulBackend):
        return []
    return [str(line) for line in backend.state().get("lab_only", [])]


def verify(backend: LabBackend, drill: bool = False, drill_device: str | None = None, drill_mode: str = "drain",
           wait: float = 0.0, graceful: GracefulDrain = FRR_DRAIN,
           traffic: TrafficSpec | None = None) -> dict[str, Any]:
    plan = backend.plan()
    if wait > 0:
        routing, _ = wait_for(lambda: routing_state(backend, plan), wait)
    else:
        routing = routing_state(backend, plan)
    results = routing + check_lldp(backend, plan) + check_pings(backend, plan)
    # a drained CTSW's updates reach every RTSW and each reinstalls every other rack's routes: at a
    # zone's width that takes minutes on this machine class, so the wait grows with the lab
    timeout = max(60.0, 1.5 * len(plan.routers()))
    drilled = (run_drill(backend, plan, drill_device, drill_mode, timeout=timeout, graceful=graceful, traffic=traffic)
               if drill else None)
    if drilled is not None:
        results += drilled.results
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
        "lab_only": lab_only_settings(backend),
        "not_exercised": NOT_EXERCISED,
        **({"drill": drilled.as_dict()} if drilled is not None else {}),
    }
