"""`netgen deploy` end to end on the SONiC path: the netns lab's SONiC RTSWs with sshd and the
SONiC config/show stand-in (netgen/nos/sonic/lab_shim.py), real FRR routing, real Nornir + netmiko
`linux`, SSH host keys checked. Device state is read over SSH from the devices, not from the report.

Lab: small example zone 1, 2 racks, 1 CTSW (two SONiC RTSWs; the CTSW runs its FRR stand-in and
is not deployed here: the EOS path has its own tests)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from netmiko import ConnectHandler

from netgen.checks import DesignContext
from netgen.deploy.driver import driver_factory
from netgen.intent import load_fabric
from netgen.intent.secrets import fill_files
from netgen.lab import endpoints
from netgen.lab.adapters import lab_inputs, rendered_files
from netgen.lab.netns import NetnsBackend
from netgen.lab.netns import prerequisites as lab_prerequisites
from netgen.lab.plan import LabPlan, SliceRequest
from netgen.lab.verify import check_lldp, routing_state, wait_for
from netgen.nos.sonic import lab_shim
from netgen.nos.sonic.driver import SONIC_OWNERSHIP, frr_digest
from netgen.platforms.frr_drain import drained_peers, drained_state
from netgen.topology import expand
from tests.conftest import SMALL, run_cli, topology_of
from tests.lab.conftest import (
    HostSnapshot,
    assert_nothing_left,
    lab_name,
    lab_root,  # noqa: F401  (autouse fixture: private NETGEN_LAB_ROOT)
)
from tests.support import sonic_faults

MISSING = lab_prerequisites() + endpoints.prerequisites()
pytestmark = [pytest.mark.deploy,
              pytest.mark.skipif(bool(MISSING), reason="the SONiC deploy path needs " + "; ".join(MISSING))]

RTSWS = ["z01-rtsw001", "z01-rtsw002"]


@dataclass
class Site:
    fabric: Path
    eps: dict[str, endpoints.Endpoint]
    lab: NetnsBackend
    plan: LabPlan

    def ssh(self, node: str, command: str) -> str:
        conn = ConnectHandler(**self.eps[node].netmiko(conn_timeout=15))
        try:
            return str(conn.send_command(command, read_timeout=60)).strip("\n")
        finally:
            conn.disconnect()

    def running(self, node: str) -> dict[str, Any]:
        config = json.loads(self.ssh(node, "show runningconfiguration all"))
        config.pop("bgpraw", None)
        return dict(config)

    def frr(self, node: str) -> str:
        return self.ssh(node, "cat /etc/sonic/frr/frr.conf")

    def established(self, node: str) -> int:
        data = json.loads(self.ssh(node, "vtysh -c 'show bgp summary json'"))
        return sum(1 for family in data.values() for p in family.get("peers", {}).values()
                   if p.get("state") == "Established")

    def deploy(self, *args: str) -> tuple[int, dict]:
        result = run_cli("deploy", str(self.fabric), "--limit", ",".join(RTSWS), "--json", *args)
        assert "Traceback" not in result.output
        return result.exit_code, json.loads(result.stdout)

    def edit(self, change: dict[str, Any]) -> None:
        data = yaml.safe_load(self.fabric.read_text())
        for path, value in change.items():
            node = data
            *parents, last = path.split(".")
            for part in parents:
                node = node[int(part)] if part.isdigit() else node[part]
            node[last] = value
        self.fabric.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    yield from sonic_site(tmp_path_factory)


def sonic_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The lab of `site`, for other modules' own fixtures: built, yielded, then taken down with
    proof that nothing is left on the host."""
    before = HostSnapshot.take()
    name = lab_name("dep")
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    plan, files = lab_inputs(name, ctx, SliceRequest(zone=1, racks=2, ctsw=1))
    backend = NetnsBackend(name)
    backend.build(plan)
    try:
        # as `netgen lab up` leaves a lab: every session up and LLDP heard on both ends of every cable
        results, _ = wait_for(lambda: routing_state(backend, plan) + check_lldp(backend, plan), 120)
        assert all(r.ok for r in results), [r for r in results if not r.ok][:5]
        # converged: as a deploy leaves them, the TACACS+ key filled in (services.aaa)
        seeded = fill_files(files, loaded.fabric.shared_secrets())
        eps = endpoints.start_management(backend, RTSWS, files=seeded, shim_hooks=sonic_faults.HOOKS)
        folder = tmp_path_factory.mktemp("sonic-site")
        shutil.copy(SMALL, folder / "fabric.yaml")
        shutil.copytree(SMALL.parent / "secrets", folder / "secrets")  # the files the fabric refers to
        # a dropped session shows up as a command timeout: keep it short here
        deploy = {"management": {"devices": {n: {"host": eps[n].host, "port": eps[n].port} for n in RTSWS}},
                  "ssh": {"known_hosts": str(eps[RTSWS[0]].known_hosts), "command_timeout_s": 15},
                  "rollout": {"workers": 4}}
        (folder / "deploy.yaml").write_text(yaml.safe_dump(deploy))
        mp = pytest.MonkeyPatch()
        mp.setenv("NETGEN_USERNAME", eps[RTSWS[0]].username)
        mp.setenv("NETGEN_SSH_KEY", str(eps[RTSWS[0]].key_file))
        mp.delenv("NETGEN_PASSWORD", raising=False)
        yield Site(folder / "fabric.yaml", eps, backend, plan)
        mp.undo()
    finally:
        backend.destroy()  # also stops management
        assert_nothing_left(before, name)


