"""A confirm whose answer is lost, every time it is sent, on the SONiC path: the netns lab's SONiC
RTSW behind sshd with the SONiC stand-in (netgen/nos/sonic/lab_shim.py), real Nornir + netmiko. On
SONiC netgen confirms by disarming the revert timer it armed with the commit (`systemctl stop`);
the stand-in's faults lose that command's answer after it ran (`drop-after-disarm`) or before
(`drop-before-disarm`), and can make `config save` fail (`save-fail`). The report must say what
netgen read back afterwards; the switch is read over SSH here, never from the report.

A lost answer shows up in netmiko as a command timeout (the site's 15 s, test_deploy_sonic.py):
the waits here are those timeouts, never a sleep."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from netgen.deploy.journal import default_path
from netgen.deploy.journal import read as read_journal
from tests.conftest import run_cli
from tests.deploy.test_deploy_sonic import MISSING, Site, _leftovers, sonic_site
from tests.lab.conftest import lab_root  # noqa: F401  (autouse: the private NETGEN_LAB_ROOT)
from tests.support import sonic_faults

pytestmark = [pytest.mark.deploy,
              pytest.mark.skipif(bool(MISSING), reason="the SONiC deploy path needs " + "; ".join(MISSING))]

NODE = "z01-rtsw001"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[Site]:
    """This module's own lab, as test_deploy_sonic.py's: zone 1, 2 racks, 1 CTSW, converged."""
    yield from sonic_site(tmp_path_factory)


def _deploy_with(site, *faults: str) -> tuple[int, dict, dict]:
    sonic_faults.clear_faults(site.lab, NODE)
    for fault in faults:
        sonic_faults.inject_fault(site.lab, NODE, fault)
    try:
        result = run_cli("deploy", str(site.fabric), "--limit", NODE, "--json")
    finally:
        sonic_faults.clear_faults(site.lab, NODE)
    assert "Traceback" not in result.output
    report = json.loads(result.stdout)
    return result.exit_code, report, report["devices"][NODE]


def _weights(site, weight: int) -> None:
    site.edit({"qos.lossless.weight": weight, "qos.classes.0.weight": 100 - weight})


def _saved_weight(site) -> str:
    return json.loads(site.ssh(NODE, "cat /etc/sonic/config_db.json"))["SCHEDULER"]["scheduler.roce"]["weight"]


def _running_weight(site) -> str:
    return site.running(NODE)["SCHEDULER"]["scheduler.roce"]["weight"]


def _timer(site, change_id: str) -> str:
    return site.ssh(NODE, f"systemctl is-active netgen-revert-{change_id}.timer")


def _recover(site, change_id: str) -> tuple[int, dict]:
    result = run_cli("recover", str(site.fabric), "--change-id", change_id, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)["devices"][NODE]


def test_a_disarm_whose_answer_is_lost_every_time_is_read_back_and_saved(site):
    # Before: `unconfirmed` (the retried confirm lost its answer too) while the timer was disarmed:
    # confirmed, with nothing left to revert it, and not saved.
    _weights(site, 55)
    code, report, outcome = _deploy_with(site, "drop-after-disarm")
    assert code == 0 and outcome["status"] == "changed", outcome["error"]
    assert outcome["readback"]["saved"] is True and outcome["readback"]["pending"] == ""
    assert "confirm: ReadTimeout" in outcome["error"] and "read back: confirmed, not saved" in outcome["error"]
    assert outcome["error"].endswith("read back: confirmed and saved")
    assert _running_weight(site) == _saved_weight(site) == "55"
    assert _timer(site, report["change_id"]) == "inactive" and _leftovers(site, NODE) == ""
    assert "netgen-" not in site.ssh(NODE, "config list-checkpoints")
    record = read_journal(default_path(report["change_id"])).records[NODE]
    assert record.history[-2:] == ["confirmed_unsaved", "changed"] and not record.in_flight


def test_a_failed_save_after_a_lost_disarm_answer_is_confirmed_unsaved_and_recover_only_saves(site):
    # Before: `unconfirmed`, and `netgen recover` would have rolled back a change that was confirmed.
    _weights(site, 60)
    code, report, outcome = _deploy_with(site, "drop-after-disarm", "save-fail")
    assert code == 1 and outcome["status"] == "confirmed_unsaved", outcome["error"]
    assert outcome["readback"]["holds"] == "new" and outcome["readback"]["saved"] is False
    assert outcome["readback"]["pending"] == ""
    assert "save: DriverError" in outcome["error"] and "No space left on device" in outcome["error"]
    assert "`netgen recover` saves it" in outcome["error"]
    assert _running_weight(site) == "60" and _saved_weight(site) == "55"
    assert _timer(site, report["change_id"]) == "inactive"  # confirmed: nothing will revert it
    record = read_journal(default_path(report["change_id"])).records[NODE]
    assert record.state == "confirmed_unsaved" and record.in_flight

    code, recovered = _recover(site, report["change_id"])
    assert code == 0 and recovered["status"] == "changed", recovered["error"]
    assert _running_weight(site) == _saved_weight(site) == "60"  # saved, not rolled back
    assert _leftovers(site, NODE) == "" and "netgen-" not in site.ssh(NODE, "config list-checkpoints")
    history = read_journal(default_path(report["change_id"])).records[NODE].history
    assert history[-2:] == ["confirmed_unsaved", "changed"] and "rolling_back" not in history


def test_a_disarm_that_never_reaches_the_switch_is_unconfirmed_with_its_timer_read_back(site):
    # Before: `unconfirmed` with nothing read back (the retry's drop ended the recovery).
    _weights(site, 65)
    code, report, outcome = _deploy_with(site, "drop-before-disarm")
    assert code == 1 and outcome["status"] == "unconfirmed", outcome["error"]
    seen = outcome["readback"]
    assert seen is not None and seen["holds"] == "new" and seen["saved"] is False
    assert seen["pending"] == "SONiC revert timer (systemd)" and "reverts by itself" in outcome["error"]
    assert outcome["error"].count("read back: not confirmed yet") == 3
    assert _running_weight(site) == "65" and _saved_weight(site) == "60"
    assert _timer(site, report["change_id"]) == "active"

    code, recovered = _recover(site, report["change_id"])
    assert code == 0 and recovered["status"] == "rolled_back", recovered["error"]
    assert _running_weight(site) == _saved_weight(site) == "60"
    assert _timer(site, report["change_id"]) == "inactive" and _leftovers(site, NODE) == ""
