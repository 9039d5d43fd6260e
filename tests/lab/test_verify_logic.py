"""Verification logic against a fake lab: canned FRR 8.4 JSON (`show bgp summary json`,
`ip -j route show proto bgp`) and ping exit codes, so every check's verdict and message is tested
without root or FRR daemons.

The fake derives its answers from the topology and a hand-written model of the small example's
ECMP widths (4 links to each of a zone's 4 CTSWs; cross-zone paths through the ATSW layer), never
from the verification code's own expectations."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from ipaddress import ip_interface
from typing import Any, ClassVar

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.backend import ExecReads, ExecResult, LabError
from netgen.lab.plan import LabNode, LabPlan, SliceRequest
from netgen.lab.verify import (
    NOT_EXERCISED,
    EosReader,
    Expectations,
    FrrReader,
    GracefulDrain,
    _drill_commands,
    as_number,
    check_ecmp,
    check_pings,
    check_sessions,
    ping_offsets,
    prefix_limits,
    run_drill,
    up_state,
    verify,
    wait_for,
)
from netgen.platforms.frr_drain import (
    DrainScope,
    drain_commands,
    drained_state,
    scope_of_config,
    undrain_commands,
    vtysh_argv,
)
from netgen.topology import Topology, expand
from netgen.topology.model import Role

pytestmark = pytest.mark.render

SUMMARY = ("vtysh", "-c", "show bgp summary json")
AFI_KEY = {"ipv4": "ipv4Unicast", "ipv6": "ipv6Unicast"}
# the drill's graceful drain as the CLI hands it in (netgen/cli/lab.py)
GRACEFUL = GracefulDrain(drain=lambda conf: drain_commands(scope_of_config(conf)),
                         undrain=lambda conf: undrain_commands(scope_of_config(conf)), drained=drained_state)
DRAIN_SCOPE = DrainScope(4200000001, ("RM-FABRIC-OUT", "RM-ZONE-01-OUT"))  # a CTSW: to its RTSWs, to the ATSWs
ASN = {"z01-ctsw01": 4200000001, "z01-rtsw001": 4201010001, "z02-rtsw004": 4201020004, "atsw01": 4200000000}


def hand_width(topo: Topology, source: str, target: str, down: frozenset[str],
               present: frozenset[str] | None = None) -> int:
    """The small example by hand: an RTSW has 4 links to each CTSW of its zone in the lab. Inside
    the zone every such CTSW still up carries the route; across zones a CTSW carries it only while
    an ATSW is up and the target zone keeps a CTSW."""
    src, dst = topo.devices[source], topo.devices[target]

    def up(names: list[str]) -> list[str]:
        return [n for n in names if n not in down and (present is None or n in present)]

    up_here = up([f"z{src.zone:02d}-ctsw{i:02d}" for i in range(1, 5)])
    if src.zone == dst.zone:
        return 4 * len(up_here)
    up_there = up([f"z{dst.zone:02d}-ctsw{i:02d}" for i in range(1, 5)])
    return 4 * len(up_here) if up_there and up(["atsw01", "atsw02"]) else 0


class FakeLab(ExecReads):
    """Implements the LabBackend methods verification uses: exec, node_flavour, plan; show and
    kernel_routes through exec, as a backend without a closer way in reads them."""

    kind: ClassVar[str] = "fake"

    def __init__(self, plan: LabPlan, topo: Topology) -> None:
        self.lab = plan.lab
        self._plan = plan
        self.topo = topo
        self.calls: list[tuple[str, tuple[str, ...], float]] = []
        self._lock = threading.Lock()
        inside = set(plan.nodes)
        # node -> peer address -> (afi, peer device, peer ASN), from the topology's sessions
        self.neighbors: dict[str, dict[str, tuple[str, str, int]]] = {n.name: {} for n in plan.routers()}
        for s in topo.sessions:
            if s.lower_device in inside and s.upper_device in inside:
                self.neighbors[s.lower_device][str(s.upper_ip.ip)] = (s.afi, s.upper_device, s.upper_asn)
                self.neighbors[s.upper_device][str(s.lower_ip.ip)] = (s.afi, s.lower_device, s.lower_asn)
        self.peer_override: dict[tuple[str, str], dict[str, Any] | None] = {}  # None: peer not configured
        self.width_override: dict[tuple[str, str], int] = {}  # (rtsw, prefix) -> next hops
        self.ping_failures: dict[tuple[str, str], int] = {}  # (node, target ip) -> failing attempts
        self.out: set[str] = set()  # switches the drill took out (drained or cut)
        self.honour_drill = True  # False: a broken fabric whose routes ignore the drain
        self.drained: set[str] = set()  # switches gracefully drained: sessions up, routes avoid them
        self.entries: dict[str, dict[str, list[str]]] = {}  # node -> route-map entry header -> its lines
        self.leak: list[str] = []  # prefixes a drained switch announces that it did not before
        # LLDP as cabled: (node, ifname) -> (system, port ID) heard, the port ID being what the far
        # end's NOS sends (SONiC: the PORT alias; EOS: its interface name; a host: its NIC's name);
        # a swap or a deletion miscables
        self.sends = {(node.name, intf.name): intf.lldp_id for node in plan.nodes.values() for intf in node.interfaces}
        self.lldp: dict[tuple[str, str], tuple[str, str]] = {}
        for link in plan.links:
            self.lldp[(link.a, link.a_if)] = (link.b, self.sends[(link.b, link.b_if)])
            self.lldp[(link.b, link.b_if)] = (link.a, self.sends[(link.a, link.a_if)])

    # --- the backend contract ---
    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        argv = tuple(argv)
        with self._lock:
            self.calls.append((node, argv, timeout))
        if argv == SUMMARY:
            return ExecResult(0, json.dumps(self.summary(node)), "")
        if argv[:3] == ("ip", "-j", "-4") or argv[:3] == ("ip", "-j", "-6"):
            assert argv[3:] == ("route", "show", "proto", "bgp")
            return ExecResult(0, json.dumps(self.routes(node, argv[2] == "-6")), "")
        if argv[0] == "ping":
            key = (node, argv[-1])
            with self._lock:
                left = self.ping_failures.get(key, 0)
                if left:
                    self.ping_failures[key] = left - 1
            return ExecResult(1 if left else 0, "", "")
        if argv == ("vtysh", "-c", "show running-config"):
            return ExecResult(0, self.running_config(node), "")
        if argv[:2] == ("vtysh", "-c") and argv[2].startswith("show bgp ") and argv[2].endswith(" routes json"):
            return ExecResult(0, json.dumps(self.learned(node, argv[2].split()[5])), "")
        graceful = argv[4:5] and argv[4].startswith(("route-map ", "no route-map "))
        if argv[:4] == ("vtysh", "-c", "configure terminal", "-c") and graceful:
            self.apply_drain(node, list(argv[2::2]))
            return ExecResult(0, "", "")
        if argv[:4] == ("vtysh", "-c", "configure terminal", "-c"):
            lines = argv[6::2]
            if all(line.startswith("no neighbor ") for line in lines):
                self.out.discard(node)
            elif all(line.startswith("neighbor ") and line.endswith(" shutdown") for line in lines):
                self.out.add(node)
            return ExecResult(0, "", "")
        if argv[:4] == ("ip", "link", "set", "dev"):
            (self.out.add if argv[5] == "down" else self.out.discard)(node)
            return ExecResult(0, "", "")
        return ExecResult(127, "", f"fake lab: unexpected command {argv}")

    def node_flavour(self, node: str) -> str:
        return "frr" if self._plan.nodes[node].kind == "router" else "host"

    # --- the graceful drain, as FRR would hold it ---
    def apply_drain(self, node: str, lines: list[str]) -> None:
        """Route-map entries made and removed by vtysh lines; a drained switch is one whose
        outbound maps all have the drain's entry (the fake routes then avoid it)."""
        entries = self.entries.setdefault(node, {})
        current: str | None = None
        for line in lines:
            if line.startswith("route-map "):
                current = line
                entries[current] = []
            elif line.startswith("no route-map "):
                entries.pop(line.removeprefix("no "), None)
            elif line in ("exit", "end"):
                current = None
            elif current is not None:
                entries[current].append(line)
        if self.honour_drill:
            (self.drained.add if entries else self.drained.discard)(node)

    def running_config(self, node: str) -> str:
        blocks = [f"{header}\n" + "".join(f" {line}\n" for line in body) + "exit\n!\n"
                  for header, body in self.entries.get(node, {}).items()]
        return (self._plan.nodes[node].frr_conf or "") + "".join(blocks)

    def learned(self, node: str, address: str) -> dict[str, Any]:
        """What `node` learns over the session to `address`: every other RTSW's loopback, through
        the switch at `address` (prepended 3 times while it is drained), plus `leak` while it is."""
        _, device, asn = self.neighbors[node][address]
        drained = device in self.drained
        routes = {}
        for target in self.topo.devices.values():
            if target.role is Role.RTSW and target.name != node:
                path = " ".join([str(asn)] * (4 if drained else 1) + [str(target.asn)])
                routes[str(target.loopback_ipv4)] = [{"valid": True, "path": path}]
        if drained:
            routes.update({prefix: [{"valid": True, "path": f"{asn} {asn} {asn} {asn}"}] for prefix in self.leak})
        return {"routes": routes}

    def lldp_neighbors(self, node: str) -> dict[str, tuple[str, str]] | None:
        return {ifname: heard for (owner, ifname), heard in self.lldp.items() if owner == node}

    def plan(self) -> LabPlan:
        return self._plan

    # --- canned answers ---
    def summary(self, node: str) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for address, (afi, peer, asn) in self.neighbors[node].items():
            family = data.setdefault(AFI_KEY[afi], {"routerId": "x", "as": self.topo.devices[node].asn, "peers": {}})
            state = "Idle (Admin)" if self.out & {node, peer} else "Established"
            info: dict[str, Any] | None = {"remoteAs": asn, "state": state, "pfxRcd": 1}
            if (node, address) in self.peer_override:
                override = self.peer_override[(node, address)]
                info = None if override is None else {**info, **override}
            if info is not None:
                family["peers"][address] = info
        return data

    def routes(self, node: str, v6: bool) -> list[dict[str, Any]]:
        device = self.topo.devices[node]
        if device.role is not Role.RTSW:
            return []
        uplinks = [p for p in self.topo.ports[node] if p.ipv4 is not None]
        down = frozenset(self.out | self.drained) if self.honour_drill else frozenset()
        table = []
        for target in self.topo.devices.values():
            if target.name == node or target.name not in self._plan.nodes:
                continue
            if target.role is not Role.RTSW:  # other switches' loopbacks: present, never checked
                prefixes = [target.loopback_ipv6 if v6 else target.loopback_ipv4]
                width = 16
            else:
                prefixes = ([target.loopback_ipv6, target.host_subnet_ipv6] if v6
                            else [target.loopback_ipv4, target.host_subnet_ipv4])
                width = hand_width(self.topo, node, target.name, down, frozenset(self._plan.nodes))
            for prefix in prefixes:
                if prefix is None:
                    continue
                net = ip_interface(prefix).network
                n = self.width_override.get((node, str(net)), width)
                # as `ip -j route` prints it: a host route without its /32 or /128
                dst = str(net.network_address) if net.prefixlen == net.max_prefixlen else str(net)
                hops = [{"gateway": str(ip_interface(p.ipv6 if v6 else p.ipv4).ip), "dev": p.name, "weight": 1,
                         "flags": []} for p in uplinks[:n]]
                if n == 1:
                    table.append({"dst": dst, "protocol": "bgp", "metric": 20, "flags": [], **hops[0]})
                elif n > 1:
                    table.append({"dst": dst, "protocol": "bgp", "metric": 20, "flags": [], "nexthops": hops})
        return table


