"""The lab plan, pure: Linux interface names, slicing, and what `plan_lab` builds from the small
example's rendered files. No root, no FRR daemons (an FRR dry run only where vtysh is installed).

Every expected value is computed here from the topology, the rendered files, or by hand; never by
asking the plan code."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from ipaddress import ip_interface
from pathlib import Path

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.plan import (
    LINUX_IFNAME_MAX,
    MAX_LAB_ROUTERS,
    LabPlan,
    LabSliceError,
    SliceRequest,
    linux_ifname,
    select_devices,
)
from netgen.nos.eos.lab import EOS_FRR_SOURCE
from netgen.nos.sonic.lab import SONIC_FRR_SOURCE
from netgen.output.manifest import MARKER
from netgen.platforms.render import render_devices
from netgen.platforms.routing import bgp_plan
from netgen.topology import Topology, expand
from netgen.topology.model import HostNic, Role
from tests.conftest import META, SMALL, run_cli

pytestmark = pytest.mark.render

VTYSH = shutil.which("vtysh")
WHOLE = SliceRequest()
ZONE_SLICE = SliceRequest(zone=1, racks=2, ctsw=1)


def _ctx(path: Path) -> DesignContext:
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


@pytest.fixture(scope="module")
def ctx() -> DesignContext:
    return _ctx(SMALL)


@pytest.fixture(scope="module")
def meta_topology() -> Topology:
    return _ctx(META).topology


@pytest.fixture(scope="module")
def rendered(ctx) -> dict[str, dict[str, str]]:
    """Every device's rendered files, rendered here by the renderer (not through the lab code)."""
    files, skipped = render_devices(ctx, list(ctx.topology.devices.values()))
    assert skipped == {}
    return {name: {f.name: f.content for f in items} for name, items in files.items()}


@pytest.fixture(scope="module")
def plans(ctx) -> dict[str, LabPlan]:
    return {"whole": plan_lab("t", ctx, WHOLE), "zone1": plan_lab("t", ctx, ZONE_SLICE)}


def _inside(topo: Topology, plan: LabPlan) -> set[str]:
    return {name for name in plan.nodes if name in topo.devices}


def _first_nics(topo: Topology, rtsws: set[str]) -> dict[str, HostNic]:
    first: dict[str, HostNic] = {}
    for nic in topo.host_nics:
        if nic.rtsw in rtsws and (nic.rtsw not in first or nic.nic < first[nic.rtsw].nic):
            first[nic.rtsw] = nic
    return first


def _cabled(topo: Topology, inside: set[str]) -> dict[str, set[str]]:
    """Rendered port names that carry a cable inside the slice (fabric links and the first host NIC)."""
    cabled: dict[str, set[str]] = {name: set() for name in inside}
    for link in topo.links:
        if link.lower.device in inside and link.upper.device in inside:
            cabled[link.lower.device].add(link.lower.port)
            cabled[link.upper.device].add(link.upper.port)
    for rtsw, nic in _first_nics(topo, {n for n in inside if topo.devices[n].role is Role.RTSW}).items():
        cabled[rtsw].add(nic.port)
    return cabled


# --- linux_ifname ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Ethernet0", "Ethernet448", "Ethernet508", "Loopback0", "Vlan1000"])
def test_sonic_names_are_kept(name):
    assert linux_ifname(name) == name


@pytest.mark.parametrize(("rendered", "linux"), [
    ("Ethernet3/1/1", "Ethernet3_1_1"),
    ("Ethernet1/1", "Ethernet1_1"),
    ("Ethernet10/34/1", "Ethernet10_34_1"),  # exactly 15 after the slashes go: kept whole
    ("Ethernet10/34/10", "Et10_34_10"),  # 16: abbreviated as EOS abbreviates it
    ("Ethernet10/100/1", "Et10_100_1"),
])
def test_eos_names_lose_slashes_and_abbreviate_when_too_long(rendered, linux):
    assert linux_ifname(rendered) == linux
    assert len(linux) <= 15


@pytest.mark.parametrize("rendered", [
    "Ethernet" + "1" * 20,  # still 22 characters as Et...
    "Port-Channel123456",  # 18 characters, and no Ethernet to shorten
    "Ethernet 1",  # a space is no interface name
    "",
])
def test_impossible_names_are_refused(rendered):
    with pytest.raises(LabSliceError, match=r"at most 15 characters") as info:
        linux_ifname(rendered)
    assert repr(rendered) in str(info.value)


