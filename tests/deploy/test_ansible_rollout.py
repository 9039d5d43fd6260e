"""Ansible rollouts end to end: real `ansible-playbook` (through ansible-runner for `netgen rollout`,
directly for the plain-Ansible path) runs roles/rollout.yml and the netgen_deploy module against
the EOS emulator (real SSH, config sessions, commit timers).

Device state is read from the emulator, never from netgen's or Ansible's report."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from ipaddress import IPv4Address
from pathlib import Path

import pytest

from netgen.deploy.ansible_rollout import DEFAULT_PLAYBOOK
from tests.conftest import ROOT, SMALL, run_cli, topology_of
from tests.deploy.eos_site import OWNED, PASSWORD, Site, body

pytestmark = pytest.mark.deploy
ANSIBLE = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")
needs_ansible = pytest.mark.skipif(ANSIBLE is None, reason="ansible-core is not installed (pip install ansible-core)")


def rollout(site: Site, *args: str) -> tuple[int, dict]:
    result = run_cli("rollout", str(site.fabric), "--limit", ",".join(site.names), "--json", *args)
    assert "Traceback" not in result.output, result.output[-3000:]
    return result.exit_code, json.loads(result.stdout)


# one device of every kind of batch (canaries, an RTSW batch, a two-CTSW batch, both ATSWs): the
# small example's 14 EOS switches would take 11 batches for no extra coverage
SAMPLE = ["z02-rtsw001", "z01-ctsw01", "z02-rtsw002", "z01-ctsw02", "z02-ctsw01", "atsw01", "atsw02"]


def changed_hosts(report: dict) -> set[str]:
    """Hosts Ansible itself counted as changed (its play recap), not netgen's view."""
    return set(report["ansible"]["stats"].get("changed", {}))


@needs_ansible
def test_check_mode_reports_each_real_diff_and_changes_nothing(fresh):
    fresh.names = SAMPLE
    before = {n: fresh.running(n) for n in fresh.names}
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    code, report = rollout(fresh, "--check")
    # ansible_runner sets SIGTERM and SIGINT handlers for the run; the caller's are back after it (with
    # ansible_runner's left behind, a pool this process starts later cannot terminate its workers)
    assert {number: signal.getsignal(number) for number in handlers} == handlers
    assert code == 0, report.get("stopped_reason")
    assert report["counts"] == {"dry_run": 7} and report["ansible"]["rc"] == 0
    assert changed_hosts(report) == set(fresh.names)  # check mode: "would change"
    for name in fresh.names:
        outcome = report["devices"][name]
        added = next(line for line in body(fresh.rendered[name]) if not line.startswith("hostname "))
        assert outcome["changes"] > 100 and f"\n+{added}\n" in outcome["diff"]
    assert {n: fresh.running(n) for n in fresh.names} == before
    assert all(fresh.commits(n) == [] and fresh.fleet.device(n).pending_sessions == {} for n in fresh.names)


@needs_ansible
def test_rollout_converges_in_netgen_batches_then_a_second_run_changes_nothing(fresh):
    fresh.names = SAMPLE
    code, report = rollout(fresh, "--change-id", "cr-42")
    assert code == 0, report.get("stopped_reason") or [d["error"] for d in report["devices"].values()]
    assert report["counts"] == {"changed": 7} and changed_hosts(report) == set(fresh.names)
    for name in fresh.names:
        running = fresh.running(name)
        owned = set(body(OWNED))
        assert [line for line in body(running) if line not in owned] == body(fresh.rendered[name])
        assert fresh.commits(name) == ["commit-timer"]
        # one change id for the whole rollout (the post-check's throw-away session is `<id>-v`)
        assert {e.session for e in fresh.fleet.device(name).history} <= {None, "netgen-cr-42", "netgen-cr-42-v"}
    # Ansible's serial batches are netgen's: every commit of a batch ends before the next one starts
    batches = report["batches"]
    assert [b["devices"] for b in batches] == [["z02-rtsw001"], ["z01-ctsw01"], ["z02-rtsw002"],
                                               ["z01-ctsw02", "z02-ctsw01"], ["atsw01"], ["atsw02"]]
    for earlier, later in itertools.pairwise(batches):
        ended = max(report["devices"][n]["commit_ended"] for n in earlier["devices"])
        started = min(report["devices"][n]["commit_started"] for n in later["devices"])
        assert ended <= started, f"batch {later['index']} started before batch {earlier['index']} ended"
    code, again = rollout(fresh)
    assert code == 0 and again["counts"] == {"unchanged": 7}
    assert changed_hosts(again) == set()
    assert all(fresh.commits(n) == ["commit-timer"] for n in fresh.names)  # no second commit anywhere


