"""The netns lab end to end: real FRR routers in namespaces, built from the small example's rendered
files, verified, drilled and torn down with nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from ipaddress import ip_interface
from pathlib import Path

import pytest

from netgen.lab.backend import ExecReads, LabError
from netgen.lab.netns import NetnsBackend
from tests.conftest import SMALL, run_cli
from tests.lab.conftest import HostSnapshot, assert_nothing_left, cli_json, lab_name, needs_lab

pytestmark = [pytest.mark.lab, needs_lab]


@pytest.fixture(scope="module")
def small_lab():
    """The whole small example: 18 routers (SONiC and EOS RTSWs, Jericho CTSWs, ATSWs), 8 hosts."""
    before = HostSnapshot.take()
    name = lab_name("s")
    code, report = cli_json("lab", "up", str(SMALL), "--name", name)
    assert code == 0, report
    yield name, report
    code, down = cli_json("lab", "down", "--name", name)
    assert code == 0 and down["namespaces_removed"] == 26
    assert_nothing_left(before, name)


def test_up_converges_every_session(small_lab):
    _, report = small_lab
    assert report["converged"] is True
    assert report["sessions_expected"] == report["sessions_established"] == 288
    assert report["build"]["routers"] == 18 and report["build"]["nodes"] == 26
    assert report["memory_pss_mb_per_router"]["mean"] > 5  # real daemons were measured
    assert any("EOS CLI is not what runs" in s for s in report["frr_sources"])


def test_verify_reports_sessions_ecmp_and_pings(small_lab):
    name, _ = small_lab
    code, report = cli_json("lab", "verify", "--name", name)
    assert code == 0 and report["ok"] is True, [r for r in report["results"] if not r["ok"]][:5]
    kinds = {r["check"] for r in report["results"]}
    assert kinds == {"bgp-session", "maximum-prefix", "ecmp", "lldp", "ping"}
    # every router's peers within the rendered maximum-prefix: the CTSW's RTSW peers send 2 of 2 (IPv4)
    limits = {r["node"]: r["detail"] for r in report["results"] if r["check"] == "maximum-prefix"}
    assert len(limits) == 18 and "of 2 prefixes (100%)" in limits["z01-ctsw01"]
    # the lab's own settings are said: 288 BFD sessions run at 600 ms in this lab, not the rendered 300
    assert any("300 ms -> 600 ms" in line for line in report["lab_only"]), report["lab_only"]
    lldp = [r for r in report["results"] if r["check"] == "lldp"]
    # real lldpd in every node: both ends of every cable hear the planned neighbour on the planned port
    assert len(lldp) == 2 * report_links(name) and all(r["ok"] for r in lldp)
    assert any(r["subject"] == "z02-rtsw001:Ethernet3/1/1" or r["detail"].startswith("hears ") for r in lldp)
    ecmp = [r for r in report["results"] if r["check"] == "ecmp"]
    assert len(ecmp) == 8
    # 16 uplinks per RTSW (4 CTSWs x 4 links), towards its own zone and across the ATSW layer alike
    assert all("ECMP width [16]" in r["detail"] for r in ecmp)
    pings = {r["subject"]: r["detail"] for r in report["results"] if r["check"] == "ping"}
    assert pings == {"loopback mesh": "56 pairs answered", "loopback-v6 mesh": "56 pairs answered",
                     "host mesh": "56 pairs answered"}
    assert "PFC" in report["not_exercised"]


def report_links(name: str) -> int:
    return len(NetnsBackend(name).plan().links)


def test_lldp_names_a_miscabled_pair():
    """Two RTSW uplinks re-cabled to each other's spine ports (the veth pairs deleted and made again
    crossed): real lldpd on both sides hears it, and the LLDP check names all four ends."""
    from netgen.lab.verify import check_lldp  # noqa: PLC0415

    before = HostSnapshot.take()
    name = lab_name("l")
    code, report = cli_json("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--racks", "2", "--ctsw", "2")
    try:
        assert code == 0, report
        backend = NetnsBackend(name)
        plan = backend.plan()
        assert all(r.ok for r in check_lldp(backend, plan))
        one = next(k for k in plan.links if k.a == "z01-rtsw001" and k.b == "z01-ctsw01")
        two = next(k for k in plan.links if k.a == "z01-rtsw001" and k.b == "z01-ctsw02")
        rtsw, c1, c2 = (backend.namespace(n) for n in ("z01-rtsw001", "z01-ctsw01", "z01-ctsw02"))
        subprocess.run(["ip", "-n", rtsw, "link", "del", one.a_if], check=True)
        subprocess.run(["ip", "-n", rtsw, "link", "del", two.a_if], check=True)
        for a_if, peer_ns, peer_if in ((one.a_if, c2, two.b_if), (two.a_if, c1, one.b_if)):
            subprocess.run(["ip", "link", "add", "name", a_if, "netns", rtsw, "type", "veth", "peer", "name", peer_if,
                            "netns", peer_ns], check=True)
            subprocess.run(["ip", "-n", rtsw, "link", "set", a_if, "up"], check=True)
            subprocess.run(["ip", "-n", peer_ns, "link", "set", peer_if, "up"], check=True)

        def miscabled() -> list:
            return [r for r in check_lldp(backend, plan) if not r.ok]

        deadline = time.monotonic() + 30  # lldpd sends every second; the old neighbours age out
        while len(miscabled()) != 4 and time.monotonic() < deadline:
            time.sleep(1)
        found = {r.subject: r.detail for r in miscabled()}
        assert found == {
            f"z01-rtsw001:{one.a_port}": f"miscabled: hears z01-ctsw02:{two.b_port}, planned z01-ctsw01:{one.b_port}",
            f"z01-rtsw001:{two.a_port}": f"miscabled: hears z01-ctsw01:{one.b_port}, planned z01-ctsw02:{two.b_port}",
            f"z01-ctsw01:{one.b_port}": f"miscabled: hears z01-rtsw001:{two.a_port}, planned z01-rtsw001:{one.a_port}",
            f"z01-ctsw02:{two.b_port}": f"miscabled: hears z01-rtsw001:{one.a_port}, planned z01-rtsw001:{two.a_port}",
        }
    finally:
        code, down = cli_json("lab", "down", "--name", name)
        assert code == 0, down
        assert_nothing_left(before, name)


def test_kernel_fib_has_16_way_ecmp_to_a_remote_zone_host_subnet(small_lab):
    name, _ = small_lab
    backend = NetnsBackend(name)
    # z02-rtsw004's host subnet, seen from z01-rtsw001: reached through all 16 uplinks and the ATSWs
    target = str(backend.plan().nodes["z02-rtsw004"].announces[2])
    out = backend.exec("z01-rtsw001", ["ip", "-j", "route", "show", target]).stdout
    (route,) = json.loads(out)
    devs = sorted(nh["dev"] for nh in route["nexthops"])
    assert devs == sorted(f"Ethernet{448 + 4 * i}" for i in range(16))


def test_reads_without_processes_agree_with_vtysh_and_ip(small_lab):
    """The netns backend reads BGP through the daemons' vty sockets and the FIB over rtnetlink:
    the same as vtysh and `ip -j route` (ExecReads) on every router of the running lab."""
    name, _ = small_lab
    backend = NetnsBackend(name)
    plan = backend.plan()
    widths: set[int] = set()
    for node in plan.routers():
        fib = backend.kernel_routes(node.name, "bgp")
        assert fib == ExecReads.kernel_routes(backend, node.name, "bgp"), node.name
        assert len(fib) > 30, node.name
        widths |= set(fib.values())
        direct = backend.show(node.name, "bgpd", "show bgp summary json")
        through_vtysh = backend.exec(node.name, ["vtysh", "-c", "show bgp summary json"])
        assert direct.ok and through_vtysh.ok
        peers = {family: sorted(data["peers"]) for family, data in json.loads(direct.stdout).items()}
        assert peers == {family: sorted(data["peers"])
                         for family, data in json.loads(through_vtysh.stdout).items()}, node.name
    assert 16 in widths  # the RTSWs' routes across the ATSWs, over all 16 uplinks
    assert backend.show("z01-rtsw001", "bgpd", "show no-such-thing").returncode == 2  # FRR's CMD_ERR_NO_MATCH
    host = next(node.name for node in plan.nodes.values() if node.kind != "router")
    with pytest.raises(LabError, match="no router"):
        backend.show(host, "bgpd", "show version")


def test_sonic_node_runs_its_rendered_files_unchanged_but_for_secrets(small_lab, tmp_path):
    name, _ = small_lab
    out = tmp_path / "r"
    assert run_cli("render", str(SMALL), "-o", str(out)).exit_code == 0
    backend = NetnsBackend(name)
    running = backend.exec("z01-rtsw001", ["cat", "/etc/frr/frr.conf"]).stdout
    rendered = (out / "z01-rtsw001" / "frr.conf").read_text()
    # the BGP session key filled in, as a deploy sends it: the converged lab ran TCP MD5 on every session
    key = (SMALL.parent / "secrets" / "bgp.key").read_text().strip()
    assert " password <netgen-secret/bgp.password>\n" in rendered
    assert running == rendered.replace("<netgen-secret/bgp.password>", key)
    assert backend.exec("z01-rtsw001", ["hostname"]).stdout.strip() == "z01-rtsw001"
    # Every address of INTERFACE / LOOPBACK_INTERFACE / VLAN_INTERFACE is on the kernel interface
    # of the same name (cabled ports only: all 16 uplinks and the one host port are cabled here).
    config_db = json.loads((out / "z01-rtsw001" / "config_db.json").read_text())
    wanted = set()
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        wanted |= {tuple(key.split("|")) for key in config_db[table] if "|" in key}
    have = set()
    for link in json.loads(backend.exec("z01-rtsw001", ["ip", "-j", "addr", "show"]).stdout):
        for addr in link.get("addr_info", []):
            if addr.get("scope") == "global":
                have.add((link["ifname"], f"{addr['local']}/{addr['prefixlen']}"))
    assert {(i, str(ip_interface(p))) for i, p in wanted} == {(i, str(ip_interface(p))) for i, p in have}
    bridge = json.loads(backend.exec("z01-rtsw001", ["ip", "-j", "link", "show", "master", "Vlan1000"]).stdout)
    assert [b["ifname"] for b in bridge] == ["Ethernet0"]  # the VLAN_MEMBER port of the rack's first host


def test_eos_node_runs_an_frr_stand_in_with_linux_safe_port_names(small_lab):
    name, _ = small_lab
    backend = NetnsBackend(name)
    conf = backend.exec("z01-ctsw01", ["cat", "/etc/frr/frr.conf"]).stdout
    assert conf.startswith("! z01-ctsw01: FRR stand-in")
    assert "router bgp 4200000001" in conf
    links = {e["ifname"] for e in json.loads(backend.exec("z01-ctsw01", ["ip", "-j", "link"]).stdout)}
    assert "Ethernet3_1_1" in links and not any("/" in n for n in links)


def test_drain_drill_shrinks_ecmp_and_restores(small_lab):
    name, _ = small_lab
    code, report = cli_json("lab", "verify", "--name", name, "--drill", "--drill-device", "z01-ctsw02")
    drill = [r for r in report["results"] if r["check"] == "drill"]
    assert code == 0, [r for r in report["results"] if not r["ok"]]
    assert [r["subject"].removeprefix("drain z01-ctsw02: ") for r in drill] == [
        "ECMP shrinks", "read back drained", "drained twice adds nothing", "no route leaked", "loopback mesh while out",
        "loopback-v6 mesh while out", "host mesh while out", "every session stays up", "restored",
        "read back undrained", "ECMP widths"]
    assert all(r["ok"] for r in drill)
    # the whole fabric: zone 1's RTSWs lose the drained CTSW's 4 links, zone 2's keep all 16
    assert report["drill"]["ecmp_widths"]["z01-rtsw001"] == [[16], [12], [16]]
    assert report["drill"]["ecmp_widths"]["z02-rtsw001"] == [[16], [16], [16]]


def test_cut_drill_width_during_the_cut(small_lab):
    """Drive the drill's steps by hand to see the widths themselves: 16 -> 12 -> 16 in zone 1,
    zone 2 unaffected."""
    from netgen.lab.verify import _drill_commands, check_ecmp, routing_state, wait_for  # noqa: PLC0415

    name, _ = small_lab
    backend = NetnsBackend(name)
    plan = backend.plan()
    target = plan.nodes["z01-ctsw03"]

    def width_to(source: str, target_rtsw: str) -> int:
        prefix = plan.nodes[target_rtsw].announces[0]
        out = backend.exec(source, ["ip", "-j", "route", "show", prefix]).stdout
        routes = json.loads(out)
        return len(routes[0].get("nexthops", [routes[0]])) if routes else 0

    try:
        for argv in _drill_commands(plan, target, "cut", restore=False):
            assert backend.exec(target.name, argv).ok
        results, _ = wait_for(lambda: check_ecmp(backend, plan, frozenset({target.name})), 30)
        assert all(r.ok for r in results), results
        assert width_to("z01-rtsw002", "z01-rtsw003") == 12
        assert width_to("z02-rtsw001", "z01-rtsw003") == 16
    finally:
        for argv in _drill_commands(plan, target, "cut", restore=True):
            backend.exec(target.name, argv)
    results, _ = wait_for(lambda: routing_state(backend, plan), 60)
    assert all(r.ok for r in results), [r for r in results if not r.ok][:3]
    assert width_to("z01-rtsw002", "z01-rtsw003") == 16


def test_route_policy_stops_a_leaking_rtsw_at_its_ctsw(small_lab):
    """z01-rtsw001 is made to leak: its outbound filter swapped for permit-all. Real FRR on its CTSWs
    (rendered RM-ZONE-01-IN) drops a foreign prefix and zone 2's rack subnet, and still learns that
    subnet from the ATSWs; a rack subnet of its own zone passes the filter, so it counts, and the
    third prefix trips the CTSWs' limit of 2: the leaking rack loses its sessions."""
    from netgen.lab.verify import routing_state, wait_for  # noqa: PLC0415

    name, _ = small_lab
    backend = NetnsBackend(name)
    plan = backend.plan()
    foreign, hijack = "192.0.2.0/24", str(plan.nodes["z02-rtsw001"].announces[2])
    same_zone = str(plan.nodes["z01-rtsw002"].announces[2])
    assert (hijack, same_zone) == ("10.128.32.0/27", "10.128.16.32/27")
    ctsws = [f"z01-ctsw0{i}" for i in range(1, 5)]

    def vtysh(node: str, *commands: str) -> str:
        argv = ["vtysh"]
        for command in commands:
            argv += ["-c", command]
        result = backend.exec(node, argv)
        assert result.ok and "% " not in result.stdout, result
        return result.stdout

    def bgp(*lines: str) -> None:
        vtysh("z01-rtsw001", "configure terminal", f"router bgp {plan.nodes['z01-rtsw001'].asn}",
              "address-family ipv4 unicast", *lines)

    def advertised_to_ctsw() -> set[str]:
        out = vtysh("z01-rtsw001", "show bgp ipv4 unicast neighbors 10.1.16.0 advertised-routes json")
        return set(json.loads(out).get("advertisedRoutes", {}))

    def paths_at_ctsw(prefix: str) -> list[str]:
        out = vtysh("z01-ctsw01", f"show bgp ipv4 unicast {prefix} json")
        return [p["aspath"]["string"] for p in json.loads(out).get("paths", [])]

    def rack1_peer() -> dict:
        return json.loads(vtysh("z01-ctsw01", "show bgp neighbors 10.1.16.1 json"))["10.1.16.1"]

    def wait(condition, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.5)

    assert advertised_to_ctsw() == {"10.0.1.1/32", "10.128.16.0/27"}  # RM-OWN-OUT: only its own
    vtysh("z01-rtsw001", "configure terminal", "route-map LEAK permit 10")
    try:
        bgp("exit-address-family", "no bgp network import-check", "address-family ipv4 unicast",
            f"network {foreign}", f"network {hijack}", "neighbor UPLINK route-map LEAK out")
        wait(lambda: {foreign, hijack} <= advertised_to_ctsw(), "z01-rtsw001 never sent the leak")
        # the hijack, announced with the foreign prefix, has reached z01-ctsw01: so has the foreign one,
        # which its import policy dropped (waited for by what arrived, not for a time)
        wait(lambda: bool(paths_at_ctsw(hijack)), "z01-ctsw01 never received the leaked updates")
        assert paths_at_ctsw(foreign) == []
        hijack_paths = paths_at_ctsw(hijack)
        assert hijack_paths and all(path.split()[0] == "4200000000" for path in hijack_paths), hijack_paths
        assert rack1_peer()["bgpState"] == "Established"  # filtered routes do not count

        bgp(f"network {same_zone}")
        wait(lambda: rack1_peer()["bgpState"] != "Established", "the limit of 2 never tripped")
        peer = rack1_peer()
        assert peer["lastNotificationReason"] == "Cease/Maximum Number of Prefixes Reached", peer
        assert peer["prefixesConfigExceedMax"] is True
    finally:
        bgp("neighbor UPLINK route-map RM-OWN-OUT out", f"no network {foreign}", f"no network {hijack}",
            f"no network {same_zone}", "exit-address-family", "bgp network import-check")
        for ctsw in ctsws:  # a tripped limit holds the session down until an operator clears it
            summary = json.loads(vtysh(ctsw, "show bgp ipv4 unicast summary json"))
            for address, state in summary["peers"].items():
                if state["state"] != "Established":
                    vtysh(ctsw, f"clear bgp {address}")
    results, _ = wait_for(lambda: routing_state(backend, plan), 90)
    assert all(r.ok for r in results), [r for r in results if not r.ok][:3]
    assert advertised_to_ctsw() == {"10.0.1.1/32", "10.128.16.0/27"}