def test_1_converged_lab_is_unchanged(site):
    code, report = site.deploy()
    assert code == 0, report.get("stopped_reason") or report.get("error")
    assert report["counts"] == {"unchanged": 2}
    checks = {c["check"] for d in report["devices"].values() for c in d["checks"]}
    assert checks == {"drain", "model", "bgp-baseline", "no-pfc-storm", "lldp-neighbors"}
    # LLDP read back through `show lldp table` from each node's real lldpd: every port cabled in the
    # lab slice (its CTSW's uplinks, one host) hears its planned neighbour; the rest are silent
    topology = topology_of(site.fabric)
    for rtsw in RTSWS:
        cabled = sum(1 for link in site.plan.links if rtsw in (link.a, link.b))
        lldp = next(c for c in report["devices"][rtsw]["checks"] if c["check"] == "lldp-neighbors")
        total = len(topology.ports[rtsw])
        assert lldp["outcome"] == "pass" and cabled == 5
        assert lldp["detail"] == f"{cabled}/{total} ports hear their planned neighbour, {total - cabled} silent"


def test_1b_show_lldp_table_answers_as_lldpshow_from_real_lldp(site):
    """The CTSW (EOS in production, an FRR node here) sends its interface name as port ID; the host
    its NIC name; a SONiC port's ID is its alias (what lldpmgrd sets), seen from the other end."""
    table = site.ssh("z01-rtsw001", "show lldp table")
    lines = table.splitlines()
    assert lines[0] == "Capability codes: (R) Router, (B) Bridge, (O) Other"
    assert lines[1].split() == ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"]
    assert lines[-1] == "Total entries displayed:  5"
    rows = {line.split()[0]: line.split()[1:3] for line in lines[3:-2]}
    planned = {p.name: p for p in topology_of(site.fabric).ports["z01-rtsw001"]}
    for port, (system, port_id) in rows.items():
        assert system == planned[port].peer_device
        assert port_id == planned[port].peer_port  # EOS interface names; the host's nicN
    # the other way round: the CTSW hears each RTSW port by the alias its config_db.json gives it
    config_db = json.loads(site.ssh("z01-rtsw001", "cat /etc/sonic/running/config_db.json"))
    heard = site.lab.lldp_neighbors("z01-ctsw01") or {}
    uplinks = [p for p in planned.values() if p.peer_device == "z01-ctsw01"]
    assert len(uplinks) == 4
    ends = {(link.a, link.a_port): (link.b, link.b_if) for link in site.plan.links}
    ends.update({(link.b, link.b_port): (link.a, link.a_if) for link in site.plan.links})
    for port in uplinks:
        ctsw, ifname = ends[("z01-rtsw001", port.name)]
        assert ctsw == "z01-ctsw01"
        assert heard[ifname] == ("z01-rtsw001", config_db["PORT"][port.name]["alias"])


def test_2_dry_run_shows_the_field_change_and_changes_nothing(site):
    site.edit({"qos.lossless.weight": 60, "qos.classes.0.weight": 40})
    before = {n: site.running(n) for n in RTSWS}
    code, report = site.deploy("--dry-run")
    assert code == 0 and report["counts"] == {"dry_run": 2}
    diff = report["devices"]["z01-rtsw001"]["diff"]
    assert "~ SCHEDULER|scheduler.roce.weight: 50 -> 60" in diff
    assert "~ SCHEDULER|scheduler.best-effort.weight: 50 -> 40" in diff
    assert report["devices"]["z01-rtsw001"]["changes"] == 2  # nothing else, frr.conf untouched
    assert {n: site.running(n) for n in RTSWS} == before