@needs_ansible
def test_failing_post_check_rolls_back_and_fails_the_play(converged):
    converged.change_weights()
    canary = "z02-rtsw001"
    uplink = next(p for p in topology_of(converged.fabric).ports[canary] if p.ipv4 is not None)
    peer = str(IPv4Address(int(uplink.ipv4.ip) ^ 1))
    converged.fleet.device(canary).set_fault(bgp_down_after_commit=[peer])
    before = {n: converged.running(n) for n in converged.names}
    code, report = rollout(converged, "--post-check-timeout", "2")
    assert code == 1 and report["ansible"]["rc"] != 0
    assert set(report["ansible"]["stats"].get("failures", {})) == {canary}
    assert report["devices"][canary]["status"] == "rolled_back"
    assert "bgp-established" in report["devices"][canary]["error"]
    assert report["counts"] == {"rolled_back": 1, "not_touched": 13}
    assert report["stopped"] and "canary rtsw" in report["stopped_reason"]
    assert {n: converged.running(n) for n in converged.names} == before  # canary back, nobody else touched
    kinds = [e.kind for e in converged.fleet.device(canary).history]
    assert "commit-timer" in kinds and kinds[-1] == "rollback"
    assert all(converged.commits(n) == [] for n in converged.names if n != canary)


@needs_ansible
def test_secrets_stay_out_of_output_events_and_artifacts(fresh, tmp_path):
    fresh.names = ["z02-rtsw001"]
    artifacts = tmp_path / "artifacts"
    result = run_cli("rollout", str(fresh.fabric), "--limit", "z02-rtsw001", "--artifacts", str(artifacts))
    assert result.exit_code == 0, result.output
    assert "changed" in result.output and PASSWORD not in result.output
    files = [p for p in artifacts.rglob("*") if p.is_file()]
    assert any(p.name == "command" for p in files) and any(p.parent.name == "job_events" for p in files)
    for path in files:
        text = path.read_text(errors="replace")
        assert PASSWORD not in text and "notarealhash" not in text, f"secret in {path}"


@needs_ansible
def test_plain_ansible_playbook_with_generated_inventory_and_vault_style_credentials(fresh, tmp_path, monkeypatch):
    """The user's own `ansible-playbook --check --diff` with the credentials as (vault) variables:
    the diff shows in Ansible's output, the password never does, nothing changes."""
    limit = ",".join(fresh.names[:3])
    inventory, playbook_vars = tmp_path / "inventory.json", tmp_path / "rollout-vars.json"
    inventory.write_text(run_cli("ansible-inventory", str(fresh.fabric), "--limit", limit, "--static").stdout)
    playbook_vars.write_text(run_cli("ansible-inventory", str(fresh.fabric), "--limit", limit,
                                     "--playbook-vars").stdout)
    monkeypatch.delenv("NETGEN_USERNAME")
    monkeypatch.delenv("NETGEN_PASSWORD")
    before = {n: fresh.running(n) for n in fresh.names}
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
           "ANSIBLE_RETRY_FILES_ENABLED": "0"}
    vault = {"netgen_username": fresh.fleet.username, "netgen_password": PASSWORD}
    done = subprocess.run([ANSIBLE, "-v", "-i", str(inventory), str(DEFAULT_PLAYBOOK), "--check", "--diff",
                           "-e", f"@{playbook_vars}", "-e", json.dumps(vault)],
                          capture_output=True, text=True, env=env, check=False, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert output.count("changed: [") == 3 and "+   mtu 9100" in output  # the EOS session diff, via --diff
    assert PASSWORD not in output
    assert {n: fresh.running(n) for n in fresh.names} == before


@needs_ansible
def test_role_refuses_to_run_without_the_fabric(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("netgen_rollout:\n  hosts:\n    z01-rtsw001:\n")
    done = subprocess.run([ANSIBLE, "-i", str(inventory), str(DEFAULT_PLAYBOOK)], capture_output=True, text=True,
                          check=False, env={**os.environ, "ANSIBLE_NOCOLOR": "1",
                                            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    assert done.returncode != 0
    assert "netgen_fabric" in done.stdout and "required" in done.stdout, done.stdout[-2000:]


@needs_ansible
def test_ansibles_own_limit_is_refused_before_anything_runs(tmp_path):
    """--limit would cut the planned batch sizes over another host list: refused in the first batch."""
    inventory = tmp_path / "inventory.json"
    inventory.write_text(run_cli("ansible-inventory", str(SMALL), "--static").stdout)
    done = subprocess.run([ANSIBLE, "-i", str(inventory), str(DEFAULT_PLAYBOOK), "--limit", "tier_ctsw",
                           "-e", f"netgen_fabric={SMALL}"], capture_output=True, text=True, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    assert done.returncode != 0
    assert "use netgen's --limit" in done.stdout and "re-plans the batches" in done.stdout, done.stdout[-2000:]
    assert "netgen deploy" not in done.stdout  # the deploy task never started
