"""What a deploy refuses before it connects: a switch reached at a management address the intent
takes away from it (the SSH session would drop in the middle of the change)."""

from __future__ import annotations

import json

import pytest
import yaml

from netgen.deploy.target import TargetError, load_context, prepare_target
from netgen.intent.errors import NetgenInputError
from tests.conftest import run_cli

pytestmark = pytest.mark.render


@pytest.fixture(autouse=True)
def credentials(monkeypatch):
    monkeypatch.setenv("NETGEN_USERNAME", "ops")
    monkeypatch.setenv("NETGEN_PASSWORD", "not-used")  # nothing connects: every check here is before SSH


def _site(small_data, write_fabric, hosts):
    """The small example (z01-rtsw002 gets 192.168.1.2 by position) with deploy.yaml host overrides."""
    path = write_fabric(small_data)
    deploy = {"management": {"host_pattern": "{name}.mgmt.example.net",
                             "devices": {name: {"host": host} for name, host in hosts.items()}}}
    (path.parent / "deploy.yaml").write_text(yaml.safe_dump(deploy))
    return path


@pytest.mark.parametrize(("host", "refused"), [
    ("192.168.1.7", True),  # inside services.management.prefix, not the switch's address: it would move
    ("192.168.1.2", False),  # the address the intent gives it
    ("198.51.100.7", False),  # outside the management prefix: reached some other way (console server, lab)
    ("z01-rtsw002.oob.example.net", False),  # a DNS name: left to the SSH client
])
def test_a_switch_reached_at_an_address_the_intent_moves_is_refused(small_data, write_fabric, host, refused):
    path = _site(small_data, write_fabric, {"z01-rtsw002": host})
    _, ctx = load_context(path)
    kwargs = {"limit": "z01-rtsw002", "render": False, "verify_host_keys": False}
    if refused:
        with pytest.raises(TargetError, match=r"z01-rtsw002 is reached at 192\.168\.1\.7, and the intent gives it"
                                              r" 192\.168\.1\.2"):
            prepare_target(ctx, path, **kwargs)
    else:
        assert prepare_target(ctx, path, **kwargs).names == ["z01-rtsw002"]


def test_only_the_selected_switches_are_checked_and_the_cli_exits_2(small_data, write_fabric):
    path = _site(small_data, write_fabric, {"z01-rtsw002": "192.168.1.7"})
    _, ctx = load_context(path)
    assert prepare_target(ctx, path, limit="z01-rtsw001", render=False, verify_host_keys=False).names == [
        "z01-rtsw001"]
    result = run_cli("deploy", str(path), "--limit", "z01-rtsw002", "--dry-run", "--json")
    assert result.exit_code == 2, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert "would lose the address the deploy reaches them at" in error and "services.management.devices" in error


def test_what_only_reads_or_restores_is_not_refused(small_data, write_fabric):
    # netgen check / netgen recover: the switch keeps the address they reach it at
    path = _site(small_data, write_fabric, {"z01-rtsw002": "192.168.1.7"})
    _, ctx = load_context(path)
    target = prepare_target(ctx, path, limit="z01-rtsw002", render=False, verify_host_keys=False, changes=False)
    assert target.names == ["z01-rtsw002"]


def test_without_a_management_section_nothing_is_refused(small_data, write_fabric):
    del small_data["services"]
    path = _site(small_data, write_fabric, {"z01-rtsw002": "192.168.1.7"})
    _, ctx = load_context(path)
    assert prepare_target(ctx, path, limit="z01-rtsw002", render=False, verify_host_keys=False).names == [
        "z01-rtsw002"]


def test_the_source_of_truth_gives_hosts_and_takes_switches_out_of_service(small_data, write_fabric):
    """deploy.sot.yaml (written by `netgen sot pull`): its address where deploy.yaml gives the switch
    no host of its own; a switch whose status is not Active or Staged is left out of a change."""
    path = _site(small_data, write_fabric, {"z01-rtsw003": "198.51.100.3"})
    (path.parent / "deploy.sot.yaml").write_text(yaml.safe_dump({"source": {"backend": "nautobot"}, "devices": {
        "z01-rtsw001": {"host": "192.168.1.1", "serial": "JPE1", "status": "Active"},
        "z01-rtsw002": {"host": "192.168.1.2", "status": "Offline"},
        "z01-rtsw003": {"host": "192.168.1.3", "status": "Staged"}}}))
    _, ctx = load_context(path)
    kwargs = {"limit": "z01-rtsw00*", "render": False, "verify_host_keys": False}
    target = prepare_target(ctx, path, **kwargs)
    assert target.names == ["z01-rtsw001", "z01-rtsw003", "z01-rtsw004"]
    assert target.excluded == {"z01-rtsw002": "deploy.sot.yaml: status Offline (a change needs Active or Staged)"}
    hosts = {n: d.host for n, d in target.deploy.management.devices.items()}
    assert hosts == {"z01-rtsw001": "192.168.1.1", "z01-rtsw002": "192.168.1.2", "z01-rtsw003": "198.51.100.3"}
    # reading is not a change: `netgen check` still reaches the switch that is out of service
    assert "z01-rtsw002" in prepare_target(ctx, path, changes=False, **kwargs).names
    (path.parent / "deploy.sot.yaml").write_text("devices: {z01-rtsw001: {hots: 192.168.1.1}}\n")
    with pytest.raises(NetgenInputError) as raised:  # a bad file names itself and the field
        prepare_target(ctx, path, **kwargs)
    problem = raised.value.problems[0].as_dict()
    assert problem["file"].endswith("deploy.sot.yaml") and "hots" in json.dumps(problem)