@pytest.fixture
def lab(plan, ctx) -> FakeLab:
    return FakeLab(plan, ctx.topology)


def _rtsws(plan: LabPlan, zone: int | None = None) -> list:
    return [n for n in plan.routers("rtsw") if zone is None or n.zone == zone]


# --- Expectations.width ---------------------------------------------------------------------------


def test_width_is_16_everywhere_when_nothing_is_down(plan):
    expect = Expectations(plan)
    pairs = [(a, b) for a in _rtsws(plan) for b in _rtsws(plan) if a is not b]
    assert len(pairs) == 56
    assert {expect.width(a, b) for a, b in pairs} == {16}


def test_width_with_one_zone_spine_down(plan):
    expect = Expectations(plan, frozenset({"z01-ctsw01"}))
    for a in _rtsws(plan):
        for b in _rtsws(plan):
            if a is b:
                continue
            want = 12 if a.zone == 1 else 16  # zone-1 racks lost 4 of 16 uplinks; zone 2 goes around
            assert expect.width(a, b) == want, (a.name, b.name)
    z1, z2 = plan.nodes["z01-rtsw002"], plan.nodes["z02-rtsw003"]
    assert (expect.width(z1, plan.nodes["z01-rtsw003"]), expect.width(z2, z1), expect.width(z1, z2)) == (12, 16, 12)