@pytest.mark.parametrize("fabric", ["small", "meta"])
def test_every_port_of_both_examples_gets_a_unique_short_linux_name(fabric, ctx, meta_topology):
    topo = ctx.topology if fabric == "small" else meta_topology
    assert LINUX_IFNAME_MAX == 15
    checked = 0
    for device, ports in topo.ports.items():
        names = [linux_ifname(p.name) for p in ports]
        assert len(set(names)) == len(names), device
        assert all(0 < len(n) <= 15 and "/" not in n for n in names), device
        checked += len(names)
    assert checked == sum(len(p) for p in topo.ports.values()) > 0


# --- slicing --------------------------------------------------------------------------------------


def _first(topo: Topology, zone: int, role: Role, count: int) -> list[str]:
    members = sorted((d for d in topo.devices.values() if d.zone == zone and d.role is role), key=lambda d: d.number)
    return [d.name for d in members[:count]]


def test_whole_fabric_includes_the_atsw_layer(ctx):
    names = {d.name for d in select_devices(ctx.topology, WHOLE)}
    assert names == set(ctx.topology.devices)
    assert {"atsw01", "atsw02"} <= names and len(names) == 18


def test_zone_slice_has_no_atsw(ctx):
    picked = select_devices(ctx.topology, SliceRequest(zone=1))
    assert all(d.role is not Role.ATSW and d.zone == 1 for d in picked)
    assert {d.name for d in picked} == {n for n, d in ctx.topology.devices.items() if d.zone == 1}
    assert len(picked) == 8


def test_racks_and_ctsw_limits_pick_the_first_n(ctx):
    topo = ctx.topology
    picked = {d.name for d in select_devices(topo, SliceRequest(zone=2, racks=3, ctsw=2))}
    assert picked == set(_first(topo, 2, Role.RTSW, 3) + _first(topo, 2, Role.CTSW, 2))
    assert picked == {"z02-rtsw001", "z02-rtsw002", "z02-rtsw003", "z02-ctsw01", "z02-ctsw02"}
    # Without --zone the limits apply to every zone, and the ATSW layer stays.
    picked = {d.name for d in select_devices(topo, SliceRequest(racks=1, ctsw=1))}
    assert picked == {"atsw01", "atsw02", "z01-ctsw01", "z01-rtsw001", "z02-ctsw01", "z02-rtsw001"}


@pytest.mark.parametrize(("request_", "message"), [
    (SliceRequest(zone=3), "--zone 3: the fabric has zones 1, 2"),
    (SliceRequest(zone=0), "--zone 0: the fabric has zones 1, 2"),
    (SliceRequest(zone=1, racks=5), "--racks 5: zone 1 has 4 RTSW(s); choose 1 to 4"),
    (SliceRequest(zone=2, racks=0), "--racks 0: zone 2 has 4 RTSW(s); choose 1 to 4"),
    (SliceRequest(zone=1, ctsw=5), "--ctsw 5: zone 1 has 4 CTSW(s); choose 1 to 4"),
    (SliceRequest(ctsw=0), "--ctsw 0: zone 1 has 4 CTSW(s); choose 1 to 4"),
    (SliceRequest(racks=9), "--racks 9: zone 1 has 4 RTSW(s); choose 1 to 4"),
])
def test_out_of_range_slices_name_the_flag_and_the_range(ctx, request_, message):
    with pytest.raises(LabSliceError) as info:
        select_devices(ctx.topology, request_)
    assert str(info.value) == message


def test_a_zone_with_fewer_racks_is_named_in_the_error(small_data, write_fabric):
    small_data["zones"][1]["racks"] = 2
    topo = _ctx(write_fabric(small_data)).topology
    assert len(select_devices(topo, SliceRequest(racks=2))) == 2 + 2 * (4 + 2)
    with pytest.raises(LabSliceError, match=r"^--racks 3: zone 2 has 2 RTSW\(s\); choose 1 to 2$"):
        select_devices(topo, SliceRequest(racks=3))


