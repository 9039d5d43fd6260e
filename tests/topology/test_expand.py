"""Topology expansion: hand-derived addresses, names and ASNs; determinism; stability."""

from __future__ import annotations

import copy
import dataclasses
import sys
from ipaddress import IPv4Interface, IPv4Network, IPv6Interface

import pytest

from tests.conftest import META, SMALL, topology_of

pytestmark = pytest.mark.render


def test_small_counts():
    topo = topology_of(SMALL)
    # 2 zones x (4 RTSW + 4 CTSW) + 2 ATSW
    assert len(topo.devices) == 18
    # rack links: 2 zones x 4 racks x (4 CTSW x 4 links); ATSW links: 2 zones x 4 CTSW x 2 uplinks
    assert len(topo.links) == 2 * 4 * 16 + 2 * 4 * 2
    # one IPv4 and one IPv6 session per link (p2p_ipv6 is set)
    assert len(topo.sessions) == 2 * len(topo.links)
    assert len(topo.host_nics) == 2 * 4 * 2 * 8


def test_small_addresses_and_asns_follow_the_slot_plan():
    # loopback 10.0.0.0/20, max_zones 15 -> 16 slots of /24; slot 0 ATSW, slot N zone N.
    # Inside a zone slot: RTSW half .0-.127, CTSW half .128-.255; offset 0 unused.
    topo = topology_of(SMALL)
    d = topo.devices
    assert d["atsw01"].loopback_ipv4 == IPv4Interface("10.0.0.1/32")
    assert d["z01-rtsw001"].loopback_ipv4 == IPv4Interface("10.0.1.1/32")
    assert d["z01-ctsw01"].loopback_ipv4 == IPv4Interface("10.0.1.129/32")
    assert d["z02-rtsw004"].loopback_ipv4 == IPv4Interface("10.0.2.4/32")
    # host 10.128.0.0/16 -> 16 slots of /20; 16 NICs + gw + net + bcast -> /27 per rack
    assert d["z01-rtsw002"].host_subnet_ipv4 == IPv4Network("10.128.16.32/27")
    assert d["z01-rtsw002"].host_gateway_ipv4 == IPv4Interface("10.128.16.33/27")
    nic = next(n for n in topo.host_nics if n.rtsw == "z01-rtsw002" and n.nic == 1 and n.host.endswith("h01"))
    assert nic.ipv4 == IPv4Interface("10.128.16.34/27")
    # RFC 7938 plan: rtsw_base + zone * stride + rack; ctsw_base + zone; one ATSW ASN
    assert d["z01-rtsw001"].asn == 4_201_010_001
    assert d["z02-rtsw003"].asn == 4_201_020_003
    assert d["z02-ctsw04"].asn == 4_200_000_002
    assert d["atsw02"].asn == 4_200_000_000
    assert d["z01-rtsw001"].ecmp_width == 16


def test_links_use_31s_with_the_spine_on_the_even_address():
    topo = topology_of(SMALL)
    first = next(lk for lk in topo.links if lk.lower.device == "z01-rtsw001")
    # p2p 10.1.0.0/16 -> 16 slots of /20; zone 1 = 10.1.16.0; link 0 = rack 1 to ctsw 1
    assert first.upper.device == "z01-ctsw01"
    assert first.upper.ipv4 == IPv4Interface("10.1.16.0/31")
    assert first.lower.ipv4 == IPv4Interface("10.1.16.1/31")
    for link in topo.links:
        assert link.upper.ipv4.network == link.lower.ipv4.network
        assert int(link.upper.ipv4.ip) % 2 == 0
        assert int(link.lower.ipv4.ip) == int(link.upper.ipv4.ip) + 1
    agg = next(lk for lk in topo.links if lk.tier.value == "ctsw-atsw" and lk.lower.device == "z01-ctsw01")
    # ATSW links live in the upper half of the zone's p2p slot
    assert agg.upper.ipv4 == IPv4Interface("10.1.24.0/31")


def test_sessions_match_devices_and_links():
    topo = topology_of(SMALL)
    for session in topo.sessions:
        assert session.lower_asn == topo.devices[session.lower_device].asn
        assert session.upper_asn == topo.devices[session.upper_device].asn
        assert session.lower_ip.network == session.upper_ip.network
        assert session.lower_asn != session.upper_asn  # always eBGP


def test_port_names_follow_each_nos():
    topo = topology_of(SMALL)
    sonic = [p.name for p in topo.ports["z01-rtsw001"]]
    eos = [p.name for p in topo.ports["z02-rtsw001"]]
    # 400G NICs on 800G 8-lane cages: 2x400G breakout, lanes 0-3 and 4-7
    assert sonic[:3] == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert eos[:3] == ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1"]
    # 16 uplinks (8 cages) at the top of a 64-cage switch: cages 56..63
    assert sonic[16] == "Ethernet448" and eos[16] == "Ethernet57/1"
    assert sonic[-1] == "Ethernet508" and eos[-1] == "Ethernet64/5"
    spine = [p.name for p in topo.ports["z01-ctsw01"]]
    # 7804R3: line cards from slot 3, 36 cages each; downlinks from cage 0, uplinks at the top
    assert spine[0] == "Ethernet3/1/1"
    assert spine[-1] == "Ethernet6/36/1"
    for ports in topo.ports.values():
        names = [p.name for p in ports]
        assert len(names) == len(set(names))