@pytest.mark.parametrize(("down", "in_zone", "cross_zone"), [
    (frozenset({"atsw01"}), 16, 16),
    (frozenset({"atsw02"}), 16, 16),
    (frozenset({"atsw01", "atsw02"}), 16, 0),
])
def test_width_with_the_atsw_layer_down(plan, down, in_zone, cross_zone):
    expect = Expectations(plan, down)
    for a in _rtsws(plan):
        for b in _rtsws(plan):
            if a is not b:
                assert expect.width(a, b) == (in_zone if a.zone == b.zone else cross_zone), (a.name, b.name)


def test_width_towards_a_switch_that_is_down_is_zero(plan):
    expect = Expectations(plan, frozenset({"z01-rtsw002"}))
    target = plan.nodes["z01-rtsw002"]
    assert expect.width(plan.nodes["z01-rtsw001"], target) == 0
    assert expect.width(plan.nodes["z02-rtsw001"], target) == 0
    assert expect.width(plan.nodes["z01-rtsw001"], plan.nodes["z02-rtsw001"]) == 16


def test_hand_model_agrees_with_the_known_widths(ctx):
    # the fake's own model, checked against the same hand numbers
    topo = ctx.topology
    assert hand_width(topo, "z01-rtsw001", "z02-rtsw001", frozenset()) == 16
    assert hand_width(topo, "z01-rtsw001", "z01-rtsw002", frozenset({"z01-ctsw01"})) == 12
    assert hand_width(topo, "z02-rtsw001", "z01-rtsw002", frozenset({"z01-ctsw01"})) == 16
    assert hand_width(topo, "z01-rtsw001", "z02-rtsw002", frozenset({"atsw01", "atsw02"})) == 0


# --- check_sessions -------------------------------------------------------------------------------


def test_all_established_is_all_ok(lab, plan):
    results = [r for r in check_sessions(lab, plan) if r.check == "bgp-session"]
    assert len(results) == len(plan.sessions) == 288
    assert all(r.ok and r.detail == "Established on both ends" for r in results)
    assert {r.subject for r in results} == {s.label() for s in plan.sessions}
    asked = sorted(node for node, argv, _ in lab.calls if argv == SUMMARY)
    assert asked == sorted(n.name for n in plan.routers())  # each router asked once


def _only_failure(results):
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1, failed
    return failed[0]


def test_a_peer_missing_on_one_side_names_that_device_and_neighbor(lab, plan):
    lab.peer_override[("z01-ctsw01", "10.1.16.1")] = None
    failure = _only_failure(check_sessions(lab, plan))
    assert failure.subject == "z01-rtsw001 10.1.16.1 <-> z01-ctsw01 10.1.16.0 (ipv4)"
    assert failure.detail == "z01-ctsw01 has no neighbor 10.1.16.1 configured"


def test_wrong_remote_as_blames_the_misconfigured_rtsw(lab, plan):
    lab.peer_override[("z01-rtsw001", "10.1.16.0")] = {"remoteAs": 4200000099, "state": "Active"}
    failure = _only_failure(check_sessions(lab, plan))
    assert failure.node == "z01-rtsw001"
    assert failure.subject == "z01-rtsw001 10.1.16.1 <-> z01-ctsw01 10.1.16.0 (ipv4)"
    assert ("z01-rtsw001 is configured with remote-as 4200000099 for z01-ctsw01 10.1.16.0, but z01-ctsw01's ASN is"
            f" {ASN['z01-ctsw01']}") in failure.detail
    assert "z01-rtsw001 sees it Active" in failure.detail


def test_wrong_remote_as_on_the_upper_end_blames_the_spine(lab, plan):
    lab.peer_override[("z01-ctsw01", "fd00:0:1:1000::1")] = {"remoteAs": 65000}
    failure = _only_failure(check_sessions(lab, plan))
    assert failure.node == "z01-ctsw01"
    assert failure.subject == "z01-rtsw001 fd00:0:1:1000::1 <-> z01-ctsw01 fd00:0:1:1000:: (ipv6)"
    assert failure.detail == (f"z01-ctsw01 is configured with remote-as 65000 for z01-rtsw001 fd00:0:1:1000::1,"
                              f" but z01-rtsw001's ASN is {ASN['z01-rtsw001']}")


def test_prefix_limits_come_from_the_neighbor_or_its_peer_group(plan):
    ctsw = plan.nodes["z01-ctsw01"]
    limits = prefix_limits(ctsw.frr_conf or "")
    # the small example's CTSW: 2 IPv4 and 1 IPv6 prefix from each RTSW, 1112 / 587 from each ATSW
    assert limits["10.1.16.1"] == 2 and limits["fd00:0:1:1000::1"] == 1
    assert limits["10.1.24.0"] == 1112 and limits["fd00:0:1:1800::"] == 587
    assert prefix_limits("router bgp 1\n neighbor 10.0.0.1 remote-as 2\n address-family ipv4 unicast\n"
                         "  neighbor 10.0.0.1 maximum-prefix 12 80\n exit-address-family\n") == {"10.0.0.1": 12}


def test_a_peer_over_its_maximum_prefix_is_named(lab, plan):
    assert all(r.ok for r in check_sessions(lab, plan) if r.check == "maximum-prefix")
    fullest = next(r for r in check_sessions(lab, plan) if r.node == "z01-ctsw01" and r.check == "maximum-prefix")
    assert fullest.detail.startswith("fullest: ") and "1 of 1 prefixes (100%)" in fullest.detail
    lab.peer_override[("z01-ctsw01", "10.1.16.1")] = {"pfxRcd": 3}
    lab.peer_override[("z01-ctsw01", "10.1.16.3")] = {"state": "Idle", "peerState": "PfxCt", "pfxRcd": 0}
    results = check_sessions(lab, plan)
    failure = next(r for r in results if r.check == "maximum-prefix" and not r.ok)
    assert failure.node == "z01-ctsw01"
    assert failure.detail == "10.1.16.1 sent 3 of 2; 10.1.16.3 sent 0 of 2 and was stopped"
    assert sum(not r.ok for r in results if r.check == "maximum-prefix") == 1


def test_a_session_not_established_says_who_sees_what(lab, plan):
    lab.peer_override[("z01-ctsw01", "10.1.16.1")] = {"state": "Active"}
    failure = _only_failure(check_sessions(lab, plan))
    assert failure.detail == "z01-ctsw01 sees it Active"
    assert failure.node == "z01-rtsw001"  # no misconfiguration to blame: the session's lower end


