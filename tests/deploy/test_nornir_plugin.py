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


def _no_credentials_and_no_known_hosts(monkeypatch, tmp_path):
    for name in ("NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # deploy.yaml's ~/.ssh/known_hosts: not there


def test_hosts_are_listed_without_credentials_or_a_known_hosts_file(monkeypatch, tmp_path):
    """Credentials and host keys are needed to connect, not to list: the hosts come with username
    and password unset (Nornir's defaults fill them), and host keys are still checked on connecting,
    against the file deploy.yaml names."""
    _no_credentials_and_no_known_hosts(monkeypatch, tmp_path)
    nr = _init()
    assert sorted(nr.inventory.hosts) == sorted(topology_of(SMALL).devices)
    rtsw = nr.inventory.hosts["z01-rtsw001"]
    assert rtsw.username is None and rtsw.password is None and rtsw.hostname == "192.0.2.11"
    extras = rtsw.connection_options["netmiko"].extras
    assert extras["ssh_strict"] is True and extras["alt_key_file"] == str(tmp_path / ".ssh" / "known_hosts")
    nr.inventory.defaults.username, nr.inventory.defaults.password = "ops", "from-a-vault"
    connection = rtsw.get_connection_parameters("netmiko")
    assert (connection.username, connection.password) == ("ops", "from-a-vault")


def test_credentials_are_filled_when_given(monkeypatch, tmp_path):
    _no_credentials_and_no_known_hosts(monkeypatch, tmp_path)
    secrets = tmp_path / "credentials.yaml"
    secrets.write_text("username: netops\nkey_file: /keys/netops\n")
    secrets.chmod(0o600)
    rtsw = _init(limit="z01-rtsw001", credentials_file=str(secrets)).inventory.hosts["z01-rtsw001"]
    assert rtsw.username == "netops" and rtsw.password is None
    assert rtsw.connection_options["netmiko"].extras["key_file"] == "/keys/netops"


def test_errors_name_the_plugins_options_not_netgens_command_line_flags(monkeypatch, tmp_path):
    _no_credentials_and_no_known_hosts(monkeypatch, tmp_path)
    with pytest.raises(TargetError) as limit:
        _init(limit="nope*")
    with pytest.raises(TargetError) as credentials:
        _init(credentials_file=str(tmp_path / "missing.yaml"))
    monkeypatch.setenv("NETGEN_USERNAME", "ops")
    with pytest.raises(TargetError) as half:
        _init()
    assert "option limit='nope*' matches no device" in str(limit.value)
    assert "credentials_file" in str(credentials.value) and "missing.yaml" in str(credentials.value)
    assert "NETGEN_PASSWORD" in str(half.value)
    for error in (limit, credentials, half):
        assert " --" not in str(error.value), error.value
