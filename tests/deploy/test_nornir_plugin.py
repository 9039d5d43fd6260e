"""netgen's Nornir inventory plugin, found by entry point as any Nornir plugin is (InitNornir)."""

from __future__ import annotations

import pytest
from nornir import InitNornir

from netgen.deploy.target import TargetError
from tests.conftest import SMALL, topology_of

pytestmark = pytest.mark.render


def _init(**options):
    return InitNornir(inventory={"plugin": "NetgenInventory", "options": {"fabric": str(SMALL), **options}},
                      runner={"plugin": "threaded", "options": {"num_workers": 2}}, logging={"enabled": False})


def test_initnornir_finds_the_plugin_and_builds_netgens_hosts(monkeypatch, tmp_path):
    monkeypatch.setenv("NETGEN_USERNAME", "ops")
    monkeypatch.setenv("NETGEN_PASSWORD", "not-shown-anywhere")
    known = tmp_path / "known_hosts"
    known.write_text("")
    nr = _init(limit="z01-*", known_hosts=str(known))
    topology = topology_of(SMALL)
    assert sorted(nr.inventory.hosts) == sorted(n for n in topology.devices if n.startswith("z01-"))
    rtsw = nr.inventory.hosts["z01-rtsw001"]
    assert rtsw.hostname == "192.0.2.11" and rtsw.platform == "linux" and rtsw.username == "ops"  # deploy.yaml
    assert nr.inventory.hosts["z01-ctsw01"].hostname == "z01-ctsw01.mgmt.small-lab.example.net"
    assert nr.inventory.hosts["z01-ctsw01"].platform == "arista_eos"
    assert {g.name for g in rtsw.groups} == {"tier_rtsw", "zone_1"}
    extras = rtsw.connection_options["netmiko"].extras
    assert extras["ssh_strict"] is True and extras["alt_key_file"] == str(known)  # host keys checked
    assert rtsw.data["model"] == topology.devices["z01-rtsw001"].model


def test_missing_credentials_say_what_to_set(monkeypatch):
    monkeypatch.delenv("NETGEN_USERNAME", raising=False)
    with pytest.raises(TargetError, match="no credentials: set NETGEN_USERNAME"):
        _init(verify_host_keys=False)
