"""A confirm whose answer is lost, in the pipeline's own terms (netgen/deploy/pipeline.py
`_finish_confirm`, netgen/deploy/recover.py): scripted fake switches (test_pipeline.py) whose
confirm and save answers get lost after or before they act, or that cannot be reached again. The
status must be what the switch was read back holding, the journal must say it, and recovery must
only save a switch that is confirmed. (The same over SSH: test_deploy_lost_confirm*.py.)"""

from __future__ import annotations

import pytest

from netgen.deploy.driver import DriverError
from netgen.deploy.journal import Journal
from netgen.deploy.journal import read as read_journal
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import LOST_ANSWER_READS, RolloutReport, Status, deploy_one
from netgen.deploy.recover import recover_device, recovered
from tests.deploy.test_pipeline import CTX, FakeDriver, FakeSwitch, _outcome

pytestmark = pytest.mark.render

NAME = "z01-rtsw001"


class LossyDriver(FakeDriver):
    """FakeDriver whose confirm and save can lose their answer (EOFError) after acting
    (`confirm_lost`, `save_lost`) or before (`confirm_lost_before`), every time, or be refused
    (`save_refused`)."""

    def confirm(self) -> None:
        faults = self.switch.faults
        self.switch.events.append(("confirm", 0.0))
        if "confirm_lost_before" in faults:
            raise EOFError("connection dropped")
        self.switch.timer = False
        if "confirm_lost" in faults:
            raise EOFError("connection dropped")
        self.save()

    def save(self) -> None:
        faults = self.switch.faults
        self.switch.events.append(("save", 0.0))
        if "save_refused" in faults:
            raise DriverError(f"{self.name}: `copy running-config startup-config` was refused: % Error copying")
        self.switch.saved = self.switch.running
        if "save_lost" in faults:
            raise EOFError("connection dropped")


def _reconnect(switch: FakeSwitch) -> LossyDriver:
    if "unreachable" in switch.faults:
        raise ConnectionRefusedError("the switch cannot be reached")
    return LossyDriver(switch)


def _deploy(tmp_path, *faults: str) -> tuple[FakeSwitch, object, Journal]:
    switch = FakeSwitch(NAME, faults=set(faults))
    journal = Journal(tmp_path / "j.jsonl", "t1")
    options = DeployOptions(change_id="t1", post_check_timeout_s=0.0, journal=journal)
    outcome = deploy_one(LossyDriver(switch), CTX, CTX.topology.devices[NAME], options, _outcome(NAME),
                         lambda: _reconnect(switch))
    return switch, outcome, journal


def _kinds(switch: FakeSwitch) -> list[str]:
    return [kind for kind, _ in switch.events]


def test_confirm_and_save_answers_lost_every_time_end_changed_with_one_confirm(tmp_path):
    switch, outcome, journal = _deploy(tmp_path, "confirm_lost", "save_lost")
    assert outcome.status is Status.CHANGED, outcome.error
    assert (switch.running, switch.saved, switch.timer) == ("new", "new", False)
    assert _kinds(switch).count("confirm") == 1 and _kinds(switch)[-1] == "save"  # never confirmed twice
    assert outcome.error.startswith("confirm: EOFError: connection dropped (answer lost); read back: confirmed")
    record = read_journal(journal.path).records[NAME]
    assert record.history[-3:] == ["confirming", "confirmed_unsaved", "changed"] and not record.in_flight


def test_a_refused_save_is_confirmed_unsaved_with_the_refusal(tmp_path):
    switch, outcome, journal = _deploy(tmp_path, "confirm_lost", "save_refused")
    assert outcome.status is Status.CONFIRMED_UNSAVED
    assert outcome.readback == {"holds": "new", "saved": False, "pending": "", "detail": "running new, saved old"}
    assert "save: DriverError" in outcome.error and "% Error copying" in outcome.error
    assert _kinds(switch).count("save") == 1  # a refusal is read back and reported, not retried
    record = read_journal(journal.path).records[NAME]
    assert record.state == "confirmed_unsaved" and record.in_flight and record.confirm_sent


def test_a_confirm_lost_before_the_switch_is_retried_then_unconfirmed_with_its_timer(tmp_path):
    switch, outcome, _ = _deploy(tmp_path, "confirm_lost_before")
    assert outcome.status is Status.UNCONFIRMED
    assert outcome.readback is not None and outcome.readback["pending"] == "timer"
    assert _kinds(switch).count("confirm") == LOST_ANSWER_READS  # the first and one per read-back but the last
    assert (switch.running, switch.timer) == ("new", True)


def test_a_switch_unreachable_after_the_confirm_is_unknown_and_recovery_only_saves(tmp_path):
    switch, outcome, journal = _deploy(tmp_path, "confirm_lost", "unreachable")
    assert outcome.status is Status.UNKNOWN and outcome.readback is None
    assert outcome.error.startswith("unknown: could not read back: confirm: EOFError")
    assert outcome.error.count("reconnect: ConnectionRefusedError") == LOST_ANSWER_READS
    assert (switch.running, switch.saved, switch.timer) == ("new", "old", False)  # in truth: confirmed, unsaved
    (record,) = read_journal(journal.path).in_flight()
    assert record.state == "unknown" and record.confirm_sent

    switch.faults.clear()
    switch.events.clear()
    options = DeployOptions(change_id="t1", journal=journal)
    recovered_outcome = recover_device(LossyDriver(switch), options, _outcome(NAME), record.before or "",
                                       record.after, confirm=False, confirm_sent=record.confirm_sent)
    assert recovered_outcome.status is Status.CHANGED, recovered_outcome.error
    assert _kinds(switch) == ["save"]  # no rollback: it was confirmed, only the save was missing
    assert not read_journal(journal.path).in_flight()
    report = RolloutReport("small", "t1", False, 0.0, devices={NAME: recovered_outcome})
    assert recovered(report, confirm=False)  # a saved confirmed change is settled, as a rollback would be


def test_the_last_read_back_before_a_lost_save_is_kept_when_nothing_answers_after_it(tmp_path):
    # the save's answer lost and the switch gone after it: unknown, with what was read before the save
    switch = FakeSwitch(NAME, faults={"confirm_lost", "save_lost"})
    reconnects = iter([LossyDriver(switch)])

    def reconnect_once() -> LossyDriver:
        driver = next(reconnects, None)
        if driver is None:
            raise ConnectionRefusedError("the switch cannot be reached")
        return driver

    options = DeployOptions(change_id="t2", post_check_timeout_s=0.0, journal=Journal(tmp_path / "k.jsonl", "t2"))
    outcome = deploy_one(LossyDriver(switch), CTX, CTX.topology.devices[NAME], options, _outcome(NAME), reconnect_once)
    assert outcome.status is Status.UNKNOWN
    assert outcome.readback is not None and outcome.readback["saved"] is False  # read before the save went out
    assert "the last read-back, before the steps after it: running new, saved old" in outcome.error
    assert switch.saved == "new"  # the save did run: claiming either way would have been a guess
