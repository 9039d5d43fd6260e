"""The EOS emulator driven the way the deploy pipeline will drive a switch: real netmiko `arista_eos` over SSH
(host key checked against the fleet's known_hosts), and Nornir's threaded runner with nornir_netmiko tasks.

What these prove: netgen's reviewed EOS configs are accepted line by line and come back identical from
`show running-config`; config sessions, commit timers and aborts behave as EOS documents; realistic mistakes are
rejected with EOS's messages and leave the candidate untouched; every injected fault does what it says."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncssh
import pytest
import yaml
from netmiko import BaseConnection, ConfigInvalidException, ConnectHandler, NetmikoAuthenticationException
from nornir import InitNornir
from nornir.core.task import Result, Task
from nornir_netmiko.tasks import netmiko_send_command, netmiko_send_config

from tests.deploy.eos_site import masked_keys
from tests.support.eos_emulator import EosDeviceSpec, EosFleet

pytestmark = pytest.mark.deploy

GOLDEN = Path(__file__).resolve().parent.parent / "platforms" / "golden" / "eos"
ERRORS = r"% Invalid|% Incomplete"
JERICHO, TOMAHAWK = "DCS-7804R3A", "DCS-7060X6-64PE"
BASE = """\
hostname leaf1
!
interface Ethernet1/1
   description uplink
   no switchport
   ip address 10.0.0.0/31
!
interface Loopback0
   ip address 10.255.0.1/32
!
ip routing
!
router bgp 65001
   router-id 10.255.0.1
   neighbor 10.0.0.1 remote-as 65000
!
end
"""


def golden(name: str) -> str:
    return (GOLDEN / name / f"{name}.cfg").read_text()


def body(config: str) -> list[str]:
    """A config without its comment header (`! Command:` / `! device:` from EOS, `! <host>: rendered` from netgen)."""
    lines = config.splitlines()
    while lines and lines[0].startswith("! "):
        lines.pop(0)
    return keys_masked(lines)


def keys_masked(lines: list[str]) -> list[str]:
    """Reversible secrets as `<key>`: sent in clear, shown encrypted or localized (eos_site.masked_keys)."""
    return [masked_keys(line) for line in lines]


def connect(fleet: EosFleet, name: str, **extra: object) -> BaseConnection:
    """Log in as the deploy pipeline will: strict host-key check against the fleet's known_hosts, then enable."""
    host, port = fleet.endpoint(name)
    conn = ConnectHandler(device_type="arista_eos", host=host, port=port, username=fleet.username,
                          password=fleet.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(fleet.known_hosts_path), fast_cli=True, **extra)
    conn.enable()
    return conn


def paste(conn: BaseConnection, lines: list[str]) -> str:
    """Send many config lines at once, as a paste (line-by-line netmiko costs ~11 ms a line), and read until the
    prompt after a final marker comment. Returns everything the switch printed."""
    marker = "! end-of-paste"
    conn.write_channel("\n".join([*lines, marker]) + "\n")
    return conn.read_until_pattern(pattern=re.escape(marker) + r"\r?\n[^\n]*\)#", read_timeout=30)


def show_json(conn: BaseConnection, command: str) -> Any:
    return json.loads(conn.send_command(f"{command} | json"))


