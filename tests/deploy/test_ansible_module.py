"""The netgen_deploy Ansible module and `netgen rollout`'s side of Ansible, without a device: the
module's input errors and result, the inventory real Ansible reads, the event stream turned into a
report, the secrets kept out of extra vars and ansible-runner's artifacts, and the module file's
contract (argument spec, documentation, role). Nothing here opens a connection: `deploy_device`
is replaced wherever `run()` could reach it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.vars.manager import VariableManager
from pydantic import SecretStr

from netgen.checks import DesignContext, Severity
from netgen.deploy import ansible_module
from netgen.deploy.ansible_inventory import ansible_inventory, yaml_inventory
from netgen.deploy.ansible_module import _credentials, _with_access, result_of, run
from netgen.deploy.ansible_rollout import (
    AnsibleRun,
    EventCollector,
    RolloutRequest,
    _blank_secrets,
    _finish,
    extravars,
)
from netgen.deploy.inventory import Credentials, RolloutPolicy, device_access, load_deploy
from netgen.deploy.lock import open_store
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import DeviceOutcome, RolloutReport, Status
from netgen.deploy.rollout import Batch
from netgen.deploy.target import DeployTarget, TargetError, load_context, prepare_target
from netgen.intent import load_fabric
from netgen.lock.lease import Lease
from tests.conftest import ROOT, SMALL, findings_of, topology_of

pytestmark = pytest.mark.render

ROLE = ROOT / "roles" / "netgen_deploy"
MODULE_FILE = ROLE / "library" / "netgen_deploy.py"
PASSWORD = "hunter2-Never-Shown"  # must never appear in any result, message or extra var
USERNAME = "ops-login-7"
CREDENTIAL_ENV = ("NETGEN_USERNAME", "NETGEN_PASSWORD", "NETGEN_SSH_KEY")


def _module_file() -> ModuleType:
    spec = importlib.util.spec_from_file_location("netgen_deploy_module_file", MODULE_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODULE = _module_file()
SPEC: dict[str, dict[str, Any]] = MODULE.ARGUMENT_SPEC


def params(**overrides: Any) -> dict[str, Any]:
    """What AnsibleModule hands `run()`: every ARGUMENT_SPEC key, with its default unless given."""
    assert set(overrides) <= set(SPEC), set(overrides) - set(SPEC)
    values = {key: spec.get("default") for key, spec in SPEC.items()}
    return {**values, "fabric": str(SMALL), "device": "z01-rtsw001", **overrides}


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[DeployTarget, str, DeployOptions]]:
    """run() never reaches a device here: deploy_device records its call and reports a good outcome.
    The NETGEN_* credential variables are cleared so only the module's arguments count."""
    calls: list[tuple[DeployTarget, str, DeployOptions]] = []

    def record(target: DeployTarget, name: str, options: DeployOptions) -> DeviceOutcome:
        calls.append((target, name, options))
        status = Status.DRY_RUN if options.dry_run else Status.CHANGED
        return DeviceOutcome(name, "rtsw", 1, "sonic", 1, status=status, changes=2, diff="+line\n")

    monkeypatch.setattr(ansible_module, "deploy_device", record)
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    return calls


@pytest.fixture
def known_hosts(tmp_path: Path) -> Path:
    path = tmp_path / "known_hosts"
    path.write_text("192.0.2.11 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE5ldGdlbiB0ZXN0IGtleSBub3QgcmVhbA==\n")
    return path


# --- run(): input errors are failed results that say what to fix, never exceptions, never a secret ---

LOGIN = {"username": USERNAME, "password": PASSWORD}
CaseSetup = Callable[[Path, Callable[..., Path], dict[str, Any]], dict[str, Any]]