def test_expansion_is_deterministic():
    assert topology_of(SMALL) == topology_of(SMALL)


def _assert_pure_addition(old, new):
    for name, device in old.devices.items():
        assert new.devices[name] == device, name
        assert set(old.ports[name]) <= set(new.ports[name]), name
    assert set(old.links) <= set(new.links)
    assert set(old.sessions) <= set(new.sessions)
    assert set(old.host_nics) <= set(new.host_nics)


def test_adding_a_rack_changes_nothing_that_exists(small_data, write_fabric):
    old = topology_of(write_fabric(small_data))
    grown = copy.deepcopy(small_data)
    grown["zones"][0]["racks"] += 1
    new = topology_of(write_fabric(grown))
    _assert_pure_addition(old, new)
    added = set(new.devices) - set(old.devices)
    assert added == {"z01-rtsw005"}
    assert len(new.links) == len(old.links) + 16


def test_adding_a_zone_changes_nothing_that_exists(small_data, write_fabric):
    old = topology_of(write_fabric(small_data))
    grown = copy.deepcopy(small_data)
    grown["zones"].append({**copy.deepcopy(grown["zones"][1]), "id": 3})
    new = topology_of(write_fabric(grown))
    _assert_pure_addition(old, new)
    assert {d for d in new.devices if d.startswith("z03-")} == set(new.devices) - set(old.devices)


def test_a_bigger_later_zone_keeps_ports_when_ports_per_zone_is_pinned(small_data, write_fabric):
    small_data["aggregation"]["ports_per_zone"] = 8
    old = topology_of(write_fabric(small_data))
    grown = copy.deepcopy(small_data)
    grown["zones"].append({**copy.deepcopy(grown["zones"][1]), "id": 3, "ctsw_count": 8, "links_per_rtsw_ctsw": 2})
    new = topology_of(write_fabric(grown))
    # The ATSWs' equal-cost width must grow to cover the wider zone (8 CTSWs); nothing else changes.
    assert new.devices["atsw01"].ecmp_width == 8 and old.devices["atsw01"].ecmp_width == 4
    for name in ("atsw01", "atsw02"):
        new.devices[name] = dataclasses.replace(new.devices[name], ecmp_width=old.devices[name].ecmp_width)
    _assert_pure_addition(old, new)


def test_host_prefix_override_and_ipv6_host_pool(small_data, write_fabric):
    small_data["addressing"]["host_ipv6"] = "fd00:0:2::/48"
    small_data["zones"][0]["host_prefix_length"] = 26
    topo = topology_of(write_fabric(small_data))
    rack2 = topo.devices["z01-rtsw002"]
    assert rack2.host_subnet_ipv4 == IPv4Network("10.128.16.64/26")
    assert rack2.host_subnet_ipv6 is not None and rack2.host_subnet_ipv6.prefixlen == 64
    rack1 = topo.devices["z01-rtsw001"]
    assert rack1.host_subnet_ipv6 != rack2.host_subnet_ipv6


def test_meta_24k_shape():
    topo = topology_of(META)
    assert len(topo.devices) == 8 * (192 + 16) + 28
    assert len(topo.host_nics) == 24_576  # one backend NIC per GPU
    assert len(topo.links) == 8 * 192 * 16 + 8 * 16 * 28
    atsw = topo.ports["atsw01"]
    # every CTSW (8 zones x 16) has exactly one link to each of the 28 ATSWs
    assert len(atsw) == 8 * 16
    assert all(dataclasses.asdict(p)["speed_gbps"] == 400 for p in atsw)


def _interfaces(topology):
    """Every interface of a topology: device addresses, port and link ends, sessions, NICs."""
    found = []
    for device in topology.devices.values():
        found += [getattr(device, f.name) for f in dataclasses.fields(device)]
    for ports in topology.ports.values():
        found += [address for port in ports for address in (port.ipv4, port.ipv6)]
    for link in topology.links:
        found += [link.lower.ipv4, link.upper.ipv4, link.lower.ipv6, link.upper.ipv6]
    found += [getattr(s, f.name) for s in topology.sessions for f in dataclasses.fields(s)]
    found += [nic.ipv4 for nic in topology.host_nics]
    return [value for value in found if isinstance(value, IPv4Interface | IPv6Interface)]


@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_interfaces_made_from_integers_are_those_ipaddress_makes(fabric, monkeypatch):
    """The expansion builds IPv4 and IPv6 interfaces without ipaddress's constructor (a shared
    network per subnet): each must be the constructor's in value, text, hash and fields, and the
    topology equal to the one the constructor gives."""
    expand_module = sys.modules["netgen.topology.expand"]
    assert all(expand_module._FAST_INTERFACES.values())  # the fast path is what runs here
    fast = topology_of(fabric)
    made = _interfaces(fast)
    assert sum(isinstance(i, IPv4Interface) for i in made) > 100
    assert sum(isinstance(i, IPv6Interface) for i in made) > (100 if fabric == SMALL else -1)
    for interface in made:
        real = type(interface)(str(interface))
        assert (interface, str(interface), hash(interface), vars(interface), getattr(interface, "_scope_id", None)) == (
            real, str(real), hash(real), vars(real), getattr(real, "_scope_id", None))
    monkeypatch.setattr(expand_module, "_FAST_INTERFACES", {})
    assert topology_of(fabric) == fast