def test_wrong_asn_fails_verify_naming_the_session_and_device(tmp_path):
    """A deliberately broken rendered file: z01-rtsw001 expects the wrong ASN on one uplink."""
    before = HostSnapshot.take()
    out = tmp_path / "r"
    assert run_cli("render", str(SMALL), "-o", str(out)).exit_code == 0
    frr = out / "z01-rtsw001" / "frr.conf"
    text = frr.read_text()
    good = " neighbor 10.1.16.0 remote-as 4200000001\n"
    assert good in text
    frr.write_text(text.replace(good, " neighbor 10.1.16.0 remote-as 4200000099\n"))
    name = lab_name("neg")
    try:
        code, up = cli_json("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--racks", "1", "--ctsw", "1",
                            "--configs", str(out), "--accept-edited-configs", "--timeout", "12")
        assert code == 1 and up["converged"] is False
        code, report = cli_json("lab", "verify", "--name", name)
        assert code == 1 and report["ok"] is False
        failed = [r for r in report["results"] if not r["ok"]]
        sessions = [r for r in failed if r["check"] == "bgp-session"]
        assert [r["subject"] for r in sessions] == ["z01-rtsw001 10.1.16.1 <-> z01-ctsw01 10.1.16.0 (ipv4)"]
        assert sessions[0]["node"] == "z01-rtsw001"
        assert ("z01-rtsw001 is configured with remote-as 4200000099 for z01-ctsw01 10.1.16.0, but z01-ctsw01's"
                " ASN is 4200000001") in sessions[0]["detail"]
        text = run_cli("lab", "verify", "--name", name).output
        assert "FAIL bgp-session z01-rtsw001" in text
    finally:
        assert cli_json("lab", "down", "--name", name)[0] == 0
    assert_nothing_left(before, name)


