"""Deploy inventory: deploy.yaml, credentials handling, and the Nornir inventory built from both."""

from __future__ import annotations

import os

import pytest
import yaml
from pydantic import SecretStr

from netgen.deploy.inventory import (
    Credentials,
    CredentialsError,
    DeployFile,
    load_credentials,
    load_deploy,
    make_nornir,
    nornir_inventory,
)
from netgen.intent.errors import NetgenInputError
from tests.conftest import SMALL, topology_of

pytestmark = pytest.mark.render
TOPO = topology_of(SMALL)
CREDS = Credentials("netops", SecretStr("s3cret-pw"), None, "environment")


def test_defaults_without_a_deploy_file(tmp_path):
    deploy = load_deploy(tmp_path)
    assert deploy == DeployFile()
    assert deploy.rollout.ctsw_per_zone == 1 and deploy.ssh.known_hosts == "~/.ssh/known_hosts"


def test_deploy_file_errors_name_file_line_and_field(tmp_path):
    (tmp_path / "deploy.yaml").write_text("management:\n  port: 70000\nrollout:\n  wokers: 3\n")
    with pytest.raises(NetgenInputError) as caught:
        load_deploy(tmp_path)
    text = "\n".join(p.render() for p in caught.value.problems)
    assert "deploy.yaml:2:" in text and "management.port" in text
    assert "deploy.yaml:4:" in text and "did you mean 'workers'" in text


def test_inventory_hosts_groups_platforms_and_overrides(tmp_path):
    (tmp_path / "deploy.yaml").write_text(yaml.safe_dump({"management": {
        "host_pattern": "{name}.mgmt.example.net", "port": 2222,
        "devices": {"z01-rtsw001": {"host": "192.0.2.11", "port": 22}}}}))
    deploy = load_deploy(tmp_path)
    inv = nornir_inventory(TOPO, deploy, ["z01-rtsw001", "z01-ctsw01", "atsw01"], CREDS, tmp_path / "known_hosts")
    rtsw, ctsw, atsw = inv.hosts["z01-rtsw001"], inv.hosts["z01-ctsw01"], inv.hosts["atsw01"]
    assert (rtsw.hostname, rtsw.port, rtsw.platform) == ("192.0.2.11", 22, "linux")  # SONiC: bash login
    assert (ctsw.hostname, ctsw.port, ctsw.platform) == ("z01-ctsw01.mgmt.example.net", 2222, "arista_eos")
    assert [g.name for g in rtsw.groups] == ["tier_rtsw", "zone_1"]
    assert [g.name for g in atsw.groups] == ["tier_atsw", "atsw_layer"]
    extras = ctsw.connection_options["netmiko"].extras
    assert extras["ssh_strict"] is True and extras["alt_key_file"] == str(tmp_path / "known_hosts")
    assert extras["system_host_keys"] is False
    assert make_nornir(inv, 7).config.runner.options == {"num_workers": 7}


def test_host_key_checking_off_only_when_asked():
    inv = nornir_inventory(TOPO, DeployFile(), ["z01-ctsw01"], CREDS, None)
    assert inv.hosts["z01-ctsw01"].connection_options["netmiko"].extras["ssh_strict"] is False


def test_credentials_from_environment_and_never_in_repr():
    creds = load_credentials(environ={"NETGEN_USERNAME": "netops", "NETGEN_PASSWORD": "s3cret-pw"})
    assert creds.username == "netops" and creds.password.get_secret_value() == "s3cret-pw"
    assert "s3cret-pw" not in repr(creds) and "s3cret-pw" not in str(creds)
    with pytest.raises(CredentialsError, match="NETGEN_USERNAME"):
        load_credentials(environ={})
    with pytest.raises(CredentialsError, match="neither NETGEN_PASSWORD nor NETGEN_SSH_KEY"):
        load_credentials(environ={"NETGEN_USERNAME": "netops"})


def test_credentials_file_must_be_private(tmp_path):
    path = tmp_path / "creds.yaml"
    path.write_text("username: netops\npassword: s3cret-pw\n")
    path.chmod(0o644)
    with pytest.raises(CredentialsError) as caught:
        load_credentials(path)
    assert "chmod 600" in str(caught.value) and "s3cret-pw" not in str(caught.value)
    path.chmod(0o600)
    creds = load_credentials(path)
    assert creds.username == "netops" and creds.source == str(path)


def test_credentials_file_shape_errors_do_not_echo_secrets(tmp_path):
    path = tmp_path / "creds.yaml"
    path.write_text("user: netops\npassword: s3cret-pw\n")
    os.chmod(path, 0o600)
    with pytest.raises(CredentialsError) as caught:
        load_credentials(path)
    assert "s3cret-pw" not in str(caught.value)


def test_the_bundled_example_deploy_file():
    deploy = load_deploy(SMALL.parent)
    inv = nornir_inventory(TOPO, deploy, ["z01-rtsw001", "z01-rtsw002"], CREDS, None)
    assert inv.hosts["z01-rtsw001"].hostname == "192.0.2.11"
    assert inv.hosts["z01-rtsw002"].hostname == "z01-rtsw002.mgmt.small-lab.example.net"
    assert deploy.rollout.max_failures == 0 and deploy.rollout.ctsw_per_zone == 1