def test_slices_over_the_measured_router_limit_are_refused(meta_topology):
    assert MAX_LAB_ROUTERS == 256
    # meta-24k: 28 ATSWs + 8 zones x (16 CTSWs + 192 RTSWs)
    with pytest.raises(LabSliceError, match=r"the slice has 1692 switches.* 256: narrow it with --zone"):
        select_devices(meta_topology, WHOLE)
    assert len(select_devices(meta_topology, SliceRequest(zone=1))) == 16 + 192  # under the limit
    assert len(select_devices(meta_topology, SliceRequest(racks=16, ctsw=4))) == 28 + 8 * 20  # 188


# --- plan_lab on the small example ----------------------------------------------------------------


@pytest.mark.parametrize(("which", "request_", "routers", "hosts", "links"), [
    # 2 ATSW + 2 x (4 CTSW + 4 RTSW); 8 x 4 x 4 rack links + 8 x 2 ATSW links + 8 host cables
    ("whole", WHOLE, 18, 8, 128 + 16 + 8),
    # 1 CTSW + 2 RTSW; 2 x 4 rack links + 2 host cables
    ("zone1", ZONE_SLICE, 3, 2, 8 + 2),
])
def test_node_and_link_counts_follow_the_topology(ctx, plans, which, request_, routers, hosts, links):
    plan, topo = plans[which], ctx.topology
    inside = {d.name for d in select_devices(topo, request_)}
    rtsws = {n for n in inside if topo.devices[n].role is Role.RTSW}
    fabric_links = [k for k in topo.links if k.lower.device in inside and k.upper.device in inside]
    assert len(plan.routers()) == len(inside) == routers
    assert len(plan.hosts()) == len(rtsws) == hosts
    assert len(plan.nodes) == routers + hosts
    assert len(plan.links) == len(fabric_links) + len(rtsws) == links
    assert {(k.lower.device, k.lower.port, k.upper.device, k.upper.port) for k in fabric_links} == {
        (k.a, k.a_port, k.b, k.b_port) for k in plan.links if plan.nodes[k.a].kind == "router"}
    for name in inside:
        device, node = topo.devices[name], plan.nodes[name]
        assert (node.kind, node.nos, node.role, node.zone, node.asn) == (
            "router", device.nos, device.role.value, device.zone, device.asn)
        want = {str(device.loopback_ipv4)} | {str(p) for p in (device.loopback_ipv6, device.host_subnet_ipv4,
                                                                device.host_subnet_ipv6) if p is not None}
        assert set(node.announces) == want
    assert plan.slice == {"whole": "every zone and the ATSW layer",
                          "zone1": "zone 1, first 2 rack(s), first 1 CTSW(s)"}[which]


@pytest.mark.parametrize("which", ["whole", "zone1"])
def test_every_link_end_is_an_interface_of_its_node(plans, which):
    plan = plans[which]
    for node in plan.nodes.values():
        names = [i.name for i in node.interfaces]
        assert len(set(names)) == len(names), node.name
        assert all(len(n) <= 15 and "/" not in n for n in names), node.name
    used: dict[str, list[str]] = {}
    for link in plan.links:
        for node, ifname, port in ((link.a, link.a_if, link.a_port), (link.b, link.b_if, link.b_port)):
            by_name = {i.name: i for i in plan.nodes[node].interfaces}
            assert ifname in by_name, (node, ifname)
            assert by_name[ifname].kind == "port" and by_name[ifname].rendered == port
            used.setdefault(node, []).append(ifname)
    # each port carries one cable, and every port a node has is cabled
    for node in plan.nodes.values():
        assert sorted(used[node.name]) == sorted(i.name for i in node.interfaces if i.kind == "port"), node.name