def test_two_labs_coexist_and_go_down_independently():
    before = HostSnapshot.take()
    first, second = lab_name("a"), lab_name("b")
    args = [str(SMALL), "--zone", "2", "--racks", "2", "--ctsw", "1"]
    try:
        assert cli_json("lab", "up", *args, "--name", first)[0] == 0
        assert cli_json("lab", "up", *args, "--name", second)[0] == 0
        listed = {entry["lab"] for entry in cli_json("lab", "list")[1]["labs"]}
        assert {first, second} <= listed
        assert cli_json("lab", "down", "--name", first)[0] == 0
        assert_nothing_left(before, first)
        code, report = cli_json("lab", "verify", "--name", second)
        assert code == 0 and report["sessions_established"] == 16  # 2 RTSW x 4 links x 2 AFIs
    finally:
        for name in (first, second):
            run_cli("lab", "down", "--name", name)
    assert_nothing_left(before, second)


def test_same_name_twice_is_refused_and_the_first_lab_survives():
    before = HostSnapshot.take()
    name = lab_name("dup")
    args = [str(SMALL), "--zone", "1", "--racks", "1", "--ctsw", "1", "--name", name]
    try:
        assert cli_json("lab", "up", *args)[0] == 0
        code, report = cli_json("lab", "up", *args)
        assert code == 2 and "already up" in report["error"]
        assert cli_json("lab", "verify", "--name", name)[0] == 0
    finally:
        run_cli("lab", "down", "--name", name)
    assert_nothing_left(before, name)