def test_3_deploy_applies_saves_and_a_second_run_is_unchanged(site):
    code, report = site.deploy()
    assert code == 0, [d["error"] for d in report["devices"].values()]
    assert report["counts"] == {"changed": 2}
    ecmp = [c for c in report["devices"]["z01-rtsw001"]["checks"] if c["check"] == "ecmp-width"]
    # every BGP route (the other rack's loopbacks and subnet, the CTSW's loopback) over all 4 links
    assert ecmp[0]["outcome"] == "pass" and "widths [4]" in ecmp[0]["detail"], ecmp
    for node in RTSWS:
        assert site.running(node)["SCHEDULER"]["scheduler.roce"]["weight"] == "60"
        saved = json.loads(site.ssh(node, "cat /etc/sonic/config_db.json"))
        assert saved["SCHEDULER"]["scheduler.roce"]["weight"] == "60"  # `config save` ran
        assert "netgen-" not in site.ssh(node, "config list-checkpoints")  # its checkpoint is gone
        assert site.established(node) >= 8  # 4 links to z01-ctsw01, IPv4 and IPv6
    code, again = site.deploy()
    assert code == 0 and again["counts"] == {"unchanged": 2}


def test_3b_the_tacacs_key_reaches_config_db_and_no_report(site):
    """services.aaa: rendered as a placeholder, filled by the deploy; SONiC keeps the passkey as
    given. A switch with another key gets the intent's, and the report masks both."""
    key = (SMALL.parent / "secrets" / "tacacs.key").read_text().strip()
    assert site.running("z01-rtsw001")["TACPLUS"]["global"]["passkey"] == key  # seeded as deployed
    patch = '[{"op": "replace", "path": "/TACPLUS/global/passkey", "value": "Old-Key-On-Switch"}]'
    site.ssh("z01-rtsw001", f"echo '{patch}' > /tmp/old-key.json && sudo -n config apply-patch /tmp/old-key.json")
    assert site.running("z01-rtsw001")["TACPLUS"]["global"]["passkey"] == "Old-Key-On-Switch"
    code, report = site.deploy()
    assert code == 0 and report["counts"] == {"changed": 1, "unchanged": 1}, json.dumps(report)[:800]
    assert "~ TACPLUS|global.passkey: *** -> ***" in report["devices"]["z01-rtsw001"]["diff"]
    assert key not in json.dumps(report) and "Old-Key-On-Switch" not in json.dumps(report)
    assert site.running("z01-rtsw001")["TACPLUS"]["global"]["passkey"] == key
    assert site.running("z01-rtsw001")["TACPLUS_SERVER"]["192.0.2.49"]["priority"] == "2"
    # SNMPv3: SONiC keeps the passphrases as given (sonic-snmp.yang); seeded as deployed
    auth, priv = ((SMALL.parent / "secrets" / f"snmp-{kind}.key").read_text().strip() for kind in ("auth", "priv"))
    user = site.running("z01-rtsw001")["SNMP_USER"]["netmon"]
    assert (user["SNMP_USER_AUTH_PASSWORD"], user["SNMP_USER_ENCRYPTION_PASSWORD"]) == (auth, priv)
    assert auth not in json.dumps(report) and priv not in json.dumps(report)


def test_4_a_patch_failing_half_way_is_rolled_back_exactly(site):
    """SONiC's apply-patch is not transactional: the stand-in fails after one change; the
    checkpoint must bring back exactly the old CONFIG_DB."""
    site.edit({"qos.lossless.weight": 70, "qos.classes.0.weight": 30})
    old = {n: site.running(n) for n in RTSWS}
    sonic_faults.inject_fault(site.lab, "z01-rtsw001", "apply-fail-after", "1")
    code, report = site.deploy()
    canary = report["devices"]["z01-rtsw001"]
    assert code == 1 and canary["status"] == "rolled_back", canary["error"]
    assert "apply-patch" in canary["error"]
    assert report["devices"]["z01-rtsw002"]["status"] == "not_touched"
    assert {n: site.running(n) for n in RTSWS} == old