@pytest.mark.parametrize("which", ["whole", "zone1"])
def test_sonic_nodes_carry_exactly_the_rendered_config_db_addresses(ctx, plans, rendered, which):
    plan, topo = plans[which], ctx.topology
    cabled = _cabled(topo, _inside(topo, plan))
    sonic = [n for n in plan.routers() if n.nos == "sonic"]
    assert len(sonic) == {"whole": 4, "zone1": 2}[which]
    for node in sonic:
        db = json.loads(rendered[node.name]["config_db.json"])

        def prefixes(table: str, name: str, db=db) -> set[str]:
            return {key.split("|", 1)[1] for key in db[table] if key.startswith(f"{name}|")}

        ports = {i.rendered: i for i in node.interfaces if i.kind == "port"}
        assert set(ports) == cabled[node.name]
        for port, intf in ports.items():
            assert set(intf.addresses) == prefixes("INTERFACE", port), (node.name, port)
            assert len(intf.addresses) == len(set(intf.addresses))
            assert intf.up and intf.mtu == int(db["PORT"][port]["mtu"]) == 9100
        bridges = {i.name: i for i in node.interfaces if i.kind == "bridge"}
        assert set(bridges) == {"Loopback0", "Vlan1000"}
        assert set(bridges["Loopback0"].addresses) == prefixes("LOOPBACK_INTERFACE", "Loopback0")
        assert set(bridges["Vlan1000"].addresses) == prefixes("VLAN_INTERFACE", "Vlan1000")
        assert len(bridges["Loopback0"].addresses) == 2 and len(bridges["Vlan1000"].addresses) == 1
        # The first NIC's port is the only one in the VLAN's bridge, and it is a VLAN_MEMBER in config_db.
        (nic,) = [n for n in topo.host_nics if n.rtsw == node.name and n.nic == 1 and n.host.endswith("-h01")]
        members = {p for p, i in ports.items() if i.bridge is not None}
        assert members == {nic.port}
        assert ports[nic.port].bridge == "Vlan1000" and ports[nic.port].addresses == ()
        assert f"Vlan1000|{nic.port}" in db["VLAN_MEMBER"]


@pytest.mark.parametrize("which", ["whole", "zone1"])
def test_eos_nodes_carry_the_topology_addresses(ctx, plans, which):
    plan, topo = plans[which], ctx.topology
    cabled = _cabled(topo, _inside(topo, plan))
    eos = [n for n in plan.routers() if n.nos == "eos"]
    assert len(eos) == {"whole": 14, "zone1": 1}[which]
    for node in eos:
        device = topo.devices[node.name]
        ports = {i.rendered: i for i in node.interfaces if i.kind == "port"}
        assert set(ports) == cabled[node.name]
        by_name = {p.name: p for p in topo.ports[node.name]}
        for name, intf in ports.items():
            want = tuple(str(a) for a in (by_name[name].ipv4, by_name[name].ipv6) if a is not None)
            assert intf.addresses == want, (node.name, name)
            assert intf.name == name.replace("/", "_")
        bridges = {i.name: i.addresses for i in node.interfaces if i.kind == "bridge"}
        assert bridges["Loopback0"] == (str(device.loopback_ipv4), str(device.loopback_ipv6))
        if device.role is Role.RTSW:
            assert bridges["Vlan1000"] == (str(device.host_gateway_ipv4),)
            assert [p for p, i in ports.items() if i.bridge == "Vlan1000"] == [_first_nics(topo, {node.name})[
                node.name].port]
        else:
            assert set(bridges) == {"Loopback0"}


@pytest.mark.parametrize("which", ["whole", "zone1"])
def test_one_host_per_rtsw_inside_its_subnet_behind_the_vlan_gateway(ctx, plans, which):
    plan, topo = plans[which], ctx.topology
    rtsws = {n.name for n in plan.routers("rtsw")}
    hosts = plan.hosts()
    assert sorted(h.attached_to for h in hosts) == sorted(rtsws)
    first = _first_nics(topo, rtsws)
    for host in hosts:
        device = topo.devices[host.attached_to]
        address = ip_interface(host.host_ipv4)
        assert address.ip in device.host_subnet_ipv4 and address.network == device.host_subnet_ipv4
        assert address.ip not in (device.host_subnet_ipv4.network_address, device.host_gateway_ipv4.ip)
        assert host.gateway_v4 == str(device.host_gateway_ipv4.ip)
        vlan = next(i for i in plan.nodes[device.name].interfaces if i.name == "Vlan1000")
        assert host.gateway_v4 in {str(ip_interface(a).ip) for a in vlan.addresses}
        assert host.name == first[device.name].host and host.zone == device.zone
        (intf,) = host.interfaces
        assert intf.addresses == (host.host_ipv4,) and intf.mtu == 9100
        (link,) = [k for k in plan.links if host.name in (k.a, k.b)]
        assert (link.a, link.a_if, link.b, link.b_port) == (host.name, intf.name, device.name, first[device.name].port)


