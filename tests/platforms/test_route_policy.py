"""Route policy, judged by what it lets through: a small prefix-list / route-map evaluator written here
(FRR and EOS semantics: first matching clause wins, implicit deny) runs the policy netgen renders, and
a propagation over every session of the small example shows what each switch ends up with."""

from __future__ import annotations

import re
from ipaddress import IPv4Network, IPv6Network, ip_network

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.policy import RoutePolicy
from netgen.platforms.render import render_devices
from netgen.platforms.routing import BgpPlan, bgp_plan
from netgen.topology import expand
from netgen.topology.model import Role
from tests.conftest import SMALL

pytestmark = pytest.mark.render

Net = IPv4Network | IPv6Network


@pytest.fixture(scope="module")
def ctx() -> DesignContext:
    loaded = load_fabric(SMALL)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


@pytest.fixture(scope="module")
def plans(ctx: DesignContext) -> dict[str, BgpPlan]:
    return {name: bgp_plan(ctx, device) for name, device in ctx.topology.devices.items()}


def _permits(policy: RoutePolicy, route_map: str | None, prefix: Net) -> bool:
    if route_map is None:
        return False
    lists = {pl.name: pl for pl in policy.prefix_lists}
    (rmap,) = [m for m in policy.route_maps if m.name == route_map]
    for clause in rmap.clauses:
        pl = lists[clause.prefix_list]
        if (pl.afi == "ipv4") != (prefix.version == 4):
            continue  # `match ip address` never matches an IPv6 route, and the other way round
        for rule in pl.rules:
            base = ip_network(rule.prefix)
            if prefix.version != base.version or not prefix.subnet_of(base):  # type: ignore[arg-type]
                continue
            low = rule.ge if rule.ge is not None else base.prefixlen
            high = rule.le if rule.le is not None else (base.max_prefixlen if rule.ge is not None else base.prefixlen)
            if low <= prefix.prefixlen <= high:
                return True
    return False


def _sessions(ctx: DesignContext, plans: dict[str, BgpPlan]) -> list[tuple[str, str, str, str]]:
    """(receiver, its neighbour address, sender, the sender's neighbour address for the receiver)."""
    out = []
    for name, ports in ctx.topology.ports.items():
        for port in ports:
            for iface in (port.ipv4, port.ipv6):
                if iface is None:
                    continue
                assert iface.network.num_addresses == 2  # /31 and /127 point-to-point links
                peer_address = str(next(a for a in iface.network if a != iface.ip))
                out.append((name, peer_address, port.peer_device, str(iface.ip)))
    return out


def _inbound(plan: BgpPlan, address: str) -> str | None:
    (neighbor,) = [n for n in plan.neighbors if n.address == address]
    session = plan.policy.session(neighbor.peer_group)
    assert session is not None
    return plan.policy.neighbor_in.get(address, session.route_map_in)


def _outbound(plan: BgpPlan, address: str) -> str:
    (neighbor,) = [n for n in plan.neighbors if n.address == address]
    session = plan.policy.session(neighbor.peer_group)
    assert session is not None
    return session.route_map_out


def _originated(plan: BgpPlan) -> set[Net]:
    return {ip_network(p, strict=False) for p in [*plan.networks_v4, *plan.networks_v6]}


def test_every_switch_learns_what_it_must_and_nothing_else(ctx, plans):
    sessions = _sessions(ctx, plans)
    assert len(sessions) == sum(len(p.neighbors) for p in plans.values())  # every configured session, both ends
    tables = {name: _originated(plan) for name, plan in plans.items()}
    changed = True
    while changed:  # propagate until nothing new is accepted anywhere
        changed = False
        for receiver, address, sender, back in sessions:
            sent = {p for p in tables[sender] if _permits(plans[sender].policy, _outbound(plans[sender], back), p)}
            accepted = {p for p in sent if _permits(plans[receiver].policy, _inbound(plans[receiver], address), p)}
            if not accepted <= tables[receiver]:
                tables[receiver] |= accepted
                changed = True
    devices = ctx.topology.devices
    everything = set().union(*(_originated(p) for p in plans.values()))
    in_zones = set().union(*(_originated(plans[n]) for n, d in devices.items() if d.zone is not None))
    assert len(everything) == 26 + 18  # 18 loopbacks and 8 rack subnets in IPv4, 18 IPv6 loopbacks
    for name, device in devices.items():
        if device.role is Role.ATSW:  # every zone's prefixes and its own loopbacks; not the other ATSW's
            assert tables[name] == in_zones | _originated(plans[name]), name
        else:
            assert tables[name] == everything, name