def test_a_wrong_local_asn_is_reported(lab, plan):
    class WrongAs(FakeLab):
        def summary(self, node):
            data = super().summary(node)
            if node == "atsw01":
                data["ipv4Unicast"]["as"] = 65001
            return data

    lab = WrongAs(plan, lab.topo)
    failed = [r for r in check_sessions(lab, plan) if not r.ok]
    assert len(failed) == 8  # atsw01's IPv4 sessions: one uplink from each of the 8 CTSWs
    assert all(r.node == "atsw01" and r.detail == f"atsw01 runs BGP as AS 65001, but its ASN is {ASN['atsw01']}"
               for r in failed)


def test_a_read_failing_while_the_lab_converges_is_polled_again(lab, plan):
    class Busy(FakeLab):  # a router too busy to answer the first poll in time
        polls = 0

        def exec(self, node, argv, timeout=30.0):
            if node == "z02-rtsw004" and tuple(argv) == SUMMARY:
                Busy.polls += 1
                if Busy.polls == 1:
                    return ExecResult(124, "", "timed out after 30 s")
            return super().exec(node, argv, timeout)

    results, _ = wait_for(up_state(Busy(plan, lab.topo), plan), timeout=30)
    assert Busy.polls == 2 and results and all(r.ok for r in results)


def test_a_read_failing_until_the_timeout_is_one_failed_result_naming_the_node(lab, plan):
    class Broken(FakeLab):
        def exec(self, node, argv, timeout=30.0):
            if node == "z02-rtsw004":
                return ExecResult(1, "", "vtysh: failed to connect to any daemons.")
            return super().exec(node, argv, timeout)

    results, _ = wait_for(up_state(Broken(plan, lab.topo), plan), timeout=0)
    assert [(r.check, r.node, r.ok) for r in results] == [("read", "z02-rtsw004", False)]
    assert "show bgp summary json failed: vtysh: failed to connect" in results[0].detail


def test_lldp_is_read_once_the_routing_has_converged(lab, plan):
    class Counting(FakeLab):
        lldp_reads = 0

        def lldp_neighbors(self, node):
            Counting.lldp_reads += 1
            return super().lldp_neighbors(node)

    counting = Counting(plan, lab.topo)
    rtsw = plan.routers("rtsw")[0].name
    counting.peer_override[(rtsw, next(iter(counting.neighbors[rtsw])))] = {"state": "Active"}
    results = up_state(counting, plan)()
    assert Counting.lldp_reads == 0
    lldp = [r for r in results if r.check == "lldp"]
    assert [(r.ok, r.detail.split(":")[0]) for r in lldp] == [(False, "not read yet")]
    counting.peer_override.clear()
    results = up_state(counting, plan)()
    assert Counting.lldp_reads == len(plan.nodes) and all(r.ok for r in results)
    assert sum(r.check == "lldp" for r in results) == 2 * len(plan.links)


def test_a_failing_vtysh_is_a_lab_error_naming_the_node(lab, plan):
    class Broken(FakeLab):
        def exec(self, node, argv, timeout=30.0):
            if node == "z02-rtsw004":
                return ExecResult(1, "", "vtysh: failed to connect to any daemons.")
            return super().exec(node, argv, timeout)

    with pytest.raises(LabError, match=r"^z02-rtsw004: show bgp summary json failed: vtysh: failed to connect"):
        check_sessions(Broken(plan, lab.topo), plan)


class FakeCeos(FakeLab):
    """The same lab seen through cEOS (containerlab): `Cli -p 15 -c "<show> | json"` in EOS's shape,
    where ASNs are strings ("asn": "65000", or asdot "65000.8"; see NAPALM's EOS mocked data)."""

    def node_flavour(self, node: str) -> str:
        return "eos" if self._plan.nodes[node].kind == "router" else "host"

    def exec(self, node: str, argv: Sequence[str], timeout: float = 30.0) -> ExecResult:
        if tuple(argv[:4]) != ("Cli", "-p", "15", "-c"):
            return super().exec(node, argv, timeout)
        with self._lock:
            self.calls.append((node, tuple(argv), timeout))
        command = argv[4]
        if command in ("show ip bgp summary | json", "show ipv6 bgp summary | json"):
            afi = "ipv6" if "ipv6" in command else "ipv4"
            peers = {address: {"peerState": "Established", "asn": str(asn), "prefixReceived": 1,
                               "underMaintenance": False}
                     for address, (family, _, asn) in self.neighbors[node].items() if family == afi}
            vrf = {"routerId": "x", "vrf": "default", "asn": str(self.topo.devices[node].asn), "peers": peers}
            return ExecResult(0, json.dumps({"vrfs": {"default": vrf}}), "")
        if command in ("show ip route | json", "show ipv6 route | json"):
            routes = {}
            for route in self.routes(node, "ipv6" in command):
                dst = route["dst"] if "/" in route["dst"] else str(ip_interface(route["dst"]).network)
                vias = [{"nexthopAddr": h["gateway"], "interface": h["dev"]} for h in route.get("nexthops", [route])]
                routes[dst] = {"routeType": "eBGP", "vias": vias, "metric": 0, "preference": 200}
            own = self.topo.devices[node]
            routes[str(own.loopback_ipv6 if "ipv6" in command else own.loopback_ipv4)] = {
                "routeType": "connected", "vias": [{"interface": "Loopback0"}]}  # not BGP: not counted
            return ExecResult(0, json.dumps({"vrfs": {"default": {"routes": routes}}}), "")
        return ExecResult(1, "", f"% Invalid input: {command}")


@pytest.fixture(scope="module")
def eos_plan(ctx) -> LabPlan:
    return plan_lab("ceos", ctx, SliceRequest(zone=2, racks=2, ctsw=2))  # every switch of zone 2 runs EOS


def test_ceos_routes_count_vias_of_bgp_routes_only(eos_plan, ctx):
    lab = FakeCeos(eos_plan, ctx.topology)
    results = check_ecmp(lab, eos_plan)
    assert [(r.node, r.ok, r.detail) for r in results] == [
        ("z02-rtsw001", True, "3 prefixes of 1 other RTSW(s), ECMP width [8]"),
        ("z02-rtsw002", True, "3 prefixes of 1 other RTSW(s), ECMP width [8]")]
    # the connected loopback is in the table but is not a BGP route
    assert EosReader().bgp_routes(lab, "z02-rtsw001") == {"10.0.2.2/32": 8, "10.128.32.32/27": 8,
                                                          "fd00::ff:2000:0:0:2/128": 8, "10.0.2.129/32": 16,
                                                          "10.0.2.130/32": 16, "fd00::ff:2800:0:0:1/128": 16,
                                                          "fd00::ff:2800:0:0:2/128": 16}