@pytest.mark.parametrize(("which", "outside"), [
    ("whole", 0),
    # 2 RTSWs x 3 other CTSWs x 4 links, ctsw01 x 2 other RTSWs x 4 links, ctsw01 x 2 ATSW uplinks; x 2 AFIs
    ("zone1", (2 * 3 * 4 + 2 * 4 + 2) * 2),
])
def test_expected_sessions_are_the_topology_sessions_inside_the_slice(ctx, plans, which, outside):
    plan, topo = plans[which], ctx.topology
    inside = _inside(topo, plan)
    want = [(s.afi, s.lower_device, str(s.lower_ip.ip), s.upper_device, str(s.upper_ip.ip))
            for s in topo.sessions if s.lower_device in inside and s.upper_device in inside]
    got = [(s.afi, s.a, s.a_ip, s.b, s.b_ip) for s in plan.sessions]
    assert sorted(got) == sorted(want)
    assert len(got) == len(set(got)) == {"whole": 288, "zone1": 16}[which]
    touching = sum(1 for s in topo.sessions if (s.lower_device in inside) != (s.upper_device in inside))
    assert plan.sessions_outside == touching == outside


# --- FRR configs ----------------------------------------------------------------------------------


BGP_KEY = (SMALL.parent / "secrets" / "bgp.key").read_text().strip()


def _filled(frr: str) -> str:
    """A rendered frr.conf as the lab runs it (and a deploy sends it): the BGP key filled in."""
    assert "<netgen-secret/bgp.password>" in frr
    return frr.replace("<netgen-secret/bgp.password>", BGP_KEY)


def test_sonic_nodes_run_the_rendered_frr_conf_unchanged_but_for_secrets(plans, rendered):
    for node in plans["whole"].routers():
        if node.nos == "sonic":
            assert node.frr_conf == _filled(rendered[node.name]["frr.conf"])
            assert node.frr_source == SONIC_FRR_SOURCE
    for node in plans["whole"].routers():  # the EOS stand-ins authenticate their sessions too
        assert "netgen-secret" not in node.frr_conf and f" password {BGP_KEY}\n" in node.frr_conf


NEIGHBOR = re.compile(r"^\s+neighbor (\S+) remote-as (\d+)$", re.MULTILINE)
NETWORK = re.compile(r"^\s+network (\S+)$", re.MULTILINE)


def test_eos_stand_in_says_what_it_is_and_carries_the_bgp_plan(ctx, plans, rendered):
    eos = [n for n in plans["whole"].routers() if n.nos == "eos"]
    assert len(eos) == 14
    for node in eos:
        conf = node.frr_conf
        first = conf.split("\n", 1)[0]
        assert first.startswith(f"! {node.name}: ") and "its EOS CLI is not what runs" in first
        assert "SONiC loads it" not in conf
        assert node.frr_source == EOS_FRR_SOURCE and "EOS CLI is not what runs" in node.frr_source
        plan = bgp_plan(ctx, ctx.topology.devices[node.name])
        neighbors = {a: int(asn) for a, asn in NEIGHBOR.findall(conf)}
        assert len(NEIGHBOR.findall(conf)) == len(neighbors) == len(plan.neighbors) > 0
        assert neighbors == {n.address: n.remote_as for n in plan.neighbors}
        assert NETWORK.findall(conf) == plan.networks_v4 + plan.networks_v6
        assert f"\nrouter bgp {node.asn}\n" in conf and f"maximum-paths {plan.maximum_paths}\n" in conf
        # ... and the same neighbours and networks as the EOS CLI rendered for the device
        cli = rendered[node.name][f"{node.name}.cfg"]
        assert {a: int(asn) for a, asn in NEIGHBOR.findall(cli)} == neighbors
        assert set(NETWORK.findall(cli)) == set(NETWORK.findall(conf))


def test_stand_in_neighbours_match_the_topology_peers(ctx, plans):
    # independent of bgp_plan: a CTSW's neighbours are the far ends of its cables
    node = plans["whole"].nodes["z01-ctsw01"]
    topo = ctx.topology
    want = {}
    for link in topo.links:
        for here, there in ((link.lower, link.upper), (link.upper, link.lower)):
            if here.device == node.name:
                want[str(there.ipv4.ip)] = topo.devices[there.device].asn
                want[str(there.ipv6.ip)] = topo.devices[there.device].asn
    assert {a: int(asn) for a, asn in NEIGHBOR.findall(node.frr_conf)} == want
    assert len(want) == (4 * 4 + 2) * 2


