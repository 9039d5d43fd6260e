"""A confirm whose answer is lost, every time it is sent, on the EOS emulator (tests/support/eos_emulator.py)
over real SSH, Nornir and netmiko: what the report says is what netgen read back from the switch
afterwards (confirmed and saved, confirmed but not saved, still waiting for the confirm, or nothing
readable), and `netgen recover` finishes each from the journal. Every expectation about the switch
is read from the emulated switch itself (running-config, startup-config, sessions, its event log).

A lost answer shows up in netmiko as a command timeout (deploy.yaml's 5 s in eos_site.py): the
waits here are those timeouts, never a sleep."""

from __future__ import annotations

import json

import pytest

from netgen.deploy.journal import default_path
from netgen.deploy.journal import read as read_journal
from tests.conftest import run_cli

pytestmark = pytest.mark.deploy

VICTIM = "z02-rtsw001"  # an EOS RTSW of the small example
CONFIRM = r"^configure session netgen-\S+ commit$"  # the exec-mode confirm of the change's session
SAVE = r"^copy running-config startup-config$"


@pytest.fixture
def victim(converged):
    """The converged site with an intent change (DWRR weights) for one switch only."""
    converged.change_weights()
    converged.names = [VICTIM]
    device = converged.fleet.device(VICTIM)
    return converged, device, device.running_config()


def _saved(device) -> bool:
    """startup-config equals running-config (their `! Command:` headers differ)."""
    return device.startup_config().splitlines()[2:] == device.running_config().splitlines()[2:]


def _events_since(device, mark: int) -> list[str]:
    return [e.kind for e in device.history[mark:]]


def _recover(site, change_id: str, *args: str) -> tuple[int, dict]:
    result = run_cli("recover", str(site.fabric), "--change-id", change_id, "--json", *args)
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_confirm_and_save_whose_answers_are_lost_every_time_are_read_back_and_changed(victim):
    # Before: `unconfirmed` (the retried save lost its answer too, and the report gave up there)
    # while the switch had confirmed, with nothing left to revert it.
    site, device, old = victim
    device.set_fault(drop_after=f"{CONFIRM}|{SAVE}")  # both reach the switch, neither answer comes back
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 0 and outcome["status"] == "changed", outcome["error"]
    assert outcome["readback"]["holds"] == "new" and outcome["readback"]["saved"] is True
    assert outcome["readback"]["pending"] == ""
    # what the report says happened, in order: both answers lost, each followed by a read-back
    assert "confirm: ReadTimeout" in outcome["error"] and "read back: confirmed, not saved" in outcome["error"]
    assert outcome["error"].endswith("read back: confirmed and saved")
    # the switch: the new config, saved, nothing pending; confirmed once (never a second confirm)
    running = device.running_config()
    assert running != old and "bandwidth percent 60" in running and _saved(device)
    assert device.pending_sessions == {}
    kinds = [e.kind for e in device.history]
    assert kinds.count("confirm") == 1 and kinds.count("drop") == 2 and kinds[-2:] == ["write", "drop"]
    record = read_journal(default_path(report["change_id"])).records[VICTIM]
    assert record.history[-2:] == ["confirmed_unsaved", "changed"] and not record.in_flight


def test_a_refused_save_after_a_lost_confirm_answer_is_confirmed_unsaved_and_recover_only_saves(victim):
    # Before: `diverged`, and `netgen recover` then tried to roll back a confirmed session (refused).
    site, device, old = victim
    device.set_fault(drop_after=CONFIRM, save_error=True)
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 1 and outcome["status"] == "confirmed_unsaved", outcome["error"]
    assert outcome["readback"]["holds"] == "new" and outcome["readback"]["saved"] is False
    assert outcome["readback"]["pending"] == ""
    assert "save: DriverError" in outcome["error"] and "No space left on device" in outcome["error"]
    assert "confirmed, not saved" in outcome["error"] and "`netgen recover` saves it" in outcome["error"]
    assert device.running_config() != old and not _saved(device) and device.pending_sessions == {}
    record = read_journal(default_path(report["change_id"])).records[VICTIM]
    assert record.state == "confirmed_unsaved" and record.in_flight and record.confirm_sent

    device.clear_faults()
    mark = len(device.history)
    code, recovered = _recover(site, report["change_id"])
    outcome = recovered["devices"][VICTIM]
    assert code == 0 and outcome["status"] == "changed", outcome["error"]
    assert _events_since(device, mark) == ["write"]  # saved, and nothing else: no abort, no commit
    assert "bandwidth percent 60" in device.running_config() and _saved(device)
    record = read_journal(default_path(report["change_id"])).records[VICTIM]
    assert record.history[-2:] == ["confirmed_unsaved", "changed"] and not record.in_flight


def test_a_confirm_that_never_reaches_the_switch_is_unconfirmed_with_its_timer_read_back(victim):
    # Before: `unconfirmed` too, but with nothing read back (the retry's drop ended the recovery).
    site, device, _ = victim
    device.set_fault(drop_before=CONFIRM)  # every confirm is lost on its way to the switch
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 1 and outcome["status"] == "unconfirmed", outcome["error"]
    seen = outcome["readback"]
    assert seen is not None and seen["holds"] == "new" and seen["saved"] is False
    assert seen["pending"].startswith("EOS commit timer, ") and seen["pending"].endswith(" s left")
    assert "reverts by itself" in outcome["error"]
    assert outcome["error"].count("read back: not confirmed yet") == 3  # the confirm was tried again twice
    assert list(device.pending_sessions.values()) == ["pendingCommitTimer"]
    kinds = [e.kind for e in device.history]
    assert "confirm" not in kinds and kinds.count("drop") == 3 and not _saved(device)
    record = read_journal(default_path(report["change_id"])).records[VICTIM]
    assert record.state == "unconfirmed" and record.in_flight

    device.clear_faults()
    code, recovered = _recover(site, report["change_id"], "--confirm")
    assert code == 0 and recovered["devices"][VICTIM]["status"] == "changed", recovered["devices"][VICTIM]["error"]
    assert device.pending_sessions == {} and _saved(device) and "bandwidth percent 60" in device.running_config()


def test_a_switch_unreachable_after_the_confirm_is_unknown_and_recover_only_saves(victim):
    # Before: `unconfirmed` ("its timer reverts it") for a switch that had confirmed.
    site, device, old = victim
    device.set_fault(drop_after=CONFIRM, unreachable_after_drop=True)
    code, report = site.deploy()
    outcome = report["devices"][VICTIM]
    assert code == 1 and outcome["status"] == "unknown", outcome["error"]
    assert outcome["error"].startswith("unknown: could not read back: confirm: ReadTimeout")
    # every read-back tried a new login (none was skipped for want of a connection to close)
    assert outcome["error"].count("reconnect: NetmikoTimeoutException") == 3 and outcome["readback"] is None
    # what the switch really holds: confirmed, not saved
    assert device.running_config() != old and device.pending_sessions == {} and not _saved(device)
    record = read_journal(default_path(report["change_id"])).records[VICTIM]
    assert record.state == "unknown" and record.in_flight and record.confirm_sent

    device.clear_faults()
    mark = len(device.history)
    code, recovered = _recover(site, report["change_id"])
    assert code == 0 and recovered["devices"][VICTIM]["status"] == "changed", recovered["devices"][VICTIM]["error"]
    assert _events_since(device, mark) == ["write"] and _saved(device)
    assert not read_journal(default_path(report["change_id"])).in_flight()