def test_5_a_change_that_breaks_bgp_fails_the_canary_post_check_and_rolls_back(site):
    """A new CTSW ASN in the intent: the RTSW's frr.conf expects it, the (undeployed) CTSW still
    has the old one, so the sessions never come back; the canary's post-check must catch it, roll
    back its CONFIG_DB and frr.conf, and stop the rollout."""
    site.edit({"qos.lossless.weight": 50, "qos.classes.0.weight": 50, "asn.ctsw_base": 4200000100})
    old_db, old_frr = site.running("z01-rtsw001"), site.frr("z01-rtsw001")
    code, report = site.deploy("--post-check-timeout", "8")
    canary = report["devices"]["z01-rtsw001"]
    assert code == 1 and canary["status"] == "rolled_back", canary["error"]
    assert "bgp-established" in canary["error"] and "ecmp-width" in canary["error"]
    assert report["devices"]["z01-rtsw002"]["status"] == "not_touched"
    assert site.running("z01-rtsw001") == old_db and site.frr("z01-rtsw001") == old_frr
    deadline = time.monotonic() + 30
    while site.established("z01-rtsw001") < 8 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert site.established("z01-rtsw001") >= 8  # the old config brought the sessions back


@pytest.mark.parametrize(("fault", "value", "status", "ends_on"), [
    ("drop-before-apply", "", "rolled_back", "old"),
    ("drop-after-apply", "", "rolled_back", "old"),
    ("slow", "0.3", "changed", "new"),
])
def test_5b_connection_drops_and_a_slow_device(site, fault, value, status, ends_on):
    """A dropped SSH session before or after `config apply-patch`: the pipeline reconnects and
    rolls back to the checkpoint, so the device ends on its old CONFIG_DB; a slow one completes."""
    site.edit({"asn.ctsw_base": 4200000000})  # undo test 5's broken ASN plan
    weight = 45 if ends_on == "old" else 55
    site.edit({"qos.lossless.weight": weight, "qos.classes.0.weight": 100 - weight})
    old = site.running("z01-rtsw001")
    sonic_faults.inject_fault(site.lab, "z01-rtsw001", fault, value)
    try:
        result = run_cli("deploy", str(site.fabric), "--limit", "z01-rtsw001", "--json")
        report = json.loads(result.stdout)
    finally:
        sonic_faults.clear_faults(site.lab, "z01-rtsw001")
    outcome = report["devices"]["z01-rtsw001"]
    assert outcome["status"] == status, outcome["error"]
    running = site.running("z01-rtsw001")
    if ends_on == "old":
        assert running == old and result.exit_code == 1
    else:
        assert running["SCHEDULER"]["scheduler.roce"]["weight"] == str(weight) and result.exit_code == 0
    assert "netgen-" not in site.ssh("z01-rtsw001", "config list-checkpoints")  # nothing left half-done


def test_5c_ansible_rollout_check_mode_then_apply_then_no_change(site):
    """`netgen rollout` (ansible-playbook via ansible-runner, the netgen_deploy module) on the SONiC
    path: check mode shows the CONFIG_DB field changes and changes nothing, a real run applies
    them, a second run changes nothing."""
    site.edit({"asn.ctsw_base": 4200000000, "qos.lossless.weight": 65, "qos.classes.0.weight": 35})
    before = {n: site.running(n) for n in RTSWS}
    weight = before["z01-rtsw001"]["SCHEDULER"]["scheduler.roce"]["weight"]
    assert weight != "65"

    def rollout(*args: str) -> tuple[int, dict]:
        result = run_cli("rollout", str(site.fabric), "--limit", ",".join(RTSWS), "--json", *args)
        assert "Traceback" not in result.output
        return result.exit_code, json.loads(result.stdout)

    code, report = rollout("--check")
    assert code == 0 and report["counts"] == {"dry_run": 2}, report.get("stopped_reason")
    assert f"~ SCHEDULER|scheduler.roce.weight: {weight} -> 65" in report["devices"]["z01-rtsw001"]["diff"]
    assert set(report["ansible"]["stats"]["changed"]) == set(RTSWS)  # Ansible: "would change"
    assert {n: site.running(n) for n in RTSWS} == before
    code, report = rollout()
    assert code == 0 and report["counts"] == {"changed": 2}, [d["error"] for d in report["devices"].values()]
    for node in RTSWS:
        assert site.running(node)["SCHEDULER"]["scheduler.roce"]["weight"] == "65"
        assert "netgen-" not in site.ssh(node, "config list-checkpoints")
    code, report = rollout()
    assert code == 0 and report["counts"] == {"unchanged": 2} and not report["ansible"]["stats"].get("changed")


def _frr_running(site: Site, node: str) -> str:
    return frr_digest(site.ssh(node, "vtysh -c 'show running-config'"))


