"""Finishing an interrupted change from its journal (`netgen recover`, `netgen deploy --resume`).

For every device the journal shows in flight (committing, committed, confirming, rolling back,
unconfirmed, confirmed_unsaved, unknown), connect, read what it holds, and either roll it back (the
default: the old config with nothing pending) or, with `confirm`, confirm it when it runs exactly
the intended config. A device whose confirm went out (its post-checks had passed) and that is read
back confirmed, with nothing left to revert it, is only saved: there is no way back to roll, and a
save is all it can lack. Each result is read back from the device and journaled, as in the pipeline.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netgen.context import DesignContext
from netgen.deploy.connect import connect_driver, disconnect
from netgen.deploy.driver import HOLDS_NEW, HOLDS_OLD, Driver
from netgen.deploy.journal import Journal, JournalView, State
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import GOOD, DeviceOutcome, ProgressHook, RolloutReport, Status, settle


def recover_device(driver: Driver, options: DeployOptions, outcome: DeviceOutcome, before: str,
                   after: str | None, confirm: bool, confirm_sent: bool = False) -> DeviceOutcome:
    """One in-flight device: read it, then confirm, save or roll back, and read it again.
    `confirm_sent`: the journal shows this commit's confirm went out (journal.CONFIRM_SENT)."""
    journal = options.journal

    def note(state: State, **data: object) -> None:
        if journal is not None:
            journal.write(outcome.device, state, stage="recover", **data)

    outcome.enter("recover")
    asked_confirm = confirm
    try:
        seen = driver.readback(before, after)
        if confirm_sent and seen.holds == HOLDS_NEW and not seen.pending:
            asked_confirm = True  # confirmed on the device: at most the save is missing
            if not seen.saved:
                note(State.CONFIRMED_UNSAVED, **seen.as_dict(), reason="netgen recover: read back confirmed, saving")
                driver.save()
                seen = driver.readback(before, after)
            settle(outcome, seen, confirmed=True)
        elif seen.holds == HOLDS_OLD and not seen.pending:
            outcome.status, outcome.readback = Status.ROLLED_BACK, seen.as_dict()  # already back (a timer ran out)
        elif confirm:
            if driver.config_diff():
                outcome.status, outcome.readback = Status.DIVERGED, seen.as_dict()
                outcome.error = f"not confirmed: the device does not run the intended config ({seen.detail})"
            else:
                note(State.CONFIRMING, reason="netgen recover --confirm")
                driver.confirm()
                settle(outcome, driver.readback(before, after), confirmed=True)
        else:
            note(State.ROLLING_BACK, reason="netgen recover")
            driver.rollback()
            settle(outcome, driver.readback(before, after), confirmed=False)
    except Exception as exc:
        outcome.error = f"recover: {type(exc).__name__}: {exc}"[:800]
        try:  # the device may still answer: say what it holds
            settle(outcome, driver.readback(before, after), confirmed=asked_confirm)
        except Exception:
            outcome.readback = None
            if confirm_sent:  # it may be confirmed: never claim it is not
                outcome.status, outcome.error = Status.UNKNOWN, f"unknown: could not read back: {outcome.error}"
            else:
                outcome.status = Status.UNCONFIRMED
    note(State(outcome.status.value), **(outcome.readback or {}), reason=outcome.error or "")
    outcome.enter(outcome.stage)
    return outcome


def recover_change(nr: Nornir, ctx: DesignContext, view: JournalView, files: Mapping[str, Mapping[str, str]],
                   options: DeployOptions, confirm: bool, progress: ProgressHook | None = None) -> RolloutReport:
    """Every in-flight device of the journal, at once (Nornir's workers); a report like a rollout's."""
    report = RolloutReport(ctx.fabric.name, options.change_id, False, time.time())
    records = {r.device: r for r in view.in_flight() if r.device in ctx.topology.devices}
    for name in records:
        device = ctx.topology.devices[name]
        report.devices[name] = DeviceOutcome(name, device.role.value, device.zone, device.nos, 1)

    def task(task: Task) -> Result:
        name = task.host.name
        device, outcome, record = ctx.topology.devices[name], report.devices[name], records[name]
        try:
            driver = connect_driver(task, device, files[name], options)
        except Exception as exc:
            outcome.error = f"connect: {type(exc).__name__}: {exc}"[:800]
            outcome.status = Status.UNCONFIRMED
            if record.confirm_sent:  # it may be confirmed: never claim it is not
                outcome.status, outcome.error = Status.UNKNOWN, f"unknown: could not read back: {outcome.error}"
        else:
            recover_device(driver, options, outcome, record.before or "", record.after, confirm, record.confirm_sent)
        finally:
            disconnect(task)
        if progress:
            progress(outcome)
        return Result(host=task.host, result=outcome.status.value, failed=outcome.status not in GOOD)

    if records:
        nr.filter(filter_func=lambda host: host.name in records).run(task=task, name="netgen recover", on_failed=True)
    report.batches.append({"index": 1, "label": "recover", "devices": list(records),
                           "failed": [n for n, o in report.devices.items()
                                      if o.status not in GOOD and o.status is not Status.ROLLED_BACK]})
    report.finished = time.time()
    return report


def recovered(report: RolloutReport, confirm: bool) -> bool:
    """Did recovery leave every device settled the way it was asked (old, or confirmed new)? A
    device that was confirmed already is settled once saved (`changed`), whichever was asked."""
    wanted = {Status.CHANGED} if confirm else {Status.ROLLED_BACK, Status.CHANGED}
    return all(o.status in wanted for o in report.devices.values())


__all__ = ["Journal", "recover_change", "recover_device", "recovered"]