def test_each_tier_announces_only_what_it_should(ctx, plans):
    devices = ctx.topology.devices
    for receiver, _address, sender, back in _sessions(ctx, plans):
        out = _outbound(plans[sender], back)
        if devices[sender].role is Role.RTSW:  # only its own loopback and rack subnet
            own = _originated(plans[sender])
            assert out == "RM-OWN-OUT"
            assert _permits(plans[sender].policy, out, ip_network("10.128.48.0/27")) is False
            assert all(_permits(plans[sender].policy, out, p) for p in own)
        if devices[sender].role is Role.CTSW and devices[receiver].role is Role.ATSW:
            other_zone = 2 if devices[sender].zone == 1 else 1
            foreign = next(iter(_originated(plans[f"z0{other_zone}-rtsw001"])))
            assert _permits(plans[sender].policy, out, foreign) is False, (sender, receiver)


LEAKS = ["0.0.0.0/0", "::/0", "172.16.0.0/12", "192.0.2.0/24", "10.128.16.0/24", "10.128.16.0/20", "10.0.1.0/24",
         "10.128.16.0/28", "fd00:0:0:ff::/64", "10.1.16.0/31"]


@pytest.mark.parametrize("leak", LEAKS)
def test_no_switch_accepts_a_default_an_aggregate_a_foreign_or_a_link_prefix(ctx, plans, leak):
    prefix = ip_network(leak)
    for receiver, address, _, _ in _sessions(ctx, plans):
        assert not _permits(plans[receiver].policy, _inbound(plans[receiver], address), prefix), (receiver, leak)


def test_a_ctsw_takes_only_its_own_zone_from_racks_and_an_atsw_only_the_zone_behind_each_ctsw(ctx, plans):
    zone2_rack = ip_network("10.128.32.0/27")  # z02-rtsw001's subnet
    assert zone2_rack in _originated(plans["z02-rtsw001"])
    ctsw = plans["z01-ctsw01"]
    from_rack = next(n.address for n in ctsw.neighbors if n.peer_group == "DOWNLINK")
    from_atsw = next(n.address for n in ctsw.neighbors if n.peer_group == "UPLINK")
    assert not _permits(ctsw.policy, _inbound(ctsw, from_rack), zone2_rack)
    assert _permits(ctsw.policy, _inbound(ctsw, from_atsw), zone2_rack)
    atsw = plans["atsw01"]
    by_zone = {n.description.split(":")[0][:3]: n.address for n in atsw.neighbors if n.afi == "ipv4"}
    assert _permits(atsw.policy, _inbound(atsw, by_zone["z02"]), zone2_rack)
    assert not _permits(atsw.policy, _inbound(atsw, by_zone["z01"]), zone2_rack)