def _leftovers(site: Site, node: str) -> str:
    # a timer's output log is the emulated systemd journal's, not something netgen left
    return site.ssh(node, "ls /etc/sonic/frr /etc/sonic/timers /etc/sonic 2>/dev/null"
                          " | grep netgen- | grep -v '[.]log$' || true")


def test_5d_a_drop_after_the_frr_reload_rolls_back_config_db_and_frr(site):
    """The connection dies right after the new FRR config was loaded; the driver rebuilt after the
    reconnect knows nothing of the staged change, yet the device must end on its old CONFIG_DB, its
    old FRR running config and its old frr.conf, with no revert timer left (all read back here)."""
    node = "z01-rtsw001"
    site.edit({"asn.ctsw_base": 4200000000, "bgp.keepalive_s": 4, "bgp.hold_s": 12, "qos.lossless.weight": 40,
               "qos.classes.0.weight": 60})
    old_db, old_disk, old_frr = site.running(node), site.frr(node), _frr_running(site, node)
    sonic_faults.inject_fault(site.lab, node, "drop-after-frr-reload")
    try:
        result = run_cli("deploy", str(site.fabric), "--limit", node, "--json")
        report = json.loads(result.stdout)
    finally:
        sonic_faults.clear_faults(site.lab, node)
    outcome = report["devices"][node]
    assert result.exit_code == 1 and outcome["status"] == "rolled_back", outcome["error"]
    assert outcome["readback"]["holds"] == "old" and outcome["readback"]["pending"] == ""
    assert site.running(node) == old_db and site.frr(node) == old_disk and _frr_running(site, node) == old_frr
    assert site.ssh(node, "systemctl is-active netgen-revert-" + report["change_id"] + ".timer") == "inactive"
    assert _leftovers(site, node) == ""


def test_5e_an_unconfirmed_change_reverts_by_itself(site):
    """No confirm ever comes (the controller is gone): the revert timer armed with the commit brings
    CONFIG_DB, FRR and frr.conf back on its own, as EOS's commit timer does."""
    node = "z01-rtsw001"
    site.edit({"asn.ctsw_base": 4200000000, "bgp.keepalive_s": 5, "bgp.hold_s": 15, "qos.lossless.weight": 35,
               "qos.classes.0.weight": 65})
    loaded = load_fabric(site.fabric)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    device = ctx.topology.devices[node]
    files = rendered_files(ctx, [device], None)[node]
    old_db, old_disk, old_frr = site.running(node), site.frr(node), _frr_running(site, node)
    conn = ConnectHandler(**site.eps[node].netmiko(conn_timeout=15))
    try:
        driver = driver_factory("sonic")(conn, device, files, "revert-test", 30.0, SONIC_OWNERSHIP)
        driver.stage()
        driver.commit(6)
    finally:
        conn.disconnect()  # nobody will confirm
    assert site.running(node)["SCHEDULER"]["scheduler.roce"]["weight"] == "35"
    assert _frr_running(site, node) != old_frr and site.frr(node) == old_disk  # nothing persistent yet
    units = "netgen-revert-revert-test.timer netgen-revert-revert-test.service"
    fired = endpoints.node_shim_dir(site.lab, node) / lab_shim.TIMERS_DIR / "netgen-revert-revert-test.timer.log"
    # armed by the commit: still waiting, or (a machine slow enough to let its 6 s pass) already fired
    assert site.ssh(node, f"systemctl is-active {units}").splitlines()[0] == "active" or fired.exists()
    # what is waited for is the state read back (timer and the revert it runs both done), not a time
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and "active" in site.ssh(node, f"systemctl is-active {units}").splitlines():
        time.sleep(0.5)
    assert fired.exists(), "the revert timer never fired"
    assert site.running(node) == old_db and site.frr(node) == old_disk and _frr_running(site, node) == old_frr
    assert "netgen-" not in site.ssh(node, "config list-checkpoints") and _leftovers(site, node) == ""


