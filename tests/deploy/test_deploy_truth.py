"""A deploy report says what the device holds, read back from it, and an interrupted change is
finished from its journal: faults injected into the EOS emulator (tests/support/eos_emulator.py)
over real SSH, Nornir and netmiko. Every expectation is read from the emulated switch itself
(running-config, startup-config, pending sessions), never from netgen's report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from ipaddress import IPv4Address

import pytest

from netgen.deploy.journal import default_path
from netgen.deploy.journal import read as read_journal
from tests.conftest import run_cli, topology_of

pytestmark = pytest.mark.deploy

VICTIM = "z02-rtsw001"  # an EOS RTSW of the small example


def _uplink_peer(site, name: str) -> str:
    uplink = next(p for p in topology_of(site.fabric).ports[name] if p.ipv4 is not None)
    return str(IPv4Address(int(uplink.ipv4.ip) ^ 1))  # the CTSW end of its first uplink


@pytest.fixture
def victim(converged):
    """The converged site with an intent change (DWRR weights) for one switch only."""
    converged.change_weights()
    converged.names = [VICTIM]
    device = converged.fleet.device(VICTIM)
    return converged, device, device.running_config()


def test_a_drop_between_the_confirm_and_the_save_is_finished_after_a_reconnect(victim):
    # Before: reported rolled_back while the switch ran the new config with the old one saved.
    site, device, old = victim
    device.set_fault(drop_after_confirm=True)
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 0 and outcome["status"] == "changed", outcome["error"]
    running = device.running_config()
    assert running != old and "bandwidth percent 60" in running
    assert device.startup_config().splitlines()[2:] == running.splitlines()[2:]  # saved (headers differ)
    assert device.pending_sessions == {}
    assert outcome["readback"] == {"holds": "new", "saved": True, "pending": "",
                                   "detail": outcome["readback"]["detail"]}
    kinds = [e.kind for e in device.history]
    assert kinds.index("drop") < len(kinds) - 1 and kinds[-1] == "write"  # saved after the reconnect


def test_a_commit_timer_that_ran_out_before_the_confirm_is_diverged_not_changed(victim):
    # Before: reported changed (exit 0) while EOS had restored the old config.
    site, device, old = victim
    device.set_fault(expire_before_confirm=True)
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 1 and outcome["status"] == "diverged"
    assert device.running_config() == old and device.pending_sessions == {}
    assert outcome["readback"]["holds"] == "old"
    assert "asked to confirm, the device was seen: running-config is the old one" in outcome["error"]


def test_a_refused_rollback_is_unconfirmed_with_the_timer_pending_then_recover_rolls_back(victim):
    # Before: reported rolled_back while the switch ran the new config with its timer pending.
    site, device, old = victim
    device.set_fault(bgp_down_after_commit=[_uplink_peer(site, VICTIM)], abort_error=True)
    code, report = site.deploy("--post-check-timeout", "2")
    outcome = report["devices"][VICTIM]
    assert code == 1 and outcome["status"] == "unconfirmed", outcome["error"]
    assert device.running_config() != old
    assert list(device.pending_sessions.values()) == ["pendingCommitTimer"]
    assert outcome["readback"]["holds"] == "new" and outcome["readback"]["pending"].startswith("EOS commit timer")
    assert "reverts by itself" in outcome["error"]
    # the journal knows it is in flight; recover finishes it once the switch takes the abort
    device.set_fault(abort_error=False)
    result = run_cli("recover", str(site.fabric), "--change-id", report["change_id"], "--json")
    recovered = json.loads(result.stdout)
    assert result.exit_code == 0, recovered
    assert recovered["devices"][VICTIM]["status"] == "rolled_back"
    assert device.running_config() == old and device.pending_sessions == {}
    assert not read_journal(default_path(report["change_id"])).in_flight()


def _deploy_process(site, change: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "netgen.cli", "deploy", str(site.fabric), "--json",
                             "--change-id", change, "--post-check-timeout", "60", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())


def _kill_when(process: subprocess.Popen[str], change: str, state: str, timeout: float = 60) -> None:
    """SIGKILL the deploy once the journal says the device reached `state` (a laptop closed mid-change)."""
    path = default_path(change)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = read_journal(path).records.get(VICTIM) if path.exists() else None
        if record is not None and state in record.history:
            process.send_signal(signal.SIGKILL)
            process.communicate()
            return
        if process.poll() is not None:
            raise AssertionError(f"deploy ended before {state}: {process.communicate()}")
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"deploy never reached {state}")


def test_a_killed_deploy_is_rolled_back_from_its_journal(victim):
    site, device, old = victim
    # post-checks that keep failing hold the deploy in its commit window: time to kill it there
    device.set_fault(bgp_down_after_commit=[_uplink_peer(site, VICTIM)])
    _kill_when(_deploy_process(site, "killed-1", "--limit", VICTIM), "killed-1", "committed")
    assert device.running_config() != old and list(device.pending_sessions.values()) == ["pendingCommitTimer"]
    (record,) = read_journal(default_path("killed-1")).in_flight()
    assert record.device == VICTIM and record.state == "committed" and record.before and record.after
    result = run_cli("recover", str(site.fabric), "--change-id", "killed-1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["devices"][VICTIM]["status"] == "rolled_back"
    assert device.running_config() == old and device.pending_sessions == {}


def test_a_killed_deploy_is_resumed_from_its_journal(victim):
    site, device, old = victim
    device.set_fault(bgp_down_after_commit=[_uplink_peer(site, VICTIM)])  # consumed by this first commit
    _kill_when(_deploy_process(site, "killed-2", "--limit", VICTIM), "killed-2", "committed")
    again = run_cli("deploy", str(site.fabric), "--limit", VICTIM, "--change-id", "killed-2", "--json")
    assert again.exit_code == 2 and "--resume killed-2" in json.loads(again.stdout)["error"]
    result = run_cli("deploy", str(site.fabric), "--resume", "killed-2", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    assert report["devices"][VICTIM]["status"] == "changed"
    running = device.running_config()
    assert running != old and "bandwidth percent 60" in running and device.pending_sessions == {}
    history = read_journal(default_path("killed-2")).records[VICTIM].history
    assert history[:3] == ["planned", "staged", "committing"] and history[-1] == "changed"
    assert "rolled_back" in history  # the in-flight commit went back first


@pytest.mark.parametrize(("args", "complaint"), [
    (("--confirm-timeout", "60"), "does not cover --post-check-timeout 60 s"),
    (("--post-check-timeout", "nan"), "--post-check-timeout nan"),
    (("--post-check-timeout", "-1"), "--post-check-timeout -1"),
    (("--post-check-timeout", "inf"), "--post-check-timeout inf"),
])
def test_timeouts_are_refused_before_anything_is_touched(victim, args, complaint):
    site, device, old = victim
    code, report = site.deploy(*args)
    assert code == 2 and complaint in report["error"]
    assert device.running_config() == old and site.commits(VICTIM) == []


def test_a_report_that_cannot_be_written_still_prints_the_result(fresh):
    # Before: exit 3 ("a netgen bug"), and the dry run's result was lost.
    result = run_cli("deploy", str(fresh.fabric), "--limit", VICTIM, "--dry-run", "--json",
                     "--report", "/proc/netgen/report.json")
    payload = json.loads(result.stdout)
    assert result.exit_code == 2 and payload["exit_code"] == 2
    assert payload["devices"][VICTIM]["status"] == "dry_run" and payload["devices"][VICTIM]["changes"] > 100
    assert "/proc/netgen/report.json" in payload["error"]
    text = run_cli("deploy", str(fresh.fabric), "--limit", VICTIM, "--dry-run", "--report", "/proc/netgen/r.json")
    assert text.exit_code == 2 and "dry_run" in text.stdout and "cannot write the report to /proc/netgen/r.json" \
        in " ".join(text.stderr.split())