def test_ceos_sessions_established_with_string_asns_are_ok(eos_plan, ctx):
    lab = FakeCeos(eos_plan, ctx.topology)
    results = check_sessions(lab, eos_plan)
    assert len([r for r in results if r.check == "bgp-session"]) == 2 * 2 * 4 * 2
    # EOS's prefixReceived against the limits of the node's config: one result per router
    assert len([r for r in results if r.check == "maximum-prefix"]) == 4
    assert [r.detail for r in results if not r.ok] == []


# --- check_ecmp -----------------------------------------------------------------------------------


def test_ecmp_at_the_right_width_is_ok(lab, plan):
    results = check_ecmp(lab, plan)
    assert sorted(r.node for r in results) == sorted(n.name for n in _rtsws(plan))
    # 7 other RTSWs x (loopback v4, loopback v6, host subnet v4)
    assert all(r.ok and r.detail == "21 prefixes of 7 other RTSW(s), ECMP width [16]" for r in results)


def test_one_prefix_short_of_next_hops_is_named(lab, plan):
    lab.width_override[("z01-rtsw001", "10.0.2.4/32")] = 15
    results = {r.node: r for r in check_ecmp(lab, plan)}
    failure = results.pop("z01-rtsw001")
    assert not failure.ok
    assert failure.detail == "1 of 21 wrong: 10.0.2.4/32 (z02-rtsw004) has 15 next hop(s), expected 16"
    assert all(r.ok for r in results.values())


def test_a_missing_v6_route_counts_as_zero(lab, plan):
    lab.width_override[("z02-rtsw002", "fd00::ff:1000:0:0:3/128")] = 0
    failure = _only_failure(check_ecmp(lab, plan))
    assert failure.node == "z02-rtsw002"
    assert "fd00::ff:1000:0:0:3/128 (z01-rtsw003) has 0 next hop(s), expected 16" in failure.detail


def test_ecmp_with_a_spine_out_expects_the_reduced_width(lab, plan):
    down = frozenset({"z01-ctsw01"})
    assert not all(r.ok for r in check_ecmp(lab, plan, down))  # the fake still has 16 everywhere
    lab.out.add("z01-ctsw01")
    results = {r.node: r for r in check_ecmp(lab, plan, down)}
    assert all(r.ok for r in results.values())
    assert results["z01-rtsw001"].detail == "21 prefixes of 7 other RTSW(s), ECMP width [12]"
    assert results["z02-rtsw001"].detail == "21 prefixes of 7 other RTSW(s), ECMP width [16]"


def test_single_path_route_without_nexthops_counts_as_one(small_data, write_fabric):
    small_data["zones"][0]["links_per_rtsw_ctsw"] = 1
    loaded = load_fabric(write_fabric(small_data))
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    plan = plan_lab("one", ctx, SliceRequest(zone=1, racks=2, ctsw=1))
    lab = FakeLab(plan, ctx.topology)

    def single_paths(node: str, v6: bool) -> list[dict[str, Any]]:
        # one link to the one CTSW in the slice: every route is a single path, printed without "nexthops"
        table = []
        for other in plan.routers("rtsw"):
            for prefix in other.announces:
                net = ip_interface(prefix).network
                if other.name != node and (net.version == 6) == v6:
                    dst = str(net.network_address) if net.prefixlen == net.max_prefixlen else str(net)
                    table.append({"dst": dst, "gateway": "fe80::1" if v6 else "10.1.16.0", "dev": "Ethernet448",
                                  "protocol": "bgp", "flags": []})
        return table

    lab.routes = single_paths  # type: ignore[method-assign]
    results = check_ecmp(lab, plan)
    assert [r.ok for r in results] == [True, True]
    assert all(r.detail == "3 prefixes of 1 other RTSW(s), ECMP width [1]" for r in results)
    assert FrrReader().bgp_routes(lab, "z01-rtsw001") == {"10.0.1.2/32": 1, "10.128.16.32/27": 1,
                                                          "fd00::ff:1000:0:0:2/128": 1}


# --- check_pings ----------------------------------------------------------------------------------


def _ping(count: int, source: str, target: str) -> tuple[str, ...]:
    extra = ("-c", "1") if count == 1 else ("-c", "3", "-i", "0.2")
    return ("ping", "-n", "-q", "-W", "1", *extra, "-I", source, target)


def _expected_pings(ctx, plan) -> dict[str, set[tuple[str, tuple[str, ...]]]]:
    """Every ordered pair of RTSW loopbacks (v4, v6) and of hosts, from the topology."""
    topo = ctx.topology
    rtsws = [d for d in topo.devices.values() if d.role is Role.RTSW and d.name in plan.nodes]
    hosts = [(nic.host, str(nic.ipv4.ip)) for nic in topo.host_nics if nic.host in plan.nodes and nic.nic == 1]
    want: dict[str, set[tuple[str, tuple[str, ...]]]] = {"loopback": set(), "loopback-v6": set(), "host": set()}
    for a in rtsws:
        for b in rtsws:
            if a is not b:
                want["loopback"].add((a.name, _ping(1, str(a.loopback_ipv4.ip), str(b.loopback_ipv4.ip))))
                want["loopback-v6"].add((a.name, _ping(1, str(a.loopback_ipv6.ip), str(b.loopback_ipv6.ip))))
    for a, a_ip in hosts:
        for b, b_ip in hosts:
            if a != b:
                want["host"].add((a, _ping(1, a_ip, b_ip)))
    return want


def _pings(lab) -> list[tuple[str, tuple[str, ...], float]]:
    return [c for c in lab.calls if c[1][0] == "ping"]


def test_pings_cover_every_ordered_pair_of_loopbacks_and_hosts(lab, plan, ctx):
    results = check_pings(lab, plan)
    want = _expected_pings(ctx, plan)
    assert {k: len(v) for k, v in want.items()} == {"loopback": 56, "loopback-v6": 56, "host": 56}
    calls = _pings(lab)
    assert len(calls) == 168 and all(timeout == 10 for _, _, timeout in calls)
    assert {(node, argv) for node, argv, _ in calls} == set().union(*want.values())
    assert [(r.check, r.node, r.subject, r.ok, r.detail) for r in results] == [
        ("ping", "*", "loopback mesh", True, "56 pairs answered"),
        ("ping", "*", "loopback-v6 mesh", True, "56 pairs answered"),
        ("ping", "*", "host mesh", True, "56 pairs answered"),
    ]