def test_5f_tables_netgen_does_not_write_are_kept_unless_removal_is_asked(site):
    """A VXLAN tunnel and a drop counter on the switch (put straight into the stand-in's CONFIG_DB, as
    an operator's `config vxlan add` would): tables netgen never writes, not even with `services:`
    or custom_config. The deploy keeps them and says so; --remove-unmanaged lists them as removed.
    Only the dry run removes here: the stand-in, like GCU without those YANG models, refuses patches
    to tables it has no model for."""
    node = "z01-rtsw001"
    site.edit({"qos.lossless.weight": 50, "qos.classes.0.weight": 50})
    path = endpoints.node_shim_dir(site.lab, node) / lab_shim.RUNNING_DIR / lab_shim.RUNNING_FILE
    config = json.loads(path.read_text())
    config.update({"VXLAN_TUNNEL": {"vtep1": {"src_ip": "10.0.0.1"}},
                   "DEBUG_COUNTER": {"DROPS": {"type": "PORT_INGRESS_DROPS"}}})
    lab_shim.write_json(path, config)

    def deploy(*args: str) -> tuple[int, dict]:
        result = run_cli("deploy", str(site.fabric), "--limit", node, "--json", *args)
        return result.exit_code, json.loads(result.stdout)["devices"][node]

    code, dry = deploy("--dry-run")
    assert code == 0 and dry["ownership"]["kept_unmanaged"] == ["DEBUG_COUNTER|DROPS", "VXLAN_TUNNEL|vtep1"]
    assert "MGMT_INTERFACE" not in json.dumps(dry["ownership"]["would_remove"])
    code, outcome = deploy()
    assert code == 0 and outcome["status"] in ("changed", "unchanged"), outcome["error"]
    running = site.running(node)
    assert running["VXLAN_TUNNEL"] == {"vtep1": {"src_ip": "10.0.0.1"}}
    assert running["DEBUG_COUNTER"] == {"DROPS": {"type": "PORT_INGRESS_DROPS"}}
    code, forced = deploy("--dry-run", "--remove-unmanaged")
    assert code == 0 and forced["ownership"]["removed_unmanaged"] == ["DEBUG_COUNTER|DROPS", "VXLAN_TUNNEL|vtep1"]
    assert "- VXLAN_TUNNEL|vtep1 (was {'src_ip': '10.0.0.1'})" in forced["ownership"]["would_remove"]
    assert site.running(node)["VXLAN_TUNNEL"] == {"vtep1": {"src_ip": "10.0.0.1"}}  # a dry run changes nothing


def test_5g_a_drain_is_read_back_from_frr_kept_on_disk_refused_by_deploy_and_undone_exactly(site):
    """`netgen drain` on a SONiC switch: the prepend in FRR's running config and in frr.conf, read back
    from both by the test over SSH; its neighbour (real FRR) learns its routes 3 x its ASN longer; a
    deploy refuses it (the push would undrain it) unless --keep-drained, which changes nothing here;
    a second drain is a no-op; undrain gives back FRR's running config and frr.conf exactly."""
    node = "z01-rtsw001"
    asn = topology_of(site.fabric).devices[node].asn
    running_before, conf_before = site.ssh(node, "vtysh -c 'show running-config'"), site.frr(node)

    def cli(*args: str) -> tuple[int, dict]:
        result = run_cli(*args, "--json")
        assert "Traceback" not in result.output
        return result.exit_code, json.loads(result.stdout)

    code, report = cli("drain", str(site.fabric), node, "--why", "swap PSU 2")
    assert code == 0, report
    assert list(report["read"]) == [node]  # a rack switch's drain moves no bound but its own
    (switch,) = report["switches"]
    assert (switch["action"], switch["after"]["running"], switch["after"]["saved"]) == ("drained", "drained", "drained")
    assert drained_state(site.ssh(node, "vtysh -c 'show running-config'")) is True
    assert drained_state(site.frr(node)) is True
    prepended = " ".join([str(asn)] * 4)  # its own ASN once, then the drain's three
    learned = site.lab.exec("z01-ctsw01", ["vtysh", "-c", "show bgp ipv4 unicast"])
    assert learned.ok and prepended in learned.stdout, learned.stdout[-2000:]

    code, report = cli("drain", str(site.fabric), node)
    assert code == 0 and report["switches"][0]["action"] == "already drained"
    code, report = cli("deploy", str(site.fabric), "--limit", node)
    outcome = report["devices"][node]
    assert code == 1 and outcome["status"] == "failed" and "--keep-drained" in outcome["error"]
    code, report = cli("deploy", str(site.fabric), "--limit", node, "--keep-drained")
    assert code == 0 and report["devices"][node]["status"] == "unchanged", report["devices"][node]["error"]
    code, report = cli("check", str(site.fabric), "--limit", node)
    results = {r["check"]: r for r in report["results"]}  # (LLDP fails: the slice cables one CTSW of four)
    assert results["drain"]["detail"].startswith("drained: checked against"), results["drain"]
    assert results["no-diff"]["outcome"] == "pass", results["no-diff"]

    code, report = cli("undrain", str(site.fabric), node)
    assert code == 0 and report["switches"][0]["action"] == "undrained", report
    assert frr_digest(site.ssh(node, "vtysh -c 'show running-config'")) == frr_digest(running_before)
    assert site.frr(node) == conf_before
    assert wait_for_text(lambda: site.lab.exec("z01-ctsw01", ["vtysh", "-c", "show bgp ipv4 unicast"]).stdout,
                         lambda text: prepended not in text)