def test_maximum_prefix_is_the_built_out_designs_capacity(plans):
    # By hand from the small example and the catalog: a 7804R3A-36P CTSW has 144 cages, 2 go up to the
    # ATSWs, 142 / 4 links per rack = 35 racks per zone. A zone: 35 racks x (loopback + /27) + 4 CTSW
    # loopbacks = 74 IPv4, 35 + 4 = 39 IPv6. The fabric: 15 zones (addressing.max_zones) + 2 ATSW
    # loopbacks = 15 x 74 + 2 = 1112 IPv4, 15 x 39 + 2 = 587 IPv6. A rack sends 2 IPv4 and 1 IPv6.
    def limit(device: str, group: str) -> int:
        session = plans[device].policy.session(group)
        assert session is not None
        return session.maximum_prefix

    assert (limit("z01-rtsw001", "UPLINK"), limit("z01-rtsw001", "UPLINK_V6")) == (1112, 587)
    assert (limit("z01-ctsw01", "UPLINK"), limit("z01-ctsw01", "UPLINK_V6")) == (1112, 587)
    assert (limit("z01-ctsw01", "DOWNLINK"), limit("z01-ctsw01", "DOWNLINK_V6")) == (2, 1)
    assert (limit("atsw01", "DOWNLINK"), limit("atsw01", "DOWNLINK_V6")) == (74, 39)


def test_limits_do_not_move_when_racks_are_added(small_data, write_fabric):
    """Capacity, not today's count: a fifth rack in zone 1 leaves every limit where it was."""
    def limits(path) -> dict[tuple[str, str], int]:
        loaded = load_fabric(path)
        ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
        return {(name, s.group): s.maximum_prefix for name, device in ctx.topology.devices.items()
                for s in bgp_plan(ctx, device).policy.sessions}

    before = limits(SMALL)
    small_data["zones"][0]["racks"] = 5
    after = limits(write_fabric(small_data))
    assert {key: after[key] for key in before} == before
    assert after[("z01-rtsw005", "UPLINK")] == 1112


def test_rendered_files_reference_only_defined_policy_and_filter_every_session(ctx):
    rendered, _ = render_devices(ctx, list(ctx.topology.devices.values()))
    checked = 0
    for name, files in rendered.items():
        for f in files:
            if f.name == "frr.conf":
                text = f.content
                assert "\n bgp ebgp-requires-policy\n" in text and "no bgp ebgp-requires-policy" not in text
                defined_pl = set(re.findall(r"^ipv6? prefix-list (\S+) seq", text, re.M))
                defined_rm = set(re.findall(r"^route-map (\S+) permit", text, re.M))
                indent = "  "
            elif f.name.endswith(".cfg"):
                text = f.content
                defined_pl = set(re.findall(r"^ipv6? prefix-list (\S+)$", text, re.M))
                defined_rm = set(re.findall(r"^route-map (\S+) permit", text, re.M))
                indent = "      "
            else:
                continue
            assert set(re.findall(r"match ipv6? address prefix-list (\S+)", text)) == defined_pl, name
            used = set(re.findall(rf"^{indent}neighbor \S+ route-map (\S+) (?:in|out)$", text, re.M))
            assert used == defined_rm, name
            activated = re.findall(rf"^{indent}neighbor (\S+) activate$", text, re.M)
            for group in activated:
                assert re.search(rf"^{indent}neighbor {group} route-map \S+ out$", text, re.M), (name, group)
            checked += 1
    assert checked == 18


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**128 - 1))
def test_peer_ip_is_the_other_address_of_the_link(v4, v6):
    from ipaddress import IPv4Interface, IPv6Interface  # noqa: PLC0415

    from netgen.platforms.routing import peer_ip  # noqa: PLC0415

    for local, prefix, cls in ((v4, 31, IPv4Interface), (v6, 127, IPv6Interface)):
        interface = cls((local, prefix))
        other = cls((peer_ip(interface), prefix))
        assert other.network == interface.network and other.ip != interface.ip
        assert peer_ip(other) == str(interface.ip)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 32), st.integers(0, 2**128 - 1), st.integers(0, 128))
def test_interface_text_is_what_ipaddress_writes(v4, plen4, v6, plen6):
    from ipaddress import IPv4Interface, IPv6Interface  # noqa: PLC0415

    from netgen.platforms.routing import interface_text  # noqa: PLC0415

    for interface in (IPv4Interface((v4, plen4)), IPv6Interface((v6, plen6))):
        assert interface_text(interface) == str(interface)