def test_a_pair_lost_once_is_retried_with_three_echoes_and_passes(lab, plan):
    lab.ping_failures[("z01-r001-h01", "10.128.32.98")] = 1  # z02-rtsw004's host
    results = check_pings(lab, plan)
    assert all(r.ok for r in results)
    calls = _pings(lab)
    assert len(calls) == 169
    retries = [(node, argv) for node, argv, _ in calls if "3" in argv]
    assert retries == [("z01-r001-h01", _ping(3, "10.128.16.2", "10.128.32.98"))]


def test_a_pair_that_fails_twice_is_reported(lab, plan):
    lab.ping_failures[("z01-rtsw001", "10.0.2.4")] = 2
    results = {r.subject: r for r in check_pings(lab, plan)}
    failure = results.pop("loopback mesh")
    assert not failure.ok and failure.check == "ping" and failure.node == "z01-rtsw001"
    assert failure.detail == "1 of 56 pairs failed: z01-rtsw001 10.0.1.1 -> z02-rtsw004 10.0.2.4"
    assert all(r.ok for r in results.values())
    tried = [argv for node, argv, _ in _pings(lab) if node == "z01-rtsw001" and argv[-1] == "10.0.2.4"]
    assert tried == [_ping(1, "10.0.1.1", "10.0.2.4"), _ping(3, "10.0.1.1", "10.0.2.4")]


def test_many_failures_are_counted_and_the_list_is_cut_at_four(lab, plan):
    for target in ("10.0.1.2", "10.0.1.3", "10.0.1.4", "10.0.2.1", "10.0.2.2"):
        lab.ping_failures[("z01-rtsw001", target)] = 2
    failure = {r.subject: r for r in check_pings(lab, plan)}["loopback mesh"]
    assert failure.detail.startswith("5 of 56 pairs failed: z01-rtsw001 10.0.1.1 -> ")
    assert failure.detail.endswith(" ...") and failure.detail.count(" -> ") == 4


# --- the drill ------------------------------------------------------------------------------------


def _in_slice_neighbours(topo: Topology, plan: LabPlan, target: str) -> set[str]:
    found = set()
    for link in topo.links:
        for here, there in ((link.lower, link.upper), (link.upper, link.lower)):
            if here.device == target and there.device in plan.nodes:
                found |= {str(there.ipv4.ip), str(there.ipv6.ip)}
    return found