def test_5h_a_link_drain_takes_one_cable_out_of_the_switch_s_own_ecmp_in_real_frr_and_undoes_exactly(site):
    """The SONiC end of a link drain, driven by the driver over SSH (the CTSW end is an EOS switch in
    production: tests/deploy/test_drain_eos.py drains a whole EOS link): the two sessions over one
    cable take routes through the wrapper map, read back from FRR's running config and frr.conf; the
    RTSW's kernel forwards to the other rack over 3 of its 4 cables to the CTSW (real FRR: the cable's
    routes are kept, at local preference 50); a deploy refuses the switch unless --keep-drained; the
    undrain gives the group's map back (FRR's running config and frr.conf exactly as before) and the
    fourth path back."""
    node = "z01-rtsw001"
    ctx = _context(site.fabric)
    device = ctx.topology.devices[node]
    link = next(k for k in ctx.topology.links if k.lower.device == node and k.upper.device == "z01-ctsw01")
    peers = [str(link.upper.ipv4.ip), str(link.upper.ipv6.ip)]
    files = rendered_files(ctx, [device], None)[node]
    running_before, conf_before = _frr_running(site, node), site.frr(node)
    other_rack = str(ctx.topology.devices["z01-rtsw002"].host_subnet_ipv4)

    def driven(action: str) -> Any:
        conn = ConnectHandler(**site.eps[node].netmiko(conn_timeout=15))
        try:
            driver = driver_factory("sonic")(conn, device, files, "link-test", 30.0, SONIC_OWNERSHIP)
            if action != "read":
                getattr(driver, action)(peers)
            return driver.drain_state()
        finally:
            conn.disconnect()

    def width() -> int:
        route = json.loads(site.lab.exec(node, ["ip", "-j", "route", "show", other_rack]).stdout or "[]")
        return len(route[0].get("nexthops", [route[0]])) if route else 0

    assert width() == 4  # its four cables to the slice's one CTSW
    seen = driven("drain_sessions")
    assert seen.peers_running == seen.peers_saved == frozenset(peers) and seen.running is False
    raw = site.ssh(node, "vtysh -c 'show running-config'")
    assert drained_peers(raw) == frozenset(peers) == drained_peers(site.frr(node))
    assert wait_for_text(lambda: str(width()), lambda text: text == "3"), \
        (width(), site.ssh(node, f"vtysh -c 'show ip route {other_rack}'"))
    learned = site.ssh(node, f"vtysh -c 'show bgp ipv4 unicast {other_rack}'")
    assert "localpref 50" in learned and learned.count("multipath") == 3, learned  # kept as a fallback
    assert driven("drain_sessions").peers_running == frozenset(peers)  # repeat-safe
    code, report = _cli("deploy", str(site.fabric), "--limit", node)
    assert code == 1 and "sessions drained" in report["devices"][node]["error"], report["devices"][node]
    code, report = _cli("deploy", str(site.fabric), "--limit", node, "--keep-drained")
    assert code == 0 and report["devices"][node]["status"] == "unchanged", report["devices"][node]["error"]

    seen = driven("undrain_sessions")
    assert seen.peers == frozenset()
    assert _frr_running(site, node) == running_before and site.frr(node) == conf_before
    assert wait_for_text(lambda: str(width()), lambda text: text == "4"), width()