@pytest.mark.skipif(VTYSH is None, reason="FRR is not installed (apt-get install frr); .ci/run installs it")
def test_eos_stand_ins_pass_frr_dry_run(plans, tmp_path):
    eos = [n for n in plans["whole"].routers() if n.nos == "eos"]
    failures = []
    for node in eos:
        path = tmp_path / f"{node.name}.conf"
        path.write_text(node.frr_conf)
        proc = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            failures.append((node.name, proc.stdout + proc.stderr))
    assert failures == []
    assert len(eos) == 14


# --- plan_lab(configs=DIR) ------------------------------------------------------------------------


@pytest.fixture
def render_dir(tmp_path) -> Path:
    out = tmp_path / "rendered"
    result = run_cli("render", str(SMALL), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert (out / MARKER).is_file()
    return out


def test_plan_from_a_render_directory_matches_rendering_now(ctx, plans, render_dir):
    assert plan_lab("t", ctx, WHOLE, configs=render_dir) == plans["whole"]


def test_an_edited_frr_conf_in_the_directory_is_what_the_node_runs(ctx, render_dir):
    frr = render_dir / "z01-rtsw001" / "frr.conf"
    good = " neighbor 10.1.16.0 remote-as 4200000001\n"
    text = frr.read_text()
    assert good in text
    edited = text.replace(good, " neighbor 10.1.16.0 remote-as 4200000099\n")
    frr.write_text(edited)
    with pytest.raises(LabSliceError, match=r"z01-rtsw001/frr\.conf: changed since netgen render wrote it"):
        plan_lab("t", ctx, ZONE_SLICE, configs=render_dir)
    plan = plan_lab("t", ctx, ZONE_SLICE, configs=render_dir, accept_edited=True)
    assert plan.nodes["z01-rtsw001"].frr_conf == _filled(edited)
    assert "remote-as 4200000099" not in plan.nodes["z01-rtsw002"].frr_conf


def test_an_edited_config_db_in_the_directory_sets_the_node_addresses(ctx, render_dir):
    path = render_dir / "z01-rtsw001" / "config_db.json"
    db = json.loads(path.read_text())
    del db["INTERFACE"]["Ethernet448|fd00:0:1:1000::1/127"]
    db["INTERFACE"]["Ethernet448|10.99.0.1/31"] = {}
    path.write_text(json.dumps(db))
    plan = plan_lab("t", ctx, ZONE_SLICE, configs=render_dir, accept_edited=True)
    (port,) = [i for i in plan.nodes["z01-rtsw001"].interfaces if i.rendered == "Ethernet448"]
    assert set(port.addresses) == {"10.1.16.1/31", "10.99.0.1/31"}


def test_a_directory_without_the_marker_is_refused(ctx, render_dir):
    (render_dir / MARKER).unlink()
    with pytest.raises(LabSliceError, match=r"not a `netgen render` output directory \(no \.netgen-render\)"):
        plan_lab("t", ctx, ZONE_SLICE, configs=render_dir)


def test_a_missing_device_folder_is_refused_only_when_the_slice_needs_it(ctx, render_dir):
    shutil.rmtree(render_dir / "z01-rtsw002")
    with pytest.raises(LabSliceError, match=r"z01-rtsw002: missing; render the fabric again"):
        plan_lab("t", ctx, ZONE_SLICE, configs=render_dir)
    plan = plan_lab("t", ctx, SliceRequest(zone=1, racks=1), configs=render_dir)
    assert "z01-rtsw002" not in plan.nodes and "z01-rtsw001" in plan.nodes


def test_a_sonic_folder_without_frr_conf_is_refused(ctx, render_dir):
    (render_dir / "z01-rtsw001" / "frr.conf").unlink()
    with pytest.raises(LabSliceError, match=r"z01-rtsw001/frr\.conf \(listed in \.netgen-render, missing\)"):
        plan_lab("t", ctx, ZONE_SLICE, configs=render_dir)


# --- serialisation --------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["whole", "zone1"])
def test_the_plan_round_trips_through_json(plans, which):
    plan = plans[which]
    data = json.loads(json.dumps(plan.model_dump(mode="json")))
    again = LabPlan.model_validate(data)
    assert again == plan
    assert again.nodes["z01-rtsw001"].interfaces == plan.nodes["z01-rtsw001"].interfaces
    assert again.links == plan.links and again.sessions == plan.sessions
