"""The netgen.fabric collection: built with the real ansible-galaxy from this repository, installed
from its tarball, its inventory plugin read by the real ansible-inventory and its rollout playbook
run by the real ansible-playbook against emulated EOS switches (state read from the emulator)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from netgen.deploy.inventory import load_deploy
from netgen.deploy.rollout import plan_batches
from tests.conftest import SMALL, run_cli, topology_of
from tests.deploy.eos_site import PASSWORD

pytestmark = pytest.mark.deploy

BIN = Path(sys.executable).parent
ANSIBLE = {tool: shutil.which(tool, path=str(BIN)) or shutil.which(tool)
           for tool in ("ansible-galaxy", "ansible-inventory", "ansible-playbook")}
needs_ansible = pytest.mark.skipif(None in ANSIBLE.values(), reason="ansible-core is not installed")


@pytest.fixture(scope="module")
def collections(tmp_path_factory) -> Path:
    """The tarball `netgen ansible-collection` builds, installed the way users install one."""
    where = tmp_path_factory.mktemp("collection")
    result = run_cli("ansible-collection", "-o", str(where / "dist"), "--json")
    assert result.exit_code == 0, result.output
    tarball = Path(json.loads(result.stdout)["collection"])
    assert tarball.name == "netgen-fabric-0.1.0.tar.gz" and tarball.is_file()
    done = subprocess.run([ANSIBLE["ansible-galaxy"], "collection", "install", str(tarball), "-p",
                           str(where / "installed")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return where / "installed"


def _env(collections: Path, tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), "ANSIBLE_RETRY_FILES_ENABLED": "0"}


@needs_ansible
def test_the_inventory_plugin_lists_the_fabric_in_rollout_order(collections, tmp_path):
    config = tmp_path / "small.netgen.yml"
    config.write_text(f"plugin: netgen.fabric.netgen\nfabric: {os.path.relpath(SMALL.parent, tmp_path)}\n")
    done = subprocess.run([ANSIBLE["ansible-inventory"], "-i", str(config), "--list"], capture_output=True,
                          text=True, check=False, env=_env(collections, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    topology = topology_of(SMALL)
    assert sorted(listed["_meta"]["hostvars"]) == sorted(topology.devices)
    batches = plan_batches(topology, list(topology.devices), load_deploy(SMALL.parent).rollout)
    assert listed["netgen_rollout"]["hosts"] == [n for b in batches for n in b.devices]
    assert listed["tier_ctsw"]["hosts"] == sorted(n for n, d in topology.devices.items() if d.role.value == "ctsw")
    host = listed["_meta"]["hostvars"]["z02-rtsw001"]
    assert host["ansible_network_os"] == "arista.eos.eos" and host["netgen_fabric"] == str(SMALL.resolve())
    assert host["ansible_host"] == "z02-rtsw001.mgmt.small-lab.example.net"


@needs_ansible
def test_a_bad_fabric_is_a_clear_inventory_error(collections, tmp_path):
    config = tmp_path / "bad.netgen.yml"
    config.write_text("plugin: netgen.fabric.netgen\nfabric: no-such-dir\n")
    done = subprocess.run([ANSIBLE["ansible-inventory"], "-i", str(config), "--list"], capture_output=True,
                          text=True, check=False, env=_env(collections, tmp_path), cwd=tmp_path)
    assert "netgen inventory" in done.stderr and "not found" in done.stderr, done.stderr[-1500:]


@needs_ansible
def test_the_collections_playbook_rolls_out_through_its_inventory_plugin(collections, fresh, tmp_path):
    """The collection's own playbook (netgen.fabric.rollout) and role, hosts from its inventory plugin:
    check mode changes nothing, then the real run converges the switches."""
    names = fresh.names[:2]
    config = tmp_path / "site.netgen.yml"
    config.write_text(f"plugin: netgen.fabric.netgen\nfabric: {fresh.fabric}\nlimit: {','.join(names)}\n")
    extra = tmp_path / "vars.json"
    extra.write_text(run_cli("ansible-inventory", str(fresh.fabric), "--limit", ",".join(names),
                             "--playbook-vars").stdout)
    command = [ANSIBLE["ansible-playbook"], "-i", str(config), "netgen.fabric.rollout", "-e", f"@{extra}"]
    before = {n: fresh.running(n) for n in names}
    done = subprocess.run([*command, "--check"], capture_output=True, text=True, check=False,
                          env=_env(collections, tmp_path), cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert {n: fresh.running(n) for n in names} == before and PASSWORD not in done.stdout
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=_env(collections, tmp_path),
                          cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert done.stdout.count("changed: [") == 2
    for name in names:
        assert fresh.commits(name) == ["commit-timer"]
        assert f"hostname {name}" in fresh.running(name) and "router bgp" in fresh.running(name)