def _context(fabric: Path) -> DesignContext:
    loaded = load_fabric(fabric)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def _cli(*args: str) -> tuple[int, dict]:
    result = run_cli(*args, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def wait_for_text(read, done, timeout: float = 30.0) -> bool:
    """Read until `done` says so (the neighbour re-learns at its own pace), or the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if done(read()):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)


def test_6_lab_up_ssh_gives_a_site_that_netgen_deploy_uses_as_is(monkeypatch):
    """The user's path: `netgen lab up --ssh`, then the printed `netgen deploy` command."""
    before = HostSnapshot.take()
    name = lab_name("ssh")
    result = run_cli("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--racks", "1", "--ctsw", "1",
                     "--ssh", "--json")
    up = json.loads(result.stdout)
    try:
        assert result.exit_code == 0, up
        access = up["ssh"]
        assert list(access["endpoints"]) == ["z01-rtsw001"]
        monkeypatch.setenv("NETGEN_USERNAME", access["username"])
        monkeypatch.setenv("NETGEN_SSH_KEY", access["key_file"])
        monkeypatch.delenv("NETGEN_PASSWORD", raising=False)
        deployed = run_cli("deploy", f"{access['fabric_dir']}/fabric.yaml", "--limit", "z01-rtsw001", "--json")
        report = json.loads(deployed.stdout)
        assert deployed.exit_code == 0 and report["counts"] == {"unchanged": 1}, report
    finally:
        assert run_cli("lab", "down", "--name", name).exit_code == 0
    assert_nothing_left(before, name)


def test_7_a_miscabled_sonic_switch_is_named_by_check_and_not_touched_by_deploy(monkeypatch):
    """Two uplinks of the SONiC RTSW re-cabled to each other's spine ports (veths made again crossed):
    `show lldp table` from the node's real lldpd says so, `netgen check` names both ports and
    `netgen deploy` stops the switch at its pre-check with its running CONFIG_DB untouched."""
    before = HostSnapshot.take()
    name = lab_name("mis")
    result = run_cli("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--racks", "1", "--ctsw", "2",
                     "--ssh", "--json")
    up = json.loads(result.stdout)
    try:
        assert result.exit_code == 0, up
        access = up["ssh"]
        monkeypatch.setenv("NETGEN_USERNAME", access["username"])
        monkeypatch.setenv("NETGEN_SSH_KEY", access["key_file"])
        monkeypatch.delenv("NETGEN_PASSWORD", raising=False)
        fabric = f"{access['fabric_dir']}/fabric.yaml"
        backend = NetnsBackend(name)
        plan = backend.plan()
        one = next(k for k in plan.links if k.a == "z01-rtsw001" and k.b == "z01-ctsw01")
        two = next(k for k in plan.links if k.a == "z01-rtsw001" and k.b == "z01-ctsw02")
        rtsw, c1, c2 = (backend.namespace(n) for n in ("z01-rtsw001", "z01-ctsw01", "z01-ctsw02"))
        for ifname in (one.a_if, two.a_if):
            subprocess.run(["ip", "-n", rtsw, "link", "del", ifname], check=True)
        for a_if, peer_ns, peer_if in ((one.a_if, c2, two.b_if), (two.a_if, c1, one.b_if)):
            subprocess.run(["ip", "link", "add", "name", a_if, "netns", rtsw, "type", "veth", "peer", "name", peer_if,
                            "netns", peer_ns], check=True)
            subprocess.run(["ip", "-n", rtsw, "link", "set", a_if, "up"], check=True)
            subprocess.run(["ip", "-n", peer_ns, "link", "set", peer_if, "up"], check=True)
        deadline = time.monotonic() + 30  # lldpd sends every second; the old neighbours age out
        while True:
            checked = run_cli("check", fabric, "--limit", "z01-rtsw001", "--json")
            lldp = next(r for r in json.loads(checked.stdout)["results"] if r["check"] == "lldp-neighbors")
            if lldp["detail"].count("miscabled") == 2 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert checked.exit_code == 1 and lldp["outcome"] == "fail"
        assert f"{one.a_port} miscabled: hears z01-ctsw02 {two.b_port}, planned z01-ctsw01 {one.b_port}" \
            in lldp["detail"]
        assert f"{two.a_port} miscabled: hears z01-ctsw01 {one.b_port}, planned z01-ctsw02 {two.b_port}" \
            in lldp["detail"]
        eps = endpoints.endpoints(backend)
        site = Site(Path(fabric), eps, backend, plan)
        config_before = site.running("z01-rtsw001")
        deployed = run_cli("deploy", fabric, "--limit", "z01-rtsw001", "--json")
        outcome = json.loads(deployed.stdout)["devices"]["z01-rtsw001"]
        assert deployed.exit_code == 1 and outcome["status"] == "failed" and outcome["stage"] == "pre-check"
        assert f"{one.a_port} miscabled" in outcome["error"] and f"{two.a_port} miscabled" in outcome["error"]
        assert site.running("z01-rtsw001") == config_before
    finally:
        assert run_cli("lab", "down", "--name", name).exit_code == 0
    assert_nothing_left(before, name)
