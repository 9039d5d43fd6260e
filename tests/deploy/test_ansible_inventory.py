"""The generated Ansible inventory, read by real Ansible: groups from the fabric, and a play over
`netgen_rollout` with `order: inventory` and `serial: netgen_serial` runs netgen's own batches."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from netgen.deploy.inventory import device_access, load_deploy
from netgen.deploy.rollout import plan_batches
from tests.conftest import META, SMALL, run_cli, topology_of

pytestmark = pytest.mark.render
ANSIBLE = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")


def _effective(inventory: dict[str, Any], name: str) -> dict[str, Any]:
    """A host's variables as Ansible combines them: its groups' (every group here is a child of
    all), then its own."""
    merged: dict[str, Any] = {}
    for group, body in inventory.items():
        if group not in ("_meta", "all") and name in body["hosts"]:
            merged |= body.get("vars", {})
    return merged | inventory["_meta"]["hostvars"][name]


def test_inventory_groups_hostvars_and_rollout_order():
    result = run_cli("ansible-inventory", str(SMALL), "--list")
    inventory = json.loads(result.stdout)
    assert result.exit_code == 0
    topology = topology_of(SMALL)
    assert sorted(inventory["_meta"]["hostvars"]) == sorted(topology.devices)
    assert inventory["tier_ctsw"]["hosts"] == sorted(n for n, d in topology.devices.items() if d.role.value == "ctsw")
    assert inventory["zone_2"]["hosts"] == sorted(n for n, d in topology.devices.items() if d.zone == 2)
    batches = plan_batches(topology, list(topology.devices), load_deploy(SMALL.parent).rollout)
    rollout = inventory["netgen_rollout"]
    assert rollout["hosts"] == [n for b in batches for n in b.devices]
    assert rollout["vars"]["netgen_serial"] == [len(b.devices) for b in batches]
    host = inventory["_meta"]["hostvars"]["z01-rtsw001"]
    assert host["ansible_host"] == "192.0.2.11" and host["netgen_batch_label"] == "canary rtsw"
    assert not any("pass" in key or "secret" in key for h in inventory["_meta"]["hostvars"].values() for key in h)
    # other playbooks reach EOS with the arista.eos collection; SONiC is a Linux host to Ansible
    network_os = {n: _effective(inventory, n).get("ansible_network_os") for n in inventory["_meta"]["hostvars"]}
    assert {n for n, os in network_os.items() if os == "arista.eos.eos"} == {
        n for n, d in topology.devices.items() if d.nos == "eos"}
    assert {n for n, os in network_os.items() if os is None} == {n for n, d in topology.devices.items()
                                                                  if d.nos == "sonic"}
    assert not any("ansible_connection" in _effective(inventory, n) for n in inventory["_meta"]["hostvars"])
    one = json.loads(run_cli("ansible-inventory", str(SMALL), "--host", "atsw02").stdout)
    assert one["netgen_role"] == "atsw" and one["netgen_batch"] == len(batches)
    assert one == _effective(inventory, "atsw02")  # with its groups' variables


@pytest.mark.skipif(ANSIBLE is None, reason="ansible-core is not installed (pip install ansible-core)")
@pytest.mark.parametrize("source", ["script", "static"])
def test_real_ansible_runs_netgen_batches(tmp_path, source):
    """As an inventory script (with serial from its group vars) or as `--static` file (with serial
    from `--playbook-vars`), real Ansible cuts exactly netgen's batches."""
    if source == "script":
        inventory = tmp_path / "netgen-inventory"
        inventory.write_text(f"#!/bin/sh\nexec {sys.executable} -m netgen.cli ansible-inventory {SMALL} \"$@\"\n")
        inventory.chmod(0o755)
        serial = json.loads(run_cli("ansible-inventory", str(SMALL)).stdout)["netgen_rollout"]["vars"]["netgen_serial"]
    else:
        inventory = tmp_path / "inventory.json"
        inventory.write_text(run_cli("ansible-inventory", str(SMALL), "--static").stdout)
        playbook_vars = json.loads(run_cli("ansible-inventory", str(SMALL), "--playbook-vars").stdout)
        assert playbook_vars["netgen_fabric"] == str(SMALL)
        serial = playbook_vars["netgen_serial"]
    graph = subprocess.run([str(Path(ANSIBLE).with_name("ansible-inventory")), "-i", str(inventory), "--graph"],
                           capture_output=True, text=True, check=True).stdout
    assert "@tier_rtsw:" in graph and "@netgen_rollout:" in graph and "z01-rtsw001" in graph
    record = tmp_path / "batches.txt"
    playbook = tmp_path / "play.yml"
    playbook.write_text(f"""
- hosts: netgen_rollout
  order: inventory
  serial: "{{{{ netgen_serial_cli }}}}"
  gather_facts: false
  connection: local
  tasks:
    - name: record the batch
      run_once: true
      ansible.builtin.shell: echo "{{{{ ansible_play_batch | join(',') }}}}" >> {record}
    - name: host variables come through
      ansible.builtin.assert:
        that: netgen_batch_label != "" and ansible_host != ""
""")
    env = {**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_PYTHON_INTERPRETER": sys.executable}
    done = subprocess.run([ANSIBLE, "-i", str(inventory), str(playbook), "-e",
                           json.dumps({"netgen_serial_cli": serial})], capture_output=True, text=True, env=env,
                          check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ran = [line.split(",") for line in record.read_text().split()]
    topology = topology_of(SMALL)
    batches = plan_batches(topology, list(topology.devices), load_deploy(SMALL.parent).rollout)
    assert ran == [list(b.devices) for b in batches]


def test_inventory_output_modes_exclude_each_other_and_limit_must_match():
    both = run_cli("ansible-inventory", str(SMALL), "--static", "--playbook-vars")
    assert both.exit_code == 2 and "exclude each other" in json.loads(both.stdout)["error"]
    nothing = run_cli("ansible-inventory", str(SMALL), "--limit", "nope*")
    assert nothing.exit_code == 2 and "matches no device" in json.loads(nothing.stdout)["error"]


def test_what_a_group_says_is_a_group_variable_and_no_group_variable_grows_with_the_fabric():
    """Ansible copies each group variable into every member's variables: a list of every batch's
    hosts there made meta-24k's inventory 174 MB as Ansible read it."""
    inventory = json.loads(run_cli("ansible-inventory", str(SMALL), "--list").stdout)
    topology = topology_of(SMALL)
    for name, own in inventory["_meta"]["hostvars"].items():
        device = topology.devices[name]
        assert not own.keys() & {"netgen_role", "netgen_zone", "netgen_nos", "netgen_platform", "ansible_network_os"}
        assert inventory[f"tier_{device.role.value}"]["vars"] == {"netgen_role": device.role.value}
        assert inventory[f"zone_{device.zone}" if device.zone else "atsw_layer"]["vars"] == {"netgen_zone": device.zone}
        assert inventory[f"nos_{device.nos}"]["vars"]["netgen_nos"] == device.nos
    assert inventory["nos_eos"]["vars"] == {"netgen_platform": "arista_eos", "netgen_nos": "eos",
                                            "ansible_network_os": "arista.eos.eos"}
    assert inventory["nos_sonic"]["vars"] == {"netgen_platform": "linux", "netgen_nos": "sonic"}
    assert list(inventory["netgen_rollout"]["vars"]) == ["netgen_serial"]


def _variables_netgen_gives(fabric: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each host's variables from the fabric itself, as they were when every one was a host variable
    (less netgen_batches, the whole plan on every host; each host keeps its own batch)."""
    topology = topology_of(fabric)
    deploy = load_deploy(fabric.parent)
    batches = plan_batches(topology, list(topology.devices), deploy.rollout)
    batch_of = {name: batch for batch in batches for name in batch.devices}
    expected = {}
    for name in names:
        device = topology.devices[name]
        host, port = device_access(deploy, device)
        expected[name] = {
            "ansible_host": host, "ansible_port": port, "netgen_platform": {"eos": "arista_eos", "sonic": "linux"}[
                device.nos], "netgen_role": device.role.value, "netgen_zone": device.zone, "netgen_nos": device.nos,
            "netgen_model": device.model, "netgen_asn": device.asn, "netgen_batch": batch_of[name].index,
            "netgen_batch_label": batch_of[name].label, "netgen_serial": [len(b.devices) for b in batches]}
        if device.nos == "eos":
            expected[name]["ansible_network_os"] = "arista.eos.eos"
    return expected


@pytest.mark.skipif(ANSIBLE is None, reason="ansible-core is not installed (pip install ansible-core)")
@pytest.mark.parametrize("fabric", [SMALL, META], ids=["small", "meta-24k"])
def test_real_ansible_reads_every_hosts_variables_and_meta_24k_stays_small(tmp_path, fabric):
    """The static file read by real ansible-inventory: the same hosts, groups and effective host
    variables (every host of the small example, a sample of meta-24k's 1,692), in a listing that
    no longer grows with the square of the fabric (174 MB at meta-24k before)."""
    inventory = tmp_path / "inventory.json"
    inventory.write_text(run_cli("ansible-inventory", str(fabric), "--static").stdout)
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")}
    done = subprocess.run([str(Path(ANSIBLE).with_name("ansible-inventory")), "-i", str(inventory), "--list"],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = json.loads(done.stdout)
    topology = topology_of(fabric)
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == sorted(topology.devices)
    assert listed["tier_ctsw"]["hosts"] == sorted(n for n, d in topology.devices.items() if d.role.value == "ctsw")
    names = sorted(hostvars) if fabric == SMALL else sorted(random.Random(31).sample(sorted(hostvars), 40))
    assert {name: hostvars[name] for name in names} == _variables_netgen_gives(fabric, names)
    assert len(done.stdout) < 10_000_000  # 6.8 MB at meta-24k, most of it netgen_serial on each host
