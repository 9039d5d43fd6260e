"""`netgen deploy` end to end against the EOS emulator (tests/support/eos_emulator.py): real Nornir,
netmiko `arista_eos`, SSH with host keys checked, config sessions with commit timers.

Device state is read from the emulator itself, never from netgen's report, so a report that says
"rolled back" while the switch kept the change would fail these tests."""

from __future__ import annotations

import json
import time
from ipaddress import IPv4Address

import pytest

from tests.conftest import META, run_cli, topology_of
from tests.deploy.eos_site import LOADED_COMMAND_TIMEOUT_S, OWNED, PASSWORD, body, make_site

pytestmark = pytest.mark.deploy


def test_dry_run_changes_nothing(fresh):
    before = {n: fresh.running(n) for n in fresh.names}
    code, report = fresh.deploy("--dry-run")
    assert code == 0 and report["counts"] == {"dry_run": 14}, json.dumps(report)[:1500]
    assert all(d["changes"] > 100 for d in report["devices"].values())  # a whole config to add
    assert {n: fresh.running(n) for n in fresh.names} == before
    assert all(fresh.commits(n) == [] and fresh.fleet.device(n).pending_sessions == {} for n in fresh.names)


def test_deploy_converges_and_keeps_management_then_second_run_is_unchanged(fresh):
    code, report = fresh.deploy()
    assert code == 0, report.get("stopped_reason") or report.get("error")
    assert report["counts"] == {"changed": 14}
    for name in fresh.names:
        running = fresh.running(name)
        owned = set(body(OWNED))
        assert [line for line in body(running) if line not in owned] == body(fresh.rendered[name])
        # device-owned blocks survive the replace-style session; the secret never reaches the report
        assert "management ssh" in running and "secret sha512" in running
        assert fresh.commits(name) == ["commit-timer"]
        assert [e.kind for e in fresh.fleet.device(name).history][-2:] == ["confirm", "write"]
    assert "notarealhash" not in json.dumps(report)
    code, again = fresh.deploy()
    assert code == 0 and again["counts"] == {"unchanged": 14}
    assert all(fresh.commits(n) == ["commit-timer"] for n in fresh.names)  # no second commit anywhere


def test_canary_post_check_failure_stops_the_rollout_before_anything_else(converged):
    converged.change_weights()
    canary = "z02-rtsw001"  # the first EOS RTSW is the canary
    uplink = next(p for p in topology_of(converged.fabric).ports[canary] if p.ipv4 is not None)
    peer = str(IPv4Address(int(uplink.ipv4.ip) ^ 1))  # the CTSW end of its first uplink
    converged.fleet.device(canary).set_fault(bgp_down_after_commit=[peer])
    before = {n: converged.running(n) for n in converged.names}
    code, report = converged.deploy("--post-check-timeout", "2")
    assert code == 1 and report["stopped"] and "a canary failed" in report["stopped_reason"]
    assert report["devices"][canary]["status"] == "rolled_back"
    assert "bgp-established" in report["devices"][canary]["error"]
    assert report["counts"] == {"rolled_back": 1, "not_touched": 13}
    assert {n: converged.running(n) for n in converged.names} == before  # canary back, nobody else touched
    assert all(converged.commits(n) == [] for n in converged.names if n != canary)


@pytest.mark.parametrize(("fault", "status", "ends_on"), [
    ({"drop_before_commit": True}, "rolled_back", "old"),
    ({"drop_after_commit": True}, "rolled_back", "old"),
    ({"command_error": r"bandwidth percent 60"}, "failed", "old"),
    ({"slow": 0.005}, "changed", "new"),
])
def test_fault_leaves_the_old_or_the_new_config(converged, fault, status, ends_on):
    converged.change_weights()
    victim = "z01-ctsw02"
    converged.names = ["z01-ctsw01", victim, "z02-ctsw01"]  # canary ctsw, then the victim's batch
    old = converged.running(victim)
    converged.fleet.device(victim).set_fault(**fault)
    code, report = converged.deploy()
    outcome = report["devices"][victim]
    assert outcome["status"] == status, outcome["error"]
    running = converged.running(victim)
    if ends_on == "old":
        assert running == old
        assert code == 1 and report["stopped"]
    else:
        assert running != old and "bandwidth percent 60" in running and code == 0
    assert converged.fleet.device(victim).pending_sessions == {}  # nothing left half-done


def test_twenty_switches_never_two_spines_of_a_zone_in_the_commit_window(tmp_path, monkeypatch):
    """meta-24k: 16 CTSWs (2 per zone) and 4 ATSWs, 20 workers, one CTSW per zone per batch."""
    topology = topology_of(META)
    names = [n for n, d in topology.devices.items() if d.role.value == "ctsw" and d.number <= 2]
    names += ["atsw01", "atsw02", "atsw03", "atsw04"]
    # keep the generator: it owns the fleet; nothing is dropped, so answers may take what a loaded machine needs
    sites = make_site(tmp_path, META, names, False, monkeypatch, command_timeout_s=LOADED_COMMAND_TIMEOUT_S)
    site = next(sites)
    try:
        started = time.monotonic()
        code, report = site.deploy()
        errors = {name: outcome.get("error") for name, outcome in report.get("devices", {}).items()
                  if outcome.get("error")}
        assert code == 0, (report.get("stopped_reason") or report.get("error"), errors)
        assert report["counts"] == {"changed": 20}
        windows: dict[int, list[tuple[float, float]]] = {}
        for outcome in report["devices"].values():
            if outcome["role"] == "ctsw":
                windows.setdefault(outcome["zone"], []).append((outcome["commit_started"], outcome["commit_ended"]))
        assert len(windows) == 8 and all(len(spans) == 2 for spans in windows.values())
        for (_, a_end), (b_start, _) in (sorted(spans) for spans in windows.values()):
            assert a_end <= b_start, "two CTSWs of one zone were in the commit window at once"
        print(f"\n20 EOS switches deployed in {time.monotonic() - started:.1f} s with 20 workers")
    finally:
        sites.close()


