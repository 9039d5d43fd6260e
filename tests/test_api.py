"""netgen.api, called directly: what it returns is what the command line prints from."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from netgen import api
from netgen.cli import deploy as deploy_cli
from netgen.deploy import ansible_module, readonly_check
from netgen.deploy.change import ChangeRefused, ChangeRequest
from netgen.deploy.checks import Outcome
from netgen.deploy.inventory import Credentials
from netgen.deploy.target import DeployTarget
from netgen.intent import NetgenInputError
from netgen.platforms import render as render_stage
from netgen.topology.selection import SelectionError
from tests.conftest import SMALL, render_tree, run_cli

pytestmark = pytest.mark.render

DEVICE = "z01-rtsw001"


@pytest.fixture(scope="module")
def checked() -> api.CheckedFabric:
    return api.check(SMALL)


@pytest.fixture(scope="module")
def target(checked: api.CheckedFabric) -> DeployTarget:
    """One device, its files rendered now, reached with test credentials and no host-key check."""
    return api.deploy_target(checked, limit=DEVICE, credentials=Credentials("u", None, None, "test"),
                             verify_host_keys=False)


def test_all_names_are_public_and_documented():
    for name in api.__all__:
        item = getattr(api, name)
        if inspect.isfunction(item):
            assert item.__module__ == "netgen.api" and item.__doc__, name
            assert "Returns:" in item.__doc__ or "Raises:" in item.__doc__, name
        elif inspect.isclass(item):
            assert item.__doc__, name


def test_load_returns_the_validated_fabric():
    loaded = api.load(SMALL.parent)
    assert loaded.fabric.name == "small-lab" and loaded.source == SMALL


def test_load_raises_every_input_problem(tmp_path):
    bad = tmp_path / "fabric.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(NetgenInputError) as caught:
        api.load(bad)
    assert caught.value.problems and str(bad) in caught.value.problems[0].render()


def test_check_counts_as_validate_does(checked):
    assert checked.ok and (checked.errors, checked.warnings) == (0, 6)
    assert checked.loaded.fabric.name == checked.ctx.fabric.name == "small-lab"
    payload = json.loads(run_cli("validate", str(SMALL), "--json").stdout)
    assert [f.as_dict() for f in checked.findings] == payload["findings"]


def test_check_reports_design_errors_as_findings(small_data, write_fabric):
    small_data["zones"][0]["ctsw_count"] = 2  # 8 x 400G up for 16 x 400G of NICs: blocking
    checked = api.check(write_fabric(small_data))
    assert not checked.ok and checked.errors == 1
    assert any(f.code == "NG101" for f in checked.findings)


def test_check_runs_in_the_callers_context(checked):
    entered: list[str] = []

    class Spinner:
        def __enter__(self) -> None:
            entered.append("in")

        def __exit__(self, *exc: object) -> None:
            entered.append("out")

    again = api.check(checked.loaded, checking=Spinner)
    assert entered == ["in", "out"] and again.loaded is checked.loaded


def test_validate_reads_the_secrets(checked):
    validated = api.validate(SMALL)
    assert validated.findings == checked.findings
    assert validated.input_warnings == []


def test_render_writes_what_the_command_line_writes(tmp_path):
    outcome = api.render(SMALL, tmp_path / "api")
    assert outcome.result is not None and not outcome.unchanged
    assert (outcome.errors, outcome.warnings) == (0, 6)
    assert run_cli("render", str(SMALL), "-o", str(tmp_path / "cli")).exit_code == 0
    ours, theirs = render_tree(tmp_path / "api"), render_tree(tmp_path / "cli")
    assert ours.keys() == theirs.keys() and len(ours) == outcome.result.files + 1  # the files and the manifest
    assert ours == theirs  # the manifest too, but for what it saw of the files (its inodes and mtimes)


def test_render_again_keeps_the_unchanged_devices(tmp_path):
    first = api.render(SMALL, tmp_path / "out")
    again = api.render(SMALL, tmp_path / "out")
    assert again.result is not None and first.result is not None
    assert again.result.reused and (again.result.files, again.result.bytes) == (first.result.files, first.result.bytes)
    fresh = api.render(SMALL, tmp_path / "out", reuse=False)
    assert fresh.result is not None and not fresh.result.reused


def test_a_directory_holding_this_render_is_reported_without_checking(tmp_path, monkeypatch, checked):
    """The render cache: DIR holds this render of every device (its manifest says so), so the fabric
    is neither expanded nor checked."""
    held = api.render(checked.loaded, tmp_path / "out").result
    asked: list[tuple[Path, str]] = []

    def holds(output: Path, key: str, *, verify: bool = False) -> Any:
        assert not verify
        asked.append((output, key))
        return held, 6

    def no_check(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("checked")

    monkeypatch.setattr(render_stage, "unchanged_render", holds)
    monkeypatch.setattr(api, "check", no_check)
    outcome = api.render(checked.loaded, tmp_path / "out")
    assert outcome.unchanged and outcome.result is held and (outcome.warnings, outcome.findings) == (6, [])
    assert asked == [(tmp_path / "out", render_stage.fabric_key(checked.loaded.fabric, checked.loaded.catalog))]
    with pytest.raises(AssertionError, match="checked"):  # a render of some devices is not the whole render
        api.render(checked.loaded, tmp_path / "out", devices=[DEVICE])


def test_render_check_only_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    steps: list[tuple[str, int]] = []

    class Bar:
        def __init__(self, total: int, label: str) -> None:
            self.total, self.label = total, label

        def __enter__(self) -> Any:
            return lambda: steps.append((self.label, self.total))

        def __exit__(self, *exc: object) -> None:
            pass

    outcome = api.render(SMALL, None, devices=["z01-rtsw00*"], progress=Bar)
    assert outcome.result is not None and len(outcome.result.devices) == 4
    assert steps == [("rendering", 4)] * 4 and list(tmp_path.iterdir()) == []


def test_render_refuses_an_unknown_device(tmp_path):
    with pytest.raises(SelectionError):
        api.render(SMALL, tmp_path / "out", devices=["nope"])
    assert not (tmp_path / "out").exists()


def test_render_with_design_errors_writes_nothing(small_data, write_fabric, tmp_path):
    small_data["qos"]["ecn"]["min_threshold"] = "2MB"
    outcome = api.render(write_fabric(small_data), tmp_path / "out")
    assert outcome.result is None and outcome.errors == 1 and not (tmp_path / "out").exists()


def test_render_keys_are_the_command_lines():
    keyed = api.render_keys(SMALL, devices=["role:atsw"])
    printed = json.loads(run_cli("render", str(SMALL), "--keys-only", "--device", "role:atsw").stdout)
    assert printed == {"ok": True, "exit_code": 0, "warnings": keyed.checked.warnings, **keyed.as_dict()}
    assert set(keyed.keys) == {"atsw01", "atsw02"}


def test_ecmp_study_is_what_whatif_ecmp_prints(checked):
    study = api.ecmp_study(checked.ctx, failed="z01-ctsw01", qps=[1, 4], trials=1000, seed=7)
    printed = json.loads(run_cli("whatif", "ecmp", str(SMALL), "--fail", "z01-ctsw01", "--qps", "4,1",
                                 "--trials", "1000", "--seed", "7", "--json").stdout)
    assert printed == {"ok": True, "exit_code": 0, **json.loads(json.dumps(study.as_dict()))}
    assert any(entry.scenario == "z01-ctsw01 failed" for entry in study.stages)


def test_ecmp_study_refuses_an_unknown_switch(checked):
    with pytest.raises(ValueError, match="nope is not a switch"):
        api.ecmp_study(checked.ctx, failed="nope")


def _cli_params(**given: Any) -> dict[str, Any]:
    """What click hands `netgen deploy` for the push options (none given: None, as click leaves them)."""
    keys = ("workers", "batch_size", "max_zone_share", "ctsw_per_zone", "max_failures", "confirm_timeout",
            "change_id", "journal_path")
    return {**dict.fromkeys(keys), "post_check_timeout": 60.0, "remove_unmanaged": False, **given}


def _module_params(**given: Any) -> dict[str, Any]:
    return {"confirm_timeout": None, "post_check_timeout": None, "remove_unmanaged": False, **given}


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry run", "push"])
@pytest.mark.parametrize("given", [{}, {"confirm_timeout": 600, "post_check_timeout": 90.5, "remove_unmanaged": True}],
                         ids=["defaults", "given"])
def test_one_builder_of_deploy_options_for_the_cli_and_the_ansible_module(target, dry_run, given):
    """`netgen deploy` and the netgen_deploy module (whose arguments `netgen rollout` sets from the
    same plan) get the same options for the same change."""
    change = f"cr-{'dry' if dry_run else 'push'}-{len(given)}"
    cli_plan = deploy_cli._plan(target, True, dry_run, _cli_params(change_id=change, **given))
    request = ansible_module._change_request(_module_params(**given), change, check_mode=dry_run)
    module_plan = api.plan_deploy(target, request)
    ours, theirs = cli_plan.options, module_plan.options
    assert (ours.journal is None) == (theirs.journal is None) == dry_run
    if not dry_run:  # the module appends to the journal `netgen deploy` would write
        assert ours.journal is not None and theirs.journal is not None and ours.journal.path == theirs.journal.path
        ours, theirs = (type(ours)(**{**vars(o), "journal": None}) for o in (ours, theirs))
    assert ours == theirs
    assert cli_plan.policy == module_plan.policy and cli_plan.batches == module_plan.batches


def test_the_builder_names_the_option_as_its_caller_spells_it(target):
    with pytest.raises(ChangeRefused, match=r"^--confirm-timeout 60 s does not cover --post-check-timeout"):
        api.plan_deploy(target, ChangeRequest("cr-1", dry_run=True, policy={"confirm_timeout_s": 60}))
    with pytest.raises(ChangeRefused, match=r"deploy\.yaml rollout\.confirm_timeout_s 300 s does not cover"):
        api.plan_deploy(target, ChangeRequest("cr-1", dry_run=True, post_check_timeout_s=300))
    request = ansible_module._change_request(_module_params(post_check_timeout=300), "cr-1", check_mode=True)
    with pytest.raises(ChangeRefused, match=r"^confirm_timeout 300 s does not cover post_check_timeout 300 s"):
        api.plan_deploy(target, request)


def test_check_devices_says_which_devices_it_could_not_reach(target, monkeypatch):
    def unreachable(*_args: Any) -> Any:
        raise ConnectionRefusedError("no route")

    monkeypatch.setattr(readonly_check, "connect_driver", unreachable)
    report = api.check_devices(target, workers=1)
    assert report.devices == [DEVICE] and not report.ok
    [result] = report.results
    assert (result.check, result.device, result.outcome) == ("connect", DEVICE, Outcome.ERROR)
    assert result.detail == "ConnectionRefusedError: no route"
    assert report.as_dict() == {"devices": 1, "checks": 1, "failed": 1, "results": [result.as_dict()]}


def test_check_devices_runs_the_post_checks_on_each_device(target, monkeypatch):
    from tests.deploy.test_pipeline import FakeDriver, FakeSwitch  # noqa: PLC0415  (its fake device)

    seen: list[str] = []

    def connect(task: Any, device: Any, files: Any, options: Any) -> Any:
        seen.append(options.change_id)
        return FakeDriver(FakeSwitch(device.name, running="new", saved="new"))

    monkeypatch.setattr(readonly_check, "connect_driver", connect)
    report = api.check_devices(target)
    assert seen == ["check"] and report.ok
    assert [r.check for r in report.results] == ["drain", "bgp-established", "pfc-enabled", "no-pfc-storm",
                                                 "interface-errors", "no-diff", "lldp-neighbors"]