def test_shutdown_shuts_exactly_the_in_slice_neighbours(ctx):
    topo = ctx.topology
    plan = plan_lab("d", ctx, SliceRequest(zone=1, racks=2, ctsw=2))
    target = plan.nodes["z01-ctsw02"]
    want = _in_slice_neighbours(topo, plan, "z01-ctsw02")
    assert len(want) == 2 * 4 * 2  # 2 racks x 4 links x 2 AFIs; rack 3-4 and ATSW peers are outside
    for restore, prefix in ((False, ""), (True, "no ")):
        (argv,) = _drill_commands(plan, target, "shutdown", restore)
        assert argv[:5] == ["vtysh", "-c", "configure terminal", "-c", "router bgp 4200000001"]
        assert argv[5::2] == ["-c"] * (len(argv[5:]) // 2)
        lines = argv[6::2]
        assert len(lines) == len(set(lines)) == len(want)
        assert set(lines) == {f"{prefix}neighbor {address} shutdown" for address in want}


def test_drain_sends_the_graceful_drain_s_lines_from_the_router_s_config(ctx):
    plan = plan_lab("d", ctx, SliceRequest(zone=1, racks=2, ctsw=2))
    target = plan.nodes["z01-ctsw02"]
    with pytest.raises(LabError, match="the graceful drain needs"):
        _drill_commands(plan, target, "drain", restore=False)
    for restore, lines in ((False, drain_commands(DRAIN_SCOPE)), (True, undrain_commands(DRAIN_SCOPE))):
        (argv,) = _drill_commands(plan, target, "drain", restore, GRACEFUL)
        assert argv == vtysh_argv(lines)


def test_cut_downs_exactly_the_cabled_linux_interfaces(ctx):
    topo = ctx.topology
    plan = plan_lab("d", ctx, SliceRequest(zone=1, racks=2, ctsw=2))
    target = plan.nodes["z01-ctsw02"]
    ports = [k.upper.port for k in topo.links if k.upper.device == "z01-ctsw02" and k.lower.device in plan.nodes]
    assert len(ports) == 8 and all("/" in p for p in ports)
    for restore, state in ((False, "down"), (True, "up")):
        commands = _drill_commands(plan, target, "cut", restore)
        assert sorted(commands) == sorted(["ip", "link", "set", "dev", p.replace("/", "_"), state] for p in ports)


def test_cut_of_a_whole_fabric_spine_includes_its_atsw_uplinks(ctx, plan):
    ports = [k.upper.port for k in ctx.topology.links if k.upper.device == "z02-ctsw03"]
    ports += [k.lower.port for k in ctx.topology.links if k.lower.device == "z02-ctsw03"]
    commands = _drill_commands(plan, plan.nodes["z02-ctsw03"], "cut", restore=False)
    assert sorted(c[4] for c in commands) == sorted(p.replace("/", "_") for p in ports)
    assert len(commands) == 16 + 2


def test_shutdown_drill_runs_shrinks_and_restores(lab, plan):
    results = run_drill(lab, plan, "z01-ctsw02", "shutdown", timeout=5).results
    assert [(r.subject, r.ok) for r in results] == [
        ("shutdown z01-ctsw02: ECMP shrinks", True), ("shutdown z01-ctsw02: loopback mesh while out", True),
        ("shutdown z01-ctsw02: loopback-v6 mesh while out", True),
        ("shutdown z01-ctsw02: host mesh while out", True), ("shutdown z01-ctsw02: other sessions stay up", True),
        ("shutdown z01-ctsw02: restored", True), ("shutdown z01-ctsw02: ECMP widths", True)]
    assert all(r.check == "drill" for r in results)
    assert results[4].detail == f"{288 - 36} sessions not touching z01-ctsw02 stayed Established"
    drains = [argv for node, argv, _ in lab.calls if argv[:3] == ("vtysh", "-c", "configure terminal")]
    assert [node for node, argv, _ in lab.calls if argv[:3] == ("vtysh", "-c", "configure terminal")] == [
        "z01-ctsw02", "z01-ctsw02"]
    assert [len(argv[5:]) // 2 for argv in drains] == [36, 36]  # 4 racks x 4 links + 2 uplinks, x 2 AFIs
    assert drains[0][6].startswith("neighbor ") and drains[1][6].startswith("no neighbor ")
    assert lab.out == set()


def test_graceful_drain_drill_reads_back_checks_leaks_and_widths(lab, plan):
    drill = run_drill(lab, plan, "z01-ctsw02", "drain", timeout=5, graceful=GRACEFUL)
    subject = "drain z01-ctsw02: "
    assert [(r.subject.removeprefix(subject), r.ok) for r in drill.results] == [
        ("ECMP shrinks", True), ("read back drained", True), ("drained twice adds nothing", True),
        ("no route leaked", True), ("loopback mesh while out", True), ("loopback-v6 mesh while out", True),
        ("host mesh while out", True), ("every session stays up", True), ("restored", True),
        ("read back undrained", True), ("ECMP widths", True)]
    details = {r.subject.removeprefix(subject): r.detail for r in drill.results}
    # 4 racks x 4 links + 2 ATSW uplinks, x 2 AFIs; in the fake an RTSW learns the 7 other RTSWs'
    # loopbacks from it, an ATSW all 8
    assert details["no route leaked"] == ("36 sessions: the same prefixes as before (7/8 each), every path longer"
                                          " by 3 x AS 4200000001")
    assert details["every session stays up"] == "288 sessions stayed Established"
    assert details["read back drained"] == "its running config reads drained"
    # zone 1's RTSWs go 16 -> 12 -> 16 towards their own zone; zone 2's keep 16 (the ATSWs reach zone 1
    # over its other CTSWs)
    assert drill.widths["z01-rtsw001"] == [[16], [12], [16]] and drill.widths["z02-rtsw001"] == [[16], [16], [16]]
    assert details["ECMP widths"].startswith("z01-rtsw001 16 -> 12 -> 16, ")
    configs = [argv for node, argv, _ in lab.calls if argv[:3] == ("vtysh", "-c", "configure terminal")]
    assert [argv[4] for argv in configs] == ["route-map RM-FABRIC-OUT permit 1"] * 2 + [
        "no route-map RM-FABRIC-OUT permit 1"]  # drained, drained again, undrained
    assert lab.drained == set() and lab.entries["z01-ctsw02"] == {}
    assert drill.as_dict()["ecmp_widths"]["z01-rtsw001"] == [[16], [12], [16]] and drill.traffic == []


def test_a_drain_that_leaks_a_route_fails_the_drill(lab, plan):
    lab.leak = ["192.0.2.0/24"]
    results = {r.subject: r for r in run_drill(lab, plan, "z01-ctsw01", "drain", timeout=5, graceful=GRACEFUL).results}
    leak = results["drain z01-ctsw01: no route leaked"]
    assert not leak.ok and leak.detail.startswith("36 difference(s): ")
    assert "gained ['192.0.2.0/24'], lost []" in leak.detail
    assert results["drain z01-ctsw01: restored"].ok


def test_a_drain_the_router_does_not_hold_fails_the_read_back(lab, plan):
    lab.honour_drill = False  # the lines are taken, the routes ignore them; the read-back still reads
    failing = GracefulDrain(drain=lambda conf: ["configure terminal", "route-map RM-FABRIC-OUT permit 1",
                                                "set as-path prepend 1", "exit"],
                            undrain=GRACEFUL.undrain, drained=GRACEFUL.drained)
    results = {r.subject: r for r in run_drill(lab, plan, "z01-ctsw01", "drain", timeout=0.2,
                                                graceful=failing).results}
    assert results["drain z01-ctsw01: read back drained"].detail == (
        "its running config reads neither drained nor undrained")
    assert not results["drain z01-ctsw01: ECMP shrinks"].ok
    assert results["drain z01-ctsw01: read back undrained"].ok


def test_a_drill_whose_ecmp_never_shrinks_fails_and_still_restores(lab, plan):
    lab.honour_drill = False
    results = run_drill(lab, plan, "z02-ctsw04", "cut", timeout=0.2).results
    first = results[0]
    assert first.subject == "cut z02-ctsw04: ECMP shrinks" and not first.ok
    assert "has 16 next hop(s), expected 12" in first.detail
    assert results[-2].subject == "cut z02-ctsw04: restored" and results[-2].ok
    cut = [argv for node, argv, _ in lab.calls if argv[:3] == ("ip", "link", "set")]
    assert {argv[5] for argv in cut[:18]} == {"down"} and {argv[5] for argv in cut[18:]} == {"up"}
    assert len(cut) == 36


def test_the_drill_refuses_a_non_spine_and_names_the_choices(lab, plan):
    with pytest.raises(LabError, match=r"--drill-device 'z01-rtsw001': choose a CTSW of the lab: z01-ctsw01, "):
        run_drill(lab, plan, "z01-rtsw001", "drain")
    assert lab.calls == []


# --- verify ---------------------------------------------------------------------------------------


def test_verify_report_when_everything_is_right(lab, plan):
    report = verify(lab)
    assert report["ok"] is True
    assert report["lab"] == "fake" and report["fabric"] == "small-lab"
    assert report["slice"] == "every zone and the ATSW layer"
    assert report["sessions_expected"] == report["sessions_established"] == 288
    assert report["sessions_outside_slice"] == 0
    lldp = 2 * len(plan.links)  # one LLDP result per cable end
    routers = len(plan.routers())  # one maximum-prefix result per router
    assert report["checks"] == 288 + routers + 8 + 3 + lldp and report["failed"] == 0
    assert len(report["results"]) == report["checks"]
    assert {r["check"] for r in report["results"]} == {"bgp-session", "maximum-prefix", "ecmp", "lldp", "ping"}
    assert report["lab_only"] == []  # a lab without a state file (this fake) has none to say
    assert set(report["results"][0]) == {"check", "node", "subject", "ok", "detail"}
    assert report["not_exercised"] == NOT_EXERCISED and "PFC" in report["not_exercised"]
    assert len(report["frr_sources"]) == 2 and any("EOS CLI is not what runs" in s for s in report["frr_sources"])
    json.dumps(report)


@pytest.mark.parametrize("breakage", ["session", "ecmp", "ping"])
def test_verify_is_not_ok_when_anything_fails(lab, plan, breakage):
    if breakage == "session":
        (session,) = [s for s in lab.topo.sessions if s.afi == "ipv4" and s.lower_device == "z02-rtsw003"
                      and s.upper_device == "z02-ctsw03"][:1]
        lab.peer_override[("z02-ctsw03", str(session.lower_ip.ip))] = {"state": "Connect"}
    elif breakage == "ecmp":
        lab.width_override[("z02-rtsw001", "10.128.16.0/27")] = 8
    else:
        lab.ping_failures[("z02-r002-h01", "10.128.16.2")] = 2
    report = verify(lab)
    assert report["ok"] is False and report["failed"] == 1
    (failed,) = [r for r in report["results"] if not r["ok"]]
    assert failed["check"] == {"session": "bgp-session", "ecmp": "ecmp", "ping": "ping"}[breakage]
    assert report["sessions_established"] == (287 if breakage == "session" else 288)


def test_verify_with_the_drill(lab, plan):
    report = verify(lab, drill=True, drill_device="z01-ctsw03", drill_mode="cut")
    drill = [r for r in report["results"] if r["check"] == "drill"]
    assert report["ok"] is True and len(drill) == 7 and all(r["ok"] for r in drill)
    assert report["checks"] == 288 + len(plan.routers()) + 8 + 3 + 2 * len(plan.links) + 7
    assert report["drill"]["device"] == "z01-ctsw03" and report["drill"]["mode"] == "cut"
    assert report["drill"]["ecmp_widths"]["z01-rtsw002"] == [[16], [12], [16]] and report["drill"]["traffic"] == []
    assert "drill" not in verify(lab)


@pytest.mark.parametrize(("given", "expected"), [
    (4200000001, 4200000001), ("4200000001", 4200000001), ("65000.8", 65000 * 65536 + 8), ("1", 1),
    (None, None), ("", None), ("65000.", None), ("AS65000", None), (True, None),
])
def test_as_number_reads_every_json_spelling(given, expected):
    assert as_number(given) == expected


def test_lldp_passes_as_cabled_and_names_a_miscabled_pair_and_a_silent_port(lab, plan):
    from netgen.lab.verify import check_lldp  # noqa: PLC0415

    assert all(r.ok for r in check_lldp(lab, plan))
    assert len(check_lldp(lab, plan)) == 2 * len(plan.links)
    one, two = [link for link in plan.links if link.a == "z01-rtsw001" and plan.nodes[link.b].kind == "router"][:2]
    # the cables of two RTSW ports swapped at the spine end
    lab.lldp[(one.a, one.a_if)], lab.lldp[(two.a, two.a_if)] = lab.lldp[(two.a, two.a_if)], lab.lldp[(one.a, one.a_if)]
    del lab.lldp[(one.b, one.b_if)]  # and one spine port hears nothing
    failed = {r.subject: r.detail for r in check_lldp(lab, plan) if not r.ok}
    assert failed == {
        f"z01-rtsw001:{one.a_port}": f"miscabled: hears {two.b}:{two.b_port}, planned {one.b}:{one.b_port}",
        f"z01-rtsw001:{two.a_port}": f"miscabled: hears {one.b}:{one.b_port}, planned {two.b}:{two.b_port}",
        f"{one.b}:{one.b_port}": f"hears no LLDP neighbour; planned z01-rtsw001:{one.a_port}",
    }


def test_lldpcli_keyvalue_is_read_per_interface():
    from netgen.lab.backend import parse_lldp_keyvalue  # noqa: PLC0415

    text = ("lldp.Ethernet0.via=LLDP\nlldp.Ethernet0.chassis.name=z01-ctsw01\n"
            "lldp.Ethernet0.port.mac=6e:11:17:7c:ad:86\nlldp.Ethernet0.port.descr=Ethernet3_1_1\n"
            "lldp.nic1.chassis.name=z01-rtsw001\nlldp.nic1.port.ifname=Ethernet0\nlldp.nic1.port.descr=x\n")
    assert parse_lldp_keyvalue(text) == {"Ethernet0": ("z01-ctsw01", "Ethernet3_1_1"),
                                         "nic1": ("z01-rtsw001", "Ethernet0")}
    # a locally assigned port ID (SONiC's lldpmgrd sets the alias so) wins over the description
    assert parse_lldp_keyvalue("lldp.Et3_1_1.chassis.name=z01-rtsw001\nlldp.Et3_1_1.port.local=etp57a\n"
                               "lldp.Et3_1_1.port.descr=z01-ctsw01:Ethernet3/1/1\n") == {
        "Et3_1_1": ("z01-rtsw001", "etp57a")}


def test_each_node_sends_the_port_ids_its_nos_would(plan):
    """SONiC ports by their PORT alias (not their name), EOS ports by interface name, hosts by NIC."""
    from netgen.lab.lab_only import lab_only  # noqa: PLC0415
    from netgen.lab.netns import lldpd_config as config_of  # noqa: PLC0415

    settings = lab_only(plan)

    def lldpd_config(node: LabNode) -> str:
        return config_of(node, settings)

    sonic = next(n for n in plan.nodes.values() if n.nos == "sonic")
    eos = next(n for n in plan.nodes.values() if n.nos == "eos")
    host = next(n for n in plan.nodes.values() if n.kind == "host")
    sonic_ports = [i for i in sonic.interfaces if i.kind == "port"]
    assert sonic_ports and all(i.lldp_id.startswith("etp") and i.lldp_id != i.rendered for i in sonic_ports)
    assert all(i.lldp_id == i.rendered for i in eos.interfaces if i.kind == "port")
    config = lldpd_config(sonic).splitlines()
    assert config[:2] == ["configure lldp tx-interval 1", "configure lldp tx-hold 30"]
    port = sonic_ports[0]
    assert (f"configure ports {port.name} lldp portidsubtype local {port.lldp_id}"
            f' description "{port.lldp_description}"') in config
    assert len(config) == 2 + len(sonic_ports)
    assert lldpd_config(host).splitlines()[2] == "configure ports nic1 lldp portidsubtype local nic1"
    # nothing that is not plain text reaches lldpcli: the line is left out, never quoted
    evil = port.model_copy(update={"lldp_id": 'x"\nconfigure system hostname pwned'})
    assert lldpd_config(sonic.model_copy(update={"interfaces": (evil,)})) == (
        "configure lldp tx-interval 1\nconfigure lldp tx-hold 30\n")


def test_a_wide_lab_pings_an_even_sample_and_says_so():
    # up to 400 pairs of a kind: the full mesh (the small example's 8 RTSWs, the 20-router meta slice)
    assert ping_offsets(8) == list(range(1, 8)) and ping_offsets(20) == list(range(1, 20))
    # a zone's 192 racks: each pings the rack 64 and 128 places on, so each is a target twice too
    assert ping_offsets(192) == [64, 128]
    assert ping_offsets(48) == [5, 11, 16, 21, 27, 32, 37, 43]
    targets = [(i + offset) % 192 for i in range(192) for offset in ping_offsets(192)]
    assert sorted(targets) == sorted(list(range(192)) * 2)