def wait_for(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll instead of sleeping blindly: True as soon as the predicate holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def fleet() -> Iterator[EosFleet]:
    specs = {"leaf1": EosDeviceSpec("leaf1", model=TOMAHAWK, config=BASE),
             "z01-ctsw01": EosDeviceSpec("z01-ctsw01", model=JERICHO, version="4.33.2F"),
             "z02-rtsw001": EosDeviceSpec("z02-rtsw001", model=TOMAHAWK),
             "rtsw-live": EosDeviceSpec("z02-rtsw001", model=TOMAHAWK, config=golden("z02-rtsw001"))}
    with EosFleet.start(specs) as running:
        yield running


def test_login_enable_and_identity(fleet: EosFleet, capfd: pytest.CaptureFixture[str]) -> None:
    host, port = fleet.endpoint("leaf1")
    socket.create_connection((host, port), timeout=5).close()  # a bare TCP probe, like a reachability check
    conn = ConnectHandler(device_type="arista_eos", host=host, port=port, username="admin", password="admin",
                          ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(fleet.known_hosts_path))
    assert conn.find_prompt() == "leaf1>"
    assert "privileged mode required" in conn.send_command("show running-config")
    conn.enable()
    assert conn.find_prompt() == "leaf1#"
    version = show_json(conn, "show version")
    assert version["modelName"] == TOMAHAWK and version["version"] == "4.34.2F"
    assert re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", str(version["systemMacAddress"]))
    assert version["serialNumber"]
    assert show_json(conn, "show hostname") == {"hostname": "leaf1", "fqdn": "leaf1"}
    assert "Software image version: 4.34.2F" in conn.send_command("sh ver")  # keywords abbreviate as on EOS
    assert "% This is an unconverted command" in conn.send_command("show running-config | json")
    conn.disconnect()
    assert "Traceback" not in capfd.readouterr().err


def test_wrong_password_is_refused(fleet: EosFleet) -> None:
    host, port = fleet.endpoint("leaf1")
    with pytest.raises(NetmikoAuthenticationException):
        ConnectHandler(device_type="arista_eos", host=host, port=port, username="admin", password="wrong",
                       conn_timeout=5, auth_timeout=5)


def test_public_key_login_and_enable_secret(tmp_path: Path) -> None:
    key = asyncssh.generate_private_key("ssh-ed25519")
    key_file = tmp_path / "id_ed25519"
    key_file.write_bytes(key.export_private_key())
    public = key.export_public_key().decode()
    with EosFleet.start({"sw": EosDeviceSpec("sw")}, authorized_keys=[public], enable_secret="s3cret") as keyed:
        host, port = keyed.endpoint("sw")
        conn = ConnectHandler(device_type="arista_eos", host=host, port=port, username="admin", use_keys=True,
                              key_file=str(key_file), allow_agent=False, secret="s3cret")
        conn.enable()
        assert conn.find_prompt() == "sw#"
        conn.disconnect()


def _custom_lines(config: str) -> set[str]:
    """The lines of the rendered file's custom_config blocks (after a marker, up to the next `!`)."""
    found: set[str] = set()
    inside = False
    for line in config.splitlines():
        if line.startswith("! custom_config "):
            inside = True
        elif line == "!":
            inside = False
        elif inside:
            found.add(line)
    return found


def _without(lines: list[str], drop: set[str]) -> list[str]:
    """`lines` without `drop`, runs of `!` separators left by them collapsed to one."""
    kept: list[str] = []
    for line in lines:
        if line not in drop and not (line == "!" and kept and kept[-1] == "!"):
            kept.append(line)
    return kept


@pytest.mark.parametrize("name", ["z01-ctsw01", "z02-rtsw001"])
def test_golden_config_round_trips_through_a_session(fleet: EosFleet, name: str) -> None:
    """The replace-style push the deploy pipeline will do: clean candidate, whole config, diff, commit."""
    # EOS keeps no comment lines: the `! custom_config NAME` markers of the rendered file are not read back
    config = "".join(line for line in golden(name).splitlines(True) if not line.startswith("! custom_config "))
    lines = [line for line in config.splitlines() if line != "end"]
    custom = _custom_lines(golden(name))
    conn = connect(fleet, name)
    conn.config_mode("configure session ng1")
    conn.send_command("rollback clean-config", expect_string=r"\)#")
    assert "% " not in paste(conn, lines)
    diff = conn.send_command("show session-config diffs", expect_string=r"\)#")
    assert diff.startswith("--- system:/running-config\n+++ session:/ng1-session-config")
    assert "+router bgp" in diff and "+   service-profile BACKEND-ROCE" in diff
    conn.send_command("commit", expect_string=r"#")
    assert fleet.device(name).pending_sessions == {}
    # identical but the header; custom_config lines are where and how EOS prints them, so compared as a set
    running = fleet.device(name).running_config().splitlines()[2:]
    assert keys_masked(_without(running, custom)) == keys_masked(_without(config.splitlines()[1:], custom))
    assert any(line.startswith("tacacs-server host ") and " key 7 " in line for line in running)
    assert custom and custom <= set(running)
    assert _without(body(conn.send_command("show running-config")), custom) == _without(body(config), custom)
    # The same config again: nothing to change, so the diff is empty
    conn.config_mode("configure session ng2")
    conn.send_command("rollback clean-config", expect_string=r"\)#")
    paste(conn, lines)
    assert conn.send_command("show session-config diffs", expect_string=r"\)#").strip() == ""
    conn.send_command("abort", expect_string=r"#")
    assert [event.kind for event in fleet.device(name).history] == ["commit", "abort"]
    conn.disconnect()


def test_commit_timer_reverts_unless_confirmed(fleet: EosFleet) -> None:
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    before = device.running_config()
    conn.send_config_set(["interface Ethernet1/1", "description changed"], config_mode_command="configure session t1",
                         exit_config_mode=False, error_pattern=ERRORS)
    conn.send_command("commit timer 00:00:02", expect_string=r"#")
    assert "description changed" in device.running_config()
    assert show_json(conn, "show configuration sessions detail")["sessions"]["t1"]["state"] == "pendingCommitTimer"
    assert wait_for(lambda: device.running_config() == before, timeout=6)
    assert [(e.kind, e.detail) for e in device.history] == [("commit-timer", "2 s"),
                                                            ("rollback", "commit timer expired")]
    assert device.pending_sessions == {}

    conn.send_config_set(["interface Ethernet1/1", "description kept"], config_mode_command="configure session t2",
                         exit_config_mode=False, error_pattern=ERRORS)
    conn.send_command("commit timer 00:00:01", expect_string=r"#")
    committed = time.monotonic()
    conn.send_command("configure session t2 commit")  # the confirmation, from exec mode
    time.sleep(max(0.0, committed + 1.3 - time.monotonic()))  # until just past the timer, which must not fire
    assert "description kept" in device.running_config()
    assert [e.kind for e in device.history][-2:] == ["commit-timer", "confirm"]
    conn.disconnect()


def test_abort_discards_and_exec_abort_rolls_back_a_timed_commit(fleet: EosFleet) -> None:
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    before = device.running_config()
    conn.send_config_set(["hostname other"], config_mode_command="configure session a1", exit_config_mode=False)
    assert device.pending_sessions == {"a1": "pending"}
    conn.send_command("abort", expect_string=r"#")
    assert device.running_config() == before and device.pending_sessions == {}

    conn.send_config_set(["no router bgp 65001"], config_mode_command="configure session a2", exit_config_mode=False)
    conn.send_command("commit timer 01:00:00", expect_string=r"#")
    assert "router bgp" not in device.running_config()
    assert device.pending_sessions == {"a2": "pendingCommitTimer"}
    conn.send_command("configure session a2 abort")
    assert device.running_config() == before
    assert [e.kind for e in device.history] == ["abort", "commit-timer", "rollback"]
    conn.disconnect()


INVALID = [  # (lines that set up the mode, the mistake, what EOS says)
    ([], "hostnme leaf9", "% Invalid input (at token 0: 'hostnme')"),  # typo
    (["vlan 1000"], "ip address 10.0.0.1/31", "% Invalid input (at token 1: 'address')"),  # wrong mode
    (["interface Ethernet1/1"], "ip address 10.0.0.1/33", "% Invalid input (at token 2: '10.0.0.1/33')"),
    ([], "router bgp abc", "% Invalid input (at token 2: 'abc')"),  # bad ASN
    ([], "router bgp 4294967296", "% Invalid input (at token 2: '4294967296')"),  # ASN out of range
    ([], "router bgp 65099", "% BGP is already running with AS number 65001"),  # a second BGP instance
    (["interface Ethernet1/1"], "speed 999g", "% Invalid input (at token 1: '999g')"),
    (["interface Ethernet1/1"], "mtu", "% Incomplete command (at token 0: 'mtu')"),  # missing argument
    (["interface Ethernet1/1"], "mtu 99999", "% Invalid input (at token 1: '99999')"),
    (["router bgp 65001"], "neighbor 10.0.0.1 remote-ass 65000", "% Invalid input (at token 2: 'remote-ass')"),
    (["interface Loopback0"], "switchport access vlan 10", "% Invalid input (at token 0: 'switchport')"),
    (["qos profile P"], "tx-queue 3", "% Invalid input (at token 0: 'tx-queue')"),  # Jericho keyword on Tomahawk
    (["qos profile P", "uc-tx-queue 3"],
     "random-detect ecn minimum-threshold 150 kilobytes maximum-threshold 1500 kbytes",
     "% Invalid input (at token 4: 'kilobytes')"),  # unknown keyword
    (["interface Ethernet1/1"], "priority-flow-control priority 8 no-drop", "% Invalid input (at token 2: '8')"),
    ([], "priority-flow-control pause watchdog default timeout 0.105",
     "% Invalid input (at token 5: '0.105')"),  # more decimals than EOS takes
    (["router bgp 65001", "address-family ipv4"], "network fd00::1/128", "% Invalid input (at token 1: 'fd00::1/128')"),
    ([], "interface Ethernet0/1", "% Invalid input (at token 1: 'Ethernet0/1')"),
    (["interface Ethernet1/1"], "s 400g-8", "% Ambiguous command (at token 0: 's')"),
    ([], "commit timer 1:2", "% Invalid input (at token 2: '1:2')"),
    (["ip prefix-list PL"], "seq 10 permit 10.0.0.0/20 eq 33", "% Invalid input (at token 5: '33')"),
    (["ipv6 prefix-list PL6"], "seq 10 permit 10.0.0.0/20", "% Invalid input (at token 3: '10.0.0.0/20')"),
    ([], "route-map RM permit 70000", "% Invalid input (at token 3: '70000')"),
    (["router bgp 65001", "address-family ipv4"], "neighbor 10.0.0.1 route-map RM both",
     "% Invalid input (at token 4: 'both')"),
]


def test_invalid_lines_are_rejected_and_leave_the_candidate_unchanged(fleet: EosFleet) -> None:
    conn, running = connect(fleet, "leaf1"), fleet.device("leaf1").running_config()
    conn.config_mode("configure session typo")
    for setup, mistake, message in INVALID:
        conn.send_config_set(setup, enter_config_mode=False, exit_config_mode=False, error_pattern=ERRORS)
        before = conn.send_command("show session-config", expect_string=r"\)#")
        with pytest.raises(ConfigInvalidException) as raised:
            conn.send_config_set([mistake], enter_config_mode=False, exit_config_mode=False,
                                 error_pattern=r"% (Invalid|Incomplete|Ambiguous|BGP) .*")
        output = conn.send_command("show session-config", expect_string=r"\)#")
        assert output == before, mistake
        assert message in str(raised.value), mistake
        echoed = conn.send_command(mistake, expect_string=r"\)#")  # the full message, as the switch prints it
        assert echoed.strip() == message, mistake
    conn.send_command("abort", expect_string=r"#")
    assert fleet.device("leaf1").running_config() == running
    conn.disconnect()


def test_edits_follow_eos_semantics(fleet: EosFleet) -> None:
    """`no` removes or stores EOS's displayed negatives, `default` resets, re-entering a block adds to it."""
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    conn.send_config_set(["int et1/1", "switchport", "shutdown", "no description", "int Ethernet 1/1", "mtu 9100",
                          "router bgp 65001", "no neighbor 10.0.0.1", "default router-id", "no ip routing",
                          "no interface Loopback0"], error_pattern=ERRORS)
    config = device.running_config()
    assert "interface Ethernet1/1\n   ip address 10.0.0.0/31\n   shutdown\n   mtu 9100\n!" in config
    assert "router bgp 65001\n!" in config and "neighbor" not in config
    assert "\nno ip routing\n" in config and "Loopback0" not in config
    conn.disconnect()


def test_an_initial_config_eos_would_reject_fails_the_start() -> None:
    with pytest.raises(ValueError, match=r"line 2 'ip address 10.0.0.1/40': % Invalid input \(at token 2"):
        EosFleet.start({"bad": EosDeviceSpec("bad", config="interface Ethernet1\n   ip address 10.0.0.1/40\n")})


def test_connection_dropped_before_commit_keeps_the_old_config(fleet: EosFleet) -> None:
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    before = device.running_config()
    device.set_fault(drop_before_commit=True)
    conn.send_config_set(["hostname leaf9"], config_mode_command="configure session d1", exit_config_mode=False)
    conn.write_channel("commit\n")
    assert wait_for(lambda: not conn.is_alive(), timeout=5)
    assert device.running_config() == before
    assert device.pending_sessions == {"d1": "pending"}  # an uncommitted session survives the drop, as on EOS
    assert [(e.kind, e.detail) for e in device.history] == [("drop", "before commit")]


def test_connection_dropped_after_commit_keeps_the_new_config(fleet: EosFleet) -> None:
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    device.set_fault(drop_after_commit=True)
    conn.send_config_set(["hostname leaf9"], config_mode_command="configure session d2", exit_config_mode=False)
    conn.write_channel("commit\n")
    assert wait_for(lambda: not conn.is_alive(), timeout=5)
    assert "\nhostname leaf9\n" in device.running_config()
    assert [e.kind for e in device.history] == ["commit", "drop"]


def test_command_error_and_slow_faults(fleet: EosFleet) -> None:
    device, conn = fleet.device("leaf1"), connect(fleet, "leaf1")
    device.set_fault(command_error=r"^description ")
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(["interface Ethernet1/1", "description valid but refused"], error_pattern=ERRORS)
    conn.exit_config_mode()
    assert "refused" not in device.running_config()
    device.set_fault(command_error=None, slow=0.3)
    started = time.monotonic()
    conn.send_command("show hostname")
    assert time.monotonic() - started >= 0.3
    device.clear_faults()
    conn.disconnect()


def test_show_commands_for_pre_and_post_checks(fleet: EosFleet) -> None:
    """JSON derived from the running config (netgen's RTSW golden), and what faults change in it."""
    device, conn = fleet.device("rtsw-live"), connect(fleet, "rtsw-live")
    vrf = show_json(conn, "show ip bgp summary")["vrfs"]["default"]
    assert vrf["asn"] == "4201020001" and vrf["routerId"] == "10.0.2.1"
    assert len(vrf["peers"]) == 16 and {p["peerState"] for p in vrf["peers"].values()} == {"Established"}
    assert vrf["peers"]["10.1.32.0"]["asn"] == "4200000002"
    v6 = show_json(conn, "show ipv6 bgp summary")["vrfs"]["default"]["peers"]
    assert "fd00:0:1:2000::" in v6 and len(v6) == 16

    routes = show_json(conn, "show ip route")["vrfs"]["default"]["routes"]
    assert routes["10.1.32.0/31"]["vias"] == [{"interface": "Ethernet57/1"}]
    assert routes["10.0.2.1/32"]["routeType"] == "connected" and "10.128.32.0/27" in routes

    pfc = show_json(conn, "show priority-flow-control status")["interfaceStatuses"]
    assert pfc["Ethernet57/1"] == {"enabled": True, "priorities": [3], "active": True, "watchdogEnabled": True,
                                   "dcbxMode": "disabled"}
    assert pfc["Ethernet9/1"]["enabled"] is False  # a spare port: no service-profile
    assert show_json(conn, "show priority-flow-control counters watchdog") == {"interfaces": {}}
    status = show_json(conn, "show interfaces status")["interfaceStatuses"]
    assert status["Ethernet9/1"]["linkStatus"] == "disabled" and status["Ethernet57/1"]["linkStatus"] == "connected"
    assert status["Ethernet1/1"]["vlanInformation"] == {"interfaceMode": "bridged", "interfaceForwardingModel":
                                                        "bridged", "vlanId": 1000}
    errors = show_json(conn, "show interfaces counters errors")["interfaceErrorCounters"]
    assert set(errors["Ethernet57/1"].values()) == {0}

    device.set_fault(bgp_down=["10.1.32.0"], pfc_storm={"Ethernet1/1": 3}, interface_errors={"Ethernet57/1": 7})
    vrf = show_json(conn, "show ip bgp summary")["vrfs"]["default"]
    assert vrf["peers"]["10.1.32.0"]["peerState"] == "Active"
    assert vrf["peers"]["10.1.32.2"]["peerState"] == "Established"
    storm = show_json(conn, "show priority-flow-control counters watchdog")["interfaces"]
    assert storm == {"Ethernet1/1": {"txQueues": {"3": {"stuckCount": 1, "recoveryCount": 0}}}}
    errors = show_json(conn, "show interfaces counters errors")["interfaceErrorCounters"]
    assert errors["Ethernet57/1"]["fcsErrors"] == 7
    conn.disconnect()
    bare = connect(fleet, "z01-ctsw01")  # no BGP configured yet
    assert bare.send_command("show ip bgp summary").strip() == "% BGP inactive"
    assert show_json(bare, "show ip route")["vrfs"]["default"] == {
        "routingDisabled": True, "allRoutesProgrammedHardware": True, "allRoutesProgrammedKernel": True,
        "defaultRouteState": "notSet", "routes": {}}
    bare.disconnect()


def _session_push(task: Task, lines: list[str], spans: dict[str, float]) -> Result:
    """A Nornir task as the deploy pipeline will write it: session, diff, commit. Records how long it took."""
    started = time.monotonic()
    try:
        task.run(netmiko_send_config, config_commands=lines, config_mode_command="configure session nornir",
                 exit_config_mode=False, error_pattern=ERRORS)
        diff = task.run(netmiko_send_command, command_string="show session-config diffs", expect_string=r"\)#")
        task.run(netmiko_send_command, command_string="commit", expect_string=r"#")
    finally:
        spans[task.host.name] = time.monotonic() - started
    return Result(host=task.host, result=diff.result, changed=bool(diff.result.strip()))


def test_two_devices_concurrently_through_nornir(tmp_path: Path) -> None:
    specs = {name: EosDeviceSpec(name, config=BASE.replace("leaf1", name)) for name in ("leaf1", "leaf2", "leaf3")}
    with EosFleet.start(specs) as nfleet:
        hosts = {}
        for name in specs:
            host, port = nfleet.endpoint(name)
            hosts[name] = {"hostname": host, "port": port, "username": nfleet.username, "password": nfleet.password,
                           "platform": "arista_eos", "connection_options": {"netmiko": {"extras": {
                               "ssh_strict": True, "system_host_keys": False, "alt_host_keys": True,
                               "alt_key_file": str(nfleet.known_hosts_path)}}}}
        (tmp_path / "hosts.yaml").write_text(yaml.safe_dump(hosts))
        (tmp_path / "groups.yaml").write_text("{}\n")
        (tmp_path / "defaults.yaml").write_text("{}\n")
        nornir = InitNornir(runner={"plugin": "threaded", "options": {"num_workers": 3}},
                            inventory={"plugin": "SimpleInventory", "options": {
                                "host_file": str(tmp_path / "hosts.yaml"), "group_file": str(tmp_path / "groups.yaml"),
                                "defaults_file": str(tmp_path / "defaults.yaml")}},
                            logging={"enabled": False})
        for name in specs:
            nfleet.device(name).set_fault(slow=0.1)  # every reply takes 0.1 s, so overlap is measurable
        nfleet.device("leaf3").set_fault(command_error="description")  # one device refuses a line
        lines = ["interface Ethernet1/1", "description pushed-by-nornir", "mtu 9100"]
        spans: dict[str, float] = {}
        started = time.monotonic()
        results = nornir.run(task=_session_push, lines=lines, spans=spans)
        elapsed = time.monotonic() - started
        nornir.close_connections()
        assert set(results.failed_hosts) == {"leaf3"}
        assert isinstance(results["leaf3"][1].exception, ConfigInvalidException)
        for name in ("leaf1", "leaf2"):
            assert "+   description pushed-by-nornir" in results[name][0].result
            assert "   description pushed-by-nornir\n   no switchport" in nfleet.device(name).running_config()
        assert "pushed-by-nornir" not in nfleet.device("leaf3").running_config()
        assert nfleet.device("leaf3").pending_sessions == {"nornir": "pending"}  # left for the pipeline to abort
        assert elapsed < 0.7 * sum(spans.values()), (elapsed, spans)  # the three ran side by side, not in turn