def _missing_fabric(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    return {"fabric": str(tmp / "nowhere" / "fabric.yaml"), **LOGIN}


def _input_error_fabric(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    data["mtu"] = "jumbo"
    return {"fabric": str(write_fabric(data)), **LOGIN}


def _bad_deploy_yaml(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    path = write_fabric(data)
    (path.parent / "deploy.yaml").write_text("ssh:\n  connect_timeout_s: -1\n")
    return {"fabric": str(path), **LOGIN}


def _design_error_fabric(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    data["aggregation"]["expected_oversubscription"] = "1:2"  # the small example's CTSWs really are 1:8
    path = write_fabric(data)
    assert any(f.code == "NG102" and f.severity is Severity.ERROR for f in findings_of(path))
    return {"fabric": str(path), **LOGIN}


def _open_credentials_file(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    path = tmp / "credentials.yaml"
    path.write_text(f"username: {USERNAME}\npassword: {PASSWORD}\n")
    path.chmod(0o644)
    return {"credentials_file": str(path), "verify_host_keys": False}


def _missing_known_hosts(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
    return {**LOGIN, "known_hosts": str(tmp / "no_known_hosts"), "verify_host_keys": True}


def _change_id(change_id: str) -> CaseSetup:
    def setup(tmp: Path, write_fabric: Callable[..., Path], data: dict[str, Any]) -> dict[str, Any]:
        (tmp / "known_hosts").write_text("")
        return {**LOGIN, "known_hosts": str(tmp / "known_hosts"), "change_id": change_id}
    return setup


INPUT_ERRORS: list[tuple[str, CaseSetup, list[str]]] = [
    ("device close to a real one", lambda tmp, wf, data: {"device": "z01-rtsw01", **LOGIN},
     ["'z01-rtsw01' is not in", str(SMALL), "did you mean", "z01-rtsw001", "netgen ansible-inventory"]),
    ("device like nothing", lambda tmp, wf, data: {"device": "no-such-switch", **LOGIN},
     ["'no-such-switch' is not in", str(SMALL), "netgen ansible-inventory"]),
    ("fabric file missing", _missing_fabric, ["{tmp}/nowhere/fabric.yaml", "not found"]),
    ("fabric input error", _input_error_fabric, ["{tmp}/fabric0/fabric.yaml", "mtu", "integer"]),
    ("deploy.yaml input error", _bad_deploy_yaml, ["{tmp}/fabric0/deploy.yaml", "connect_timeout_s"]),
    ("design error", _design_error_fabric, ["design error", "NG102", "expected_oversubscription"]),
    ("no credentials at all", lambda tmp, wf, data: {"verify_host_keys": False},
     ["no credentials", "NETGEN_USERNAME", "NETGEN_PASSWORD"]),
    ("username without password or key", lambda tmp, wf, data: {"username": USERNAME, "verify_host_keys": False},
     ["username given without password or ssh_key_file"]),
    ("password without username", lambda tmp, wf, data: {"password": PASSWORD, "verify_host_keys": False},
     ["without username"]),
    ("key file without username", lambda tmp, wf, data: {"ssh_key_file": "/keys/id_netgen"}, ["without username"]),
    ("credentials file readable by others", _open_credentials_file, ["readable by others", "chmod 600"]),
    ("known_hosts not found", _missing_known_hosts, ["known_hosts file {tmp}/no_known_hosts not found"]),
    ("change id with capitals", _change_id("CR-1234"), ["change id 'CR-1234'", "lowercase letters, digits and '-'"]),
    ("change id too long", _change_id("c" * 33), ["change id", "1-32"]),
    ("change id with shell characters", _change_id("cr-1;reboot"), ["change id 'cr-1;reboot'", "1-32"]),
    ("change id with underscore", _change_id("cr_1"), ["change id 'cr_1'", "1-32"]),
]


@pytest.mark.parametrize(("setup", "expected"), [(s, e) for _, s, e in INPUT_ERRORS],
                         ids=[case for case, _, _ in INPUT_ERRORS])
@pytest.mark.parametrize("check_mode", [True, False], ids=["check", "apply"])
def test_input_errors_fail_with_the_problem_and_fix_never_a_secret(setup, expected, check_mode, pushes, tmp_path,
                                                                   write_fabric, small_data):
    result = run(params(**setup(tmp_path, write_fabric, small_data)), check_mode)
    assert result["failed"] is True and result["changed"] is False
    assert isinstance(result["msg"], str) and "\n" not in result["msg"]
    for fragment in expected:
        assert fragment.format(tmp=tmp_path) in result["msg"]
    assert PASSWORD not in json.dumps(result)
    assert pushes == []  # refused before any device is reached


@pytest.mark.parametrize(("override", "argument"), [({"host": "bad host!"}, "host"), ({"port": 70000}, "port")])
def test_a_bad_host_or_port_override_names_the_argument(override, argument, pushes):
    result = run(params(**LOGIN, verify_host_keys=False, **override), True)
    assert result["failed"] is True and pushes == []
    assert re.search(rf"\b{argument}\b", result["msg"]), result["msg"]


@pytest.mark.parametrize("timeout", [5, -5, 7200, 0])
def test_a_confirm_timeout_outside_the_policy_range_is_refused(timeout, pushes):
    result = run(params(**LOGIN, verify_host_keys=False, confirm_timeout=timeout), False)
    assert pushes == []
    assert result["failed"] is True and "confirm_timeout" in result["msg"]


@pytest.mark.parametrize("timeout", [0, -1, 3601])
def test_a_post_check_timeout_outside_its_range_is_refused(timeout, pushes):
    result = run(params(**LOGIN, verify_host_keys=False, post_check_timeout=timeout), False)
    assert pushes == []
    assert result["failed"] is True and "post_check_timeout" in result["msg"]


def test_check_mode_is_a_dry_run_with_deploy_yaml_defaults(pushes, known_hosts):
    result = run(params(**LOGIN, known_hosts=str(known_hosts)), True)
    [(target, name, options)] = pushes
    assert name == "z01-rtsw001" and target.names == ["z01-rtsw001"]
    assert options.dry_run is True
    assert re.fullmatch(r"ansible-\d{8}-\d{6}", options.change_id)
    # inventory/small/deploy.yaml: confirm_timeout_s 300, command_timeout_s 120; the module's default 60 s
    assert (options.confirm_timeout_s, options.command_timeout_s, options.post_check_timeout_s) == (300, 120.0, 60.0)
    assert target.known_hosts == known_hosts
    assert device_access(target.deploy, target.ctx.topology.devices[name]) == ("192.0.2.11", 22)
    assert target.credentials.username == USERNAME and target.credentials.source == "module arguments"
    assert target.credentials.password is not None and target.credentials.password.get_secret_value() == PASSWORD
    assert result["changed"] is True and result["status"] == "dry_run" and "failed" not in result
    assert PASSWORD not in json.dumps(result)


def test_arguments_reach_the_push(pushes, tmp_path):
    fabric_dir = str(SMALL.parent)  # the documented "file (or its directory)"
    result = run(params(fabric=fabric_dir, username=USERNAME, ssh_key_file="~/keys/id_netgen", change_id="cr-1234",
                        confirm_timeout=600, post_check_timeout=15.5, host="198.51.100.9", port=2222,
                        verify_host_keys=False), False)
    [(target, name, options)] = pushes
    assert (options.change_id, options.dry_run, options.confirm_timeout_s, options.post_check_timeout_s) == (
        "cr-1234", False, 600, 15.5)
    assert device_access(target.deploy, target.ctx.topology.devices[name]) == ("198.51.100.9", 2222)
    assert target.known_hosts is None
    assert target.credentials.password is None
    assert target.credentials.key_file == Path.home() / "keys" / "id_netgen"
    assert result["changed"] is True and result["status"] == "changed"


@pytest.mark.parametrize(("given", "expected"), [
    ({}, None),
    ({"username": USERNAME, "password": PASSWORD}, (USERNAME, PASSWORD, None)),
    ({"username": USERNAME, "ssh_key_file": "/keys/id_netgen"}, (USERNAME, None, Path("/keys/id_netgen"))),
    ({"username": USERNAME, "password": PASSWORD, "ssh_key_file": "/k"}, (USERNAME, PASSWORD, Path("/k"))),
    ({"username": USERNAME}, "username given without password or ssh_key_file"),
    ({"username": USERNAME, "password": ""}, "username given without password or ssh_key_file"),
    ({"password": PASSWORD}, "given without username"),
    ({"ssh_key_file": "/keys/id_netgen"}, "given without username"),
])
def test_credentials_from_module_arguments(given, expected):
    if isinstance(expected, str):
        with pytest.raises(TargetError, match=expected) as info:
            _credentials(given)
        assert PASSWORD not in str(info.value)
        return
    credentials = _credentials(given)
    if expected is None:
        assert credentials is None
        return
    assert credentials is not None
    password = credentials.password.get_secret_value() if credentials.password else None
    assert (credentials.username, password, credentials.key_file) == expected
    assert credentials.source == "module arguments" and PASSWORD not in repr(credentials)


# --- result_of(): Ansible's changed / failed / msg for each outcome ---

RESULTS = [
    # status, changes, check mode, diff, error, changed, failed, msg fragments
    (Status.DRY_RUN, 5, True, "-old\n+new\n", None, True, False, ["check mode", "5 change(s) would be made"]),
    (Status.DRY_RUN, 0, True, "", None, False, False, ["check mode", "0 change(s)"]),
    (Status.UNCHANGED, 0, True, "", None, False, False, ["already runs the intent"]),
    (Status.UNCHANGED, 0, False, "", None, False, False, ["already runs the intent"]),
    (Status.CHANGED, 3, False, "+a\n+b\n+c\n", None, True, False, ["3 change(s) committed", "confirmed"]),
    (Status.ROLLED_BACK, 3, False, "+a\n", "post-check bgp: 2 sessions down", False, True, ["rolled_back"]),
    (Status.FAILED, 0, False, "", "pre-check model: hostname is z9-rtsw001", False, True, ["failed"]),
    (Status.FAILED, 0, True, "", "connect: NetmikoAuthenticationException", False, True, ["failed"]),
    # an unconfirmed commit may still be applied on the device: changed and failed
    (Status.UNCONFIRMED, 3, False, "+a\n", "confirm: connection lost", True, True, ["unconfirmed"]),
    (Status.FAILED, 0, False, "", None, False, True, ["failed", "no detail recorded"]),
    (Status.NOT_TOUCHED, 0, False, "", "never reached", False, True, ["not_touched"]),
]


@pytest.mark.parametrize(("status", "changes", "check_mode", "diff", "error", "changed", "failed", "fragments"),
                         RESULTS, ids=[f"{r[0].value}-{r[1]}-{'check' if r[2] else 'apply'}" for r in RESULTS])
def test_result_of_each_outcome(status, changes, check_mode, diff, error, changed, failed, fragments):
    outcome = DeviceOutcome("z01-rtsw001", "rtsw", 1, "sonic", 1, status=status, stage="post_checks",
                            changes=changes, diff=diff, error=error)
    result = result_of(outcome, check_mode)
    assert result["changed"] is changed
    assert result.get("failed", False) is failed
    assert "None" not in result["msg"]
    for fragment in [*fragments, *([error] if failed and error else [])]:
        assert fragment in result["msg"]
    assert result["status"] == status.value and result["changes"] == changes
    assert result["netgen"] == outcome.as_dict()
    assert result["netgen"]["status"] == status.value and result["netgen"]["device"] == "z01-rtsw001"
    if diff:
        assert result["diff"] == {"prepared": diff}
    else:
        assert "diff" not in result
    json.dumps(result)  # what the module returns must be JSON


# --- _with_access(): the inventory's ansible_host / ansible_port for one device ---


@pytest.fixture(scope="module")
def small_ctx() -> DesignContext:
    return load_context(SMALL)[1]


def small_target(ctx: DesignContext, limit: str | None = None, **kwargs: Any) -> DeployTarget:
    credentials = Credentials(USERNAME, SecretStr(PASSWORD), Path("/keys/id_netgen"), "test")
    options: dict[str, Any] = {"verify_host_keys": False, **kwargs}
    return prepare_target(ctx, SMALL, limit=limit, credentials=credentials, render=False, **options)


@pytest.mark.parametrize(("name", "host", "port", "expected"), [
    ("z01-rtsw001", "198.51.100.7", None, ("198.51.100.7", 22)),
    ("z01-rtsw001", None, 2222, ("192.0.2.11", 2222)),  # deploy.yaml's host override is kept
    ("z01-ctsw01", "198.51.100.8", 2200, ("198.51.100.8", 2200)),
    ("z01-ctsw01", None, 2200, ("z01-ctsw01.mgmt.small-lab.example.net", 2200)),
    ("atsw02", "atsw02.oob.example.net", None, ("atsw02.oob.example.net", 22)),
])
@pytest.mark.parametrize("limit", [None, "z01-*,atsw02"])
def test_access_override_applies_to_that_device_only(name, host, port, expected, limit, small_ctx):
    target = small_target(small_ctx, limit)
    devices = small_ctx.topology.devices
    before = {n: device_access(target.deploy, d) for n, d in devices.items()}
    changed = _with_access(target, name, host, port)
    after = {n: device_access(changed.deploy, d) for n, d in devices.items()}
    assert after[name] == expected
    assert {n: a for n, a in after.items() if n != name} == {n: b for n, b in before.items() if n != name}
    # the original target is not modified, and nothing but the access changed
    assert {n: device_access(target.deploy, d) for n, d in devices.items()} == before
    assert (changed.ctx, changed.names, changed.credentials, changed.known_hosts, changed.files) == (
        target.ctx, target.names, target.credentials, target.known_hosts, target.files)
    assert changed.deploy.ssh == target.deploy.ssh and changed.deploy.rollout == target.deploy.rollout


@pytest.mark.parametrize(("host", "port"), [(None, None), ("", None), (None, 0)])
def test_no_access_override_leaves_the_target(host, port, small_ctx):
    target = small_target(small_ctx, "z01-rtsw001")
    assert _with_access(target, "z01-rtsw001", host, port) is target


# --- yaml_inventory(): the shape ansible-runner writes, read by real Ansible ---


@pytest.fixture(scope="module")
def script_inventory() -> dict[str, Any]:
    topology = topology_of(SMALL)
    return ansible_inventory(topology, load_deploy(SMALL.parent), list(topology.devices))


def test_yaml_inventory_keeps_hosts_groups_order_and_vars(script_inventory):
    inventory = yaml_inventory(script_inventory)
    assert list(inventory) == ["all"]
    hosts, children = inventory["all"]["hosts"], inventory["all"]["children"]
    hostvars = script_inventory["_meta"]["hostvars"]
    assert sorted(hosts) == sorted(topology_of(SMALL).devices)
    assert hosts == hostvars  # every host with its variables
    rollout = script_inventory["netgen_rollout"]["hosts"]
    assert list(hosts) == rollout
    assert [hosts[n]["netgen_batch_label"] for n in rollout[:2]] == ["canary rtsw", "canary ctsw"]
    assert hosts["z01-rtsw001"]["ansible_host"] == "192.0.2.11"
    groups = [g for g in script_inventory if g not in ("_meta", "all")]
    assert set(children) == set(groups) == set(script_inventory["all"]["children"])
    for group in groups:
        assert list(children[group]["hosts"]) == script_inventory[group]["hosts"], group
        assert set(children[group]["hosts"].values()) == {None}
        assert children[group].get("vars") == script_inventory[group].get("vars"), group
    assert list(children["netgen_rollout"]["hosts"]) == rollout
    assert children["netgen_rollout"]["vars"]["netgen_serial"] == script_inventory["netgen_rollout"]["vars"][
        "netgen_serial"]
    assert list(children["tier_atsw"]["hosts"]) == ["atsw01", "atsw02"]


def test_real_ansible_reads_the_inventory_in_rollout_order(script_inventory, tmp_path):
    path = tmp_path / "netgen.json"
    path.write_text(json.dumps(yaml_inventory(script_inventory), indent=1))
    loader = DataLoader()
    inventory = InventoryManager(loader=loader, sources=[str(path)])
    rollout = script_inventory["netgen_rollout"]["hosts"]
    assert [h.name for h in inventory.get_hosts("netgen_rollout")] == rollout
    assert [h.name for h in inventory.get_hosts("netgen_rollout", order="inventory")] == rollout
    assert [h.name for h in inventory.get_hosts("zone_2")] == script_inventory["zone_2"]["hosts"]
    assert {h.name for h in inventory.get_hosts("all")} == set(rollout)
    host = inventory.get_host("z01-rtsw001")
    assert host is not None and host.vars["ansible_host"] == "192.0.2.11"
    variables = VariableManager(loader=loader, inventory=inventory).get_vars(host=host)
    assert variables["ansible_host"] == "192.0.2.11" and variables["netgen_batch_label"] == "canary rtsw"
    assert variables["netgen_serial"] == script_inventory["netgen_rollout"]["vars"]["netgen_serial"]  # group var


# --- EventCollector: ansible-runner's events into the report ---

MODULE_OUTCOME = {
    "device": "z01-rtsw001", "role": "rtsw", "zone": 1, "nos": "sonic", "batch": 1, "status": "rolled_back",
    "stage": "post_checks", "changes": 4, "diff": "+ip route 0.0.0.0/0\n",
    "checks": [{"name": "VerifyBgpEstablished", "result": "failure"}], "error": "post-check: 2 sessions down",
    "commit_started": 1000.0, "commit_ended": 1030.5, "seconds": 41.0, "stage_seconds": {"commit": 2.5},
}


def _event(kind: str, host: str | None = "z01-rtsw001", res: dict[str, Any] | None = None,
           task: str = "netgen deploy z01-rtsw001", action: str = "netgen_deploy",
           ignore_errors: bool = False) -> dict[str, Any]:
    return {"event": kind, "uuid": "00000000-0000-0000-0000-000000000000", "counter": 7,
            "event_data": {"host": host, "task": task, "task_action": action, "res": res or {},
                           "ignore_errors": ignore_errors}}


def _report() -> RolloutReport:
    report = RolloutReport("small-lab", "cr-1", False, 0.0)
    for name, role, zone, nos, batch in (("z01-rtsw001", "rtsw", 1, "sonic", 1), ("z01-ctsw01", "ctsw", 1, "eos", 2),
                                         ("atsw01", "atsw", None, "eos", 3)):
        report.devices[name] = DeviceOutcome(name, role, zone, nos, batch)
    return report


VALIDATE = {"task": "Validating arguments against arg spec 'main'", "action": "ansible.builtin.validate_argument_spec"}
EVENTS = [
    ("module result ok", [_event("runner_on_ok", res={"changed": True, "netgen": {
        **MODULE_OUTCOME, "status": "changed", "error": None}})],
     {"z01-rtsw001": (Status.CHANGED, None)}, ["z01-rtsw001"]),
    ("module result failed", [_event("runner_on_failed", res={"failed": True, "msg": "rolled_back: ...",
                                                              "netgen": MODULE_OUTCOME})],
     {"z01-rtsw001": (Status.ROLLED_BACK, "post-check: 2 sessions down")}, ["z01-rtsw001"]),
    ("another task failed", [_event("runner_on_failed", host="z01-ctsw01", task=VALIDATE["task"],
                                    action=VALIDATE["action"],
                                    res={"failed": True, "msg": "missing required arguments: netgen_fabric"})],
     {"z01-ctsw01": (Status.FAILED, f"{VALIDATE['task']!r}: missing required arguments: netgen_fabric")},
     ["z01-ctsw01"]),
    ("module refused its input", [_event("runner_on_failed", host="atsw01", task="netgen deploy atsw01",
                                         res={"failed": True, "changed": False, "msg": "change id 'X': use 1-32"})],
     {"atsw01": (Status.FAILED, "'netgen deploy atsw01': change id 'X': use 1-32")}, ["atsw01"]),
    ("unreachable", [_event("runner_on_unreachable", res={"unreachable": True, "msg": "Failed to connect"})],
     {"z01-rtsw001": (Status.FAILED, "Failed to connect")}, ["z01-rtsw001"]),
    ("unreachable without msg", [_event("runner_on_unreachable", res={"unreachable": True})],
     {"z01-rtsw001": (Status.FAILED, "runner_on_unreachable")}, ["z01-rtsw001"]),
    ("ok task other than the module", [_event("runner_on_ok", task=VALIDATE["task"], action=VALIDATE["action"],
                                              res={"changed": False, "msg": "The arg spec validation passed"})],
     {}, []),
    ("ignored failure", [_event("runner_on_failed", res={"failed": True, "msg": "probe failed"},
                                task="optional probe", action="ansible.builtin.command", ignore_errors=True)],
     {}, []),
    ("unknown host", [_event("runner_on_ok", host="z09-rtsw999", res={"netgen": MODULE_OUTCOME}),
                      _event("runner_on_failed", host="z09-rtsw999", res={"msg": "boom"})], {}, []),
    ("other events", [_event("runner_on_skipped", res={"netgen": MODULE_OUTCOME}),
                      _event("runner_on_start"), _event("playbook_on_stats", host=None),
                      _event("playbook_on_task_start", res={"netgen": MODULE_OUTCOME}),
                      {"event": "verbose", "stdout": "ERROR! nothing"}, {"event": "runner_on_ok"},
                      {"event": "runner_on_ok", "event_data": None}, {}], {}, []),
    ("two results for one host", [
        _event("runner_on_ok", res={"changed": True, "netgen": {**MODULE_OUTCOME, "status": "changed",
                                                                "error": None}}),
        _event("runner_on_failed", task="notify", action="ansible.builtin.uri", res={"msg": "webhook down"}),
        _event("runner_on_ok", host="atsw01", res={"netgen": {**MODULE_OUTCOME, "device": "atsw01",
                                                              "status": "unchanged", "error": None}})],
     {"z01-rtsw001": (Status.FAILED, "'notify': webhook down"), "atsw01": (Status.UNCHANGED, None)},
     ["z01-rtsw001", "atsw01"]),
]


@pytest.mark.parametrize(("events", "expected", "progressed"), [e[1:] for e in EVENTS], ids=[e[0] for e in EVENTS])
def test_event_collector(events, expected, progressed):
    report = _report()
    seen: list[str] = []
    collector = EventCollector(report, lambda outcome: seen.append(outcome.device))
    assert [collector(event) for event in events] == [True] * len(events)
    assert seen == progressed
    assert set(report.devices) == {"z01-rtsw001", "z01-ctsw01", "atsw01"}
    for name, outcome in report.devices.items():
        status, error = expected.get(name, (Status.NOT_TOUCHED, None))
        assert outcome.status is status, name
        if error is None:
            assert outcome.error is None, name
        else:
            assert outcome.error is not None and error in outcome.error, (name, outcome.error)
        if status is Status.NOT_TOUCHED:
            assert outcome.stage == "" and outcome.changes == 0


def test_a_no_log_module_result_is_not_taken_as_success():
    report = _report()
    ticks: list[str] = []
    collector = EventCollector(report, lambda outcome: ticks.append(outcome.device))
    censored = {"censored": "the output has been hidden due to the fact that 'no_log: true' was specified",
                "changed": True}
    assert collector(_event("runner_on_ok", res=censored)) is True
    outcome = report.devices["z01-rtsw001"]
    assert outcome.status is Status.FAILED and "no_log" in (outcome.error or "")
    assert ticks == ["z01-rtsw001"]


def test_event_collector_copies_the_module_outcome():
    report = _report()
    collector = EventCollector(report, None)  # no progress hook: still collects
    assert collector(_event("runner_on_failed", res={"failed": True, "netgen": MODULE_OUTCOME})) is True
    outcome = report.devices["z01-rtsw001"]
    assert outcome.status is Status.ROLLED_BACK and outcome.stage == "post_checks" and outcome.changes == 4
    assert outcome.diff == MODULE_OUTCOME["diff"] and outcome.checks == MODULE_OUTCOME["checks"]
    assert (outcome.commit_started, outcome.commit_ended, outcome.seconds) == (1000.0, 1030.5, 41.0)
    assert outcome.stage_seconds == {"commit": 2.5}
    assert (outcome.role, outcome.batch) == ("rtsw", 1)  # the report's own fields stay


def test_a_failed_task_after_the_module_keeps_the_module_stage():
    report = _report()
    collector = EventCollector(report, None)
    collector(_event("runner_on_ok", res={"netgen": {**MODULE_OUTCOME, "status": "changed", "error": None}}))
    collector(_event("runner_on_failed", task="notify", action="ansible.builtin.uri", res={"msg": "webhook down"}))
    outcome = report.devices["z01-rtsw001"]
    assert outcome.status is Status.FAILED and outcome.stage == "post_checks"
    assert outcome.error == "ansible task 'notify': webhook down"


# --- _finish(): batches, and why the rollout stopped ---

BATCHES = [Batch(1, "canary rtsw", ("z01-rtsw001",)), Batch(2, "canary ctsw", ("z01-ctsw01",)),
           Batch(3, "atsw 1", ("atsw01",))]
SYNTAX_TAIL = "PLAYBOOK: rollout.yml\nERROR! 'serail' is not a valid attribute for a Play\n"
T, U, C, D = Status.NOT_TOUCHED, Status.UNCHANGED, Status.CHANGED, Status.DRY_RUN
FINISHES = [
    # statuses per batch, rc, tail, stopped, failed per batch, reason fragments (absent fragments after "!")
    ("canary failed", [Status.ROLLED_BACK, T, T], 2, "", True, [["z01-rtsw001"], [], []],
     ["batch 1 (canary rtsw)", "z01-rtsw001", "later batches were not touched"]),
    ("second canary failed", [C, Status.FAILED, T], 2, "", True, [[], ["z01-ctsw01"], []],
     ["batch 2 (canary ctsw)", "z01-ctsw01", "later batches were not touched"]),
    ("unconfirmed counts as failed", [Status.UNCONFIRMED, T, T], 2, "", True, [["z01-rtsw001"], [], []],
     ["batch 1 (canary rtsw)", "later batches were not touched"]),
    ("last batch failed", [C, C, Status.FAILED], 2, "", True, [[], [], ["atsw01"]],
     ["batch 3 (atsw 1)", "atsw01", "!later batches"]),
    ("all good", [C, U, C], 0, "PLAY RECAP ok", False, [[], [], []], []),
    ("check mode", [D, D, U], 0, "", False, [[], [], []], []),
    ("playbook syntax error", [T, T, T], 4, SYNTAX_TAIL, True, [[], [], []],
     ["rc 4", "never reached 3 device(s)", "ERROR! 'serail' is not a valid attribute for a Play"]),
    ("good devices but ansible failed", [C, C, C], 2, "fatal: [localhost]: FAILED!\n\n", True, [[], [], []],
     ["rc 2", "fatal: [localhost]: FAILED!", "!never reached"]),
    ("play ended early without a failure", [C, T, T], 0, "", True, [[], [], []], ["never reached 2 device(s)"]),
]


@pytest.mark.parametrize(("statuses", "rc", "tail", "stopped", "failed", "reason"), [f[1:] for f in FINISHES],
                         ids=[f[0] for f in FINISHES])
def test_finish(statuses, rc, tail, stopped, failed, reason):
    report = _report()
    for batch, status in zip(BATCHES, statuses, strict=True):
        report.devices[batch.devices[0]].status = status
    _finish(report, BATCHES, AnsibleRun(status="failed" if rc else "successful", rc=rc, tail=tail))
    assert report.stopped is stopped
    assert [b["failed"] for b in report.batches] == failed
    assert [(b["index"], b["label"], b["devices"]) for b in report.batches] == [
        (1, "canary rtsw", ["z01-rtsw001"]), (2, "canary ctsw", ["z01-ctsw01"]), (3, "atsw 1", ["atsw01"])]
    for fragment in reason:
        if fragment.startswith("!"):
            assert fragment[1:] not in report.stopped_reason
        else:
            assert fragment in report.stopped_reason
    if not stopped:
        assert report.stopped_reason == ""
    assert report.ok is (not stopped and all(s in (C, U, D) for s in statuses))
    assert report.finished > 0


# --- _blank_secrets(): ansible-runner's record of the job environment ---

SECRET_NAMES = ["NETGEN_PASSWORD", "NETGEN_USERNAME", "NETGEN_SSH_KEY", "AWS_SECRET_ACCESS_KEY", "SOME_TOKEN",
                "GITHUB_TOKEN", "VAULT_PASSWORD", "DB_CREDENTIALS", "OPENAI_API_KEY", "netgen_password"]
KEPT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/ops", "LANG": "C.UTF-8", "ANSIBLE_NOCOLOR": "1",
        "SSH_AUTH_SOCK": "/run/user/1000/agent.sock", "ANSIBLE_LOCAL_TEMP": "/tmp/netgen-rollout-x/tmp"}


def _write_command(artifact_dir: Path, env: dict[str, str]) -> Path:
    artifact_dir.mkdir(parents=True)
    path = artifact_dir / "command"
    path.write_text(json.dumps({"command": ["ansible-playbook", "-i", "/tmp/inventory/netgen.json", "play.yml"],
                                "cwd": "/tmp/project", "env": env}))
    return path


def test_blank_secrets_removes_secret_values_and_keeps_the_rest(tmp_path):
    secrets = {name: f"secret-value-{i}-{PASSWORD}" for i, name in enumerate(SECRET_NAMES)}
    path = _write_command(tmp_path / "artifacts" / "cr-1", {**secrets, **KEPT})
    _blank_secrets(tmp_path / "artifacts" / "cr-1")
    text = path.read_text()
    assert PASSWORD not in text and "secret-value" not in text
    data = json.loads(text)
    assert set(data["env"]) == set(secrets) | set(KEPT)  # names stay, values go
    assert {k: v for k, v in data["env"].items() if k in KEPT} == KEPT
    assert data["command"][0] == "ansible-playbook" and data["cwd"] == "/tmp/project"


@pytest.mark.parametrize("content", [None, "", "not json {", json.dumps({"command": ["x"], "cwd": "/"})],
                         ids=["missing", "empty", "not json", "no env"])
def test_blank_secrets_leaves_what_it_cannot_read(content, tmp_path):
    path = tmp_path / "command"
    if content is not None:
        path.write_text(content)
    _blank_secrets(tmp_path)
    _blank_secrets(tmp_path / "no-such-dir")
    assert (path.read_text() if path.exists() else None) == content


def test_blank_secrets_does_not_rewrite_a_clean_record(tmp_path):
    path = _write_command(tmp_path / "a", KEPT)
    before = path.read_text()
    os.utime(path, (1, 1))
    _blank_secrets(tmp_path / "a")
    assert path.read_text() == before and path.stat().st_mtime == 1


# --- extravars(): the play's variables, never a credential ---


@pytest.mark.parametrize("verify", [True, False], ids=["verify-host-keys", "insecure"])
@pytest.mark.parametrize("extras", [False, True], ids=["plain", "configs-credentials-extra"])
def test_extravars_carry_the_plan_and_never_a_credential(verify, extras, small_ctx, known_hosts, tmp_path):
    target = small_target(small_ctx, "z01-rtsw001,z01-ctsw01,z01-rtsw002,z02-rtsw001,z02-rtsw002",
                          verify_host_keys=verify, known_hosts=known_hosts)
    batches = [*BATCHES[:2], Batch(3, "rtsw 1", ("z01-rtsw002", "z02-rtsw001", "z02-rtsw002"))]
    optional: dict[str, Any] = {}
    if extras:
        optional = {"configs": tmp_path / "configs", "credentials_file": tmp_path / "credentials.yaml",
                    "extra_vars": {"ticket": "CR-1234", "netgen_serial": [99]}}
    request = RolloutRequest(playbook=ROOT / "roles" / "rollout.yml", fabric=SMALL, policy=RolloutPolicy(),
                             batches=batches, options=DeployOptions("cr-7", confirm_timeout_s=600,
                                                                    post_check_timeout_s=30.0), **optional)
    values = extravars(target, request)
    text = json.dumps(values)
    for secret in (PASSWORD, USERNAME, "id_netgen"):
        assert secret not in text
    assert not [k for k in values if re.search("passw|user|secret|ssh_key", k, re.IGNORECASE)]
    assert values["netgen_fabric"] == str(SMALL)
    assert values["netgen_serial"] == [1, 1, 3]
    assert (values["netgen_change_id"], values["netgen_confirm_timeout"], values["netgen_post_check_timeout"]) == (
        "cr-7", 600, 30.0)
    assert values["netgen_verify_host_keys"] is verify
    if verify:
        assert values["netgen_known_hosts"] == str(known_hosts.resolve())
    else:
        assert "netgen_known_hosts" not in values
    if extras:
        assert values["netgen_configs"] == str((tmp_path / "configs").resolve())
        assert values["netgen_credentials_file"] == str((tmp_path / "credentials.yaml").resolve())
        assert values["ticket"] == "CR-1234"  # the user's own variables pass through, netgen's are not overridden
    else:
        assert not {"netgen_configs", "netgen_credentials_file", "ticket"} & set(values)


# --- the module file: argument spec, documentation, the role that calls it ---

DOC = yaml.safe_load(MODULE.DOCUMENTATION)


def test_argument_spec_matches_the_documentation():
    assert DOC["module"] == MODULE_FILE.stem == "netgen_deploy"
    options = DOC["options"]
    assert set(options) == set(SPEC)
    for name, spec in SPEC.items():
        doc = options[name]
        assert doc["type"] == spec["type"], name
        assert bool(doc.get("required")) == bool(spec.get("required")), name
        assert doc.get("default") == spec.get("default"), name
        assert doc.get("description"), name
    assert {n for n, s in SPEC.items() if s.get("required")} == {"fabric", "device"}
    assert yaml.safe_load(MODULE.EXAMPLES) and yaml.safe_load(MODULE.RETURN)


def test_only_the_password_is_no_log():
    assert SPEC["password"].get("no_log") is True
    assert {n for n, s in SPEC.items() if s.get("no_log")} == {"password"}


def test_the_role_passes_only_module_arguments_and_declares_its_variables():
    tasks = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    [task] = [t for t in tasks if "netgen_deploy" in t]
    arguments = task["netgen_deploy"]
    assert set(arguments) <= set(SPEC)
    assert {n for n, s in SPEC.items() if s.get("required")} <= set(arguments)
    used = set(re.findall(r"\bnetgen_\w+", json.dumps([arguments, task.get("vars", {})])))
    declared = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert used and used <= set(declared)
    assert declared["netgen_password"].get("no_log") is True


def test_ansible_doc_reads_the_module(tmp_path):
    ansible_doc = Path(sys.executable).with_name("ansible-doc")
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
           "ANSIBLE_HOME": str(tmp_path / "ansible-home")}
    done = subprocess.run([str(ansible_doc), "-M", str(ROLE / "library"), "netgen_deploy", "--json"],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads(done.stdout)["netgen_deploy"]
    assert set(doc["doc"]["options"]) == set(SPEC)
    assert doc["doc"]["options"]["fabric"]["required"] is True
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert {"status", "changes", "netgen"} <= set(doc["return"])


def test_the_task_takes_the_change_lock_or_checks_the_rollout_s(pushes, state_dir):
    """Without a lock token the task takes its zone's change lock itself and fails naming the holder
    when another change holds it; with the token of the lease `netgen rollout` holds it goes on under
    that lease, and with any other token it fails."""
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, topology_of(SMALL))
    store = open_store(ctx, SMALL, load_deploy(SMALL.parent))
    other = Lease.new("netgen rollout --change-id other", "other", "", 60)
    store.acquire(["zone-01"], other, 60)
    refused = run(params(**LOGIN, verify_host_keys=False, change_id="t-1"), False)
    assert refused["failed"] is True and "held by" in refused["msg"] and "other" in refused["msg"], refused
    assert pushes == []
    under = run(params(**LOGIN, verify_host_keys=False, change_id="t-2", lock_token=other.token), False)
    assert under["status"] == "changed", under
    wrong = run(params(**LOGIN, verify_host_keys=False, change_id="t-3", lock_token="0123456789abcdef"), False)
    assert wrong["failed"] is True and "not the rollout's" in wrong["msg"], wrong
    store.release(["zone-01"], other)
    alone = run(params(**LOGIN, verify_host_keys=False, change_id="t-4"), False)
    assert alone["status"] == "changed" and not store.leases()[0]  # taken for the task, then released