def test_check_is_read_only_and_reports_a_down_session(converged):
    before = {n: converged.running(n) for n in converged.names}
    result = run_cli("check", str(converged.fabric), "--limit", "z01-ctsw01,z02-rtsw001", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["failed"] == 0, report
    assert {r["check"] for r in report["results"]} == {"drain", "bgp-established", "pfc-enabled", "no-pfc-storm",
                                                       "interface-errors", "no-diff", "lldp-neighbors"}
    converged.fleet.device("z01-ctsw01").set_fault(bgp_down=["10.1.16.1"])
    result = run_cli("check", str(converged.fabric), "--limit", "z01-ctsw01", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    failed = [r for r in report["results"] if r["outcome"] != "pass"]
    assert [(r["device"], r["check"]) for r in failed] == [("z01-ctsw01", "bgp-established")]
    assert "10.1.16.1 Active" in failed[0]["detail"]
    assert {n: converged.running(n) for n in converged.names} == before
    assert all(converged.commits(n) == [] for n in converged.names)


def _swap_two_uplinks(site, rtsw: str) -> tuple[str, str, str, str]:
    """Swap the cables of two RTSW uplinks to different CTSWs where they enter the RTSW: each CTSW's
    port now reaches the other uplink. Returns (rtsw port a, ctsw a, rtsw port b, ctsw b) as planned."""
    uplinks = [p for p in topology_of(site.fabric).ports[rtsw] if p.peer_device.startswith(rtsw[:4] + "ctsw")]
    a = uplinks[0]
    b = next(p for p in uplinks if p.peer_device != a.peer_device)  # two different CTSWs
    device = site.fleet.device(rtsw)
    device.recable(a.name, b.peer_device, b.peer_port)
    device.recable(b.name, a.peer_device, a.peer_port)
    site.fleet.device(a.peer_device).recable(a.peer_port, rtsw, b.name)
    site.fleet.device(b.peer_device).recable(b.peer_port, rtsw, a.name)
    return a.name, a.peer_device, b.name, b.peer_device


def test_check_names_both_ends_of_a_miscabled_pair(converged):
    port_a, ctsw_a, port_b, ctsw_b = _swap_two_uplinks(converged, "z02-rtsw001")
    result = run_cli("check", str(converged.fabric), "--limit", f"z02-rtsw001,{ctsw_a},{ctsw_b}", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    failed = {r["device"]: r["detail"] for r in report["results"] if r["outcome"] != "pass"}
    assert set(failed) == {"z02-rtsw001", ctsw_a, ctsw_b}
    assert f"{port_a} miscabled: hears {ctsw_b} " in failed["z02-rtsw001"]
    assert f"{port_b} miscabled: hears {ctsw_a} " in failed["z02-rtsw001"]
    assert f"miscabled: hears z02-rtsw001 {port_b}, planned z02-rtsw001 {port_a}" in failed[ctsw_a]
    assert f"miscabled: hears z02-rtsw001 {port_a}, planned z02-rtsw001 {port_b}" in failed[ctsw_b]


def test_a_miscabled_switch_is_not_touched(converged):
    """The pre-check reads LLDP: a switch cabled otherwise than planned fails before any change."""
    converged.change_weights()
    port_a, _, port_b, _ = _swap_two_uplinks(converged, "z02-rtsw001")
    before = converged.running("z02-rtsw001")
    code, report = converged.deploy()
    outcome = report["devices"]["z02-rtsw001"]
    assert code != 0 and outcome["status"] == "failed" and outcome["stage"] == "pre-check"
    assert f"{port_a} miscabled" in outcome["error"] and f"{port_b} miscabled" in outcome["error"]
    assert converged.running("z02-rtsw001") == before and converged.commits("z02-rtsw001") == []


def test_secrets_never_reach_output_or_report(fresh, tmp_path):
    report_file = tmp_path / "report.json"
    result = run_cli("deploy", str(fresh.fabric), "--limit", "z02-rtsw001", "--report", str(report_file))
    assert result.exit_code == 0, result.output
    for text in (result.output, report_file.read_text()):
        assert PASSWORD not in text and "notarealhash" not in text


def test_host_keys_are_verified(fresh, tmp_path):
    wrong = tmp_path / "known_hosts"
    wrong.write_text(fresh.fleet.known_hosts_path.read_text().replace("AAAA", "AAAB", 1))
    code, report = fresh.deploy("--known-hosts", str(wrong))
    assert code == 1 and report["counts"] == {"failed": 1, "not_touched": 13}
    assert report["devices"]["z02-rtsw001"]["stage"] == "connect"
    assert all(fresh.commits(n) == [] for n in fresh.names)
    missing = run_cli("deploy", str(fresh.fabric), "--known-hosts", str(tmp_path / "nope"), "--json")
    assert missing.exit_code == 2 and "known_hosts file" in json.loads(missing.stdout)["error"]
    insecure = run_cli("deploy", str(fresh.fabric), "--limit", "z02-rtsw001", "--known-hosts", str(wrong),
                       "--insecure-no-host-key-check", "--dry-run")
    assert insecure.exit_code == 0 and "NOT verified" in insecure.output