def test_down_cleans_up_after_a_crash_mid_build():
    """SIGKILL `netgen lab up` once routers are running: the state file still names everything."""
    before = HostSnapshot.take()
    name = lab_name("crash")
    state = Path(os.environ["NETGEN_LAB_ROOT"]) / name / "state.json"
    proc = subprocess.Popen([sys.executable, "-m", "netgen.cli", "lab", "up", str(SMALL), "--name", name],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if len(json.loads(state.read_text())["pids"]) >= 2:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        else:
            pytest.fail("the lab never started routers")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert any(n.startswith(f"{name}-") for n in HostSnapshot.take().namespaces)
    code, report = cli_json("lab", "down", "--name", name)
    assert code == 0 and report["namespaces_removed"] == 26 and report["processes_stopped"] >= 6
    assert_nothing_left(before, name)


def test_failed_build_removes_what_it_made(monkeypatch):
    before = HostSnapshot.take()
    name = lab_name("fail")
    real = NetnsBackend._start_router
    calls = []

    def flaky(self, node, *args):
        calls.append(node.name)
        if len(calls) == 3:
            from netgen.lab.backend import LabError  # noqa: PLC0415
            raise LabError(f"{node.name}: injected failure")
        return real(self, node, *args)

    monkeypatch.setattr(NetnsBackend, "_start_router", flaky)
    code, report = cli_json("lab", "up", str(SMALL), "--name", name, "--zone", "1")
    assert code == 2 and "injected failure" in report["error"] and "nothing of lab" in report["error"]
    assert_nothing_left(before, name)


def test_unknown_lab_is_a_clear_usage_error():
    for command in ("verify", "down"):
        code, report = cli_json("lab", command, "--name", "nosuchlab")
        assert code == 2 and "no lab named 'nosuchlab'" in report["error"]
    code, report = cli_json("lab", "verify", "--name", "Bad-Name")
    assert code == 2 and "lowercase" in report["error"]
