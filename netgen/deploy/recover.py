"""Finishing an interrupted change from its journal (`netgen recover`, `netgen deploy --resume`).

For every device the journal shows in flight (committing, committed, confirming, rolling back,
unconfirmed), connect, read what it holds, and either roll it back (the default: the old config
with nothing pending) or, with `confirm`, confirm it when it runs exactly the intended config.
Each result is read back from the device and journaled, as in the pipeline.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netgen.checks import DesignContext
from netgen.deploy.drivers.base import HOLDS_OLD, Driver, load_drivers
from netgen.deploy.journal import Journal, JournalView, State
from netgen.deploy.pipeline import GOOD, DeployOptions, DeviceOutcome, ProgressHook, RolloutReport, Status, settle


def recover_device(driver: Driver, options: DeployOptions, outcome: DeviceOutcome, before: str,
                   after: str | None, confirm: bool) -> DeviceOutcome:
    """One in-flight device: read it, then confirm or roll back, and read it again."""
    journal = options.journal

    def note(state: State, **data: object) -> None:
        if journal is not None:
            journal.write(outcome.device, state, stage="recover", **data)

    outcome.enter("recover")
    try:
        seen = driver.readback(before, after)
        if seen.holds == HOLDS_OLD and not seen.pending:
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
        outcome.status = Status.UNCONFIRMED
    note(State(outcome.status.value), **(outcome.readback or {}), reason=outcome.error or "")
    outcome.enter(outcome.stage)
    return outcome


def recover_change(nr: Nornir, ctx: DesignContext, view: JournalView, files: Mapping[str, Mapping[str, str]],
                   options: DeployOptions, confirm: bool, progress: ProgressHook | None = None) -> RolloutReport:
    """Every in-flight device of the journal, at once (Nornir's workers); a report like a rollout's."""
    drivers = load_drivers()
    report = RolloutReport(ctx.fabric.name, options.change_id, False, time.time())
    records = {r.device: r for r in view.in_flight() if r.device in ctx.topology.devices}
    for name in records:
        device = ctx.topology.devices[name]
        report.devices[name] = DeviceOutcome(name, device.role.value, device.zone, device.nos, 1)

    def task(task: Task) -> Result:
        name = task.host.name
        device, outcome, record = ctx.topology.devices[name], report.devices[name], records[name]
        try:
            conn = task.host.get_connection("netmiko", task.nornir.config)
            driver = drivers[device.nos](conn, device, files[name], options.change_id, options.command_timeout_s,
                                         options.ownership_of(device.nos))
        except Exception as exc:
            outcome.status, outcome.error = Status.UNCONFIRMED, f"connect: {type(exc).__name__}: {exc}"[:800]
        else:
            recover_device(driver, options, outcome, record.before or "", record.after, confirm)
        finally:
            with contextlib.suppress(Exception):
                task.host.close_connection("netmiko")
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
    """Did recovery leave every device settled the way it was asked (old, or confirmed new)?"""
    wanted = Status.CHANGED if confirm else Status.ROLLED_BACK
    return all(o.status is wanted for o in report.devices.values())


__all__ = ["Journal", "recover_change", "recover_device", "recovered"]
