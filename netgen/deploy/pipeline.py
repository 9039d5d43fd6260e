"""The deploy pipeline: per device pre-checks -> diff -> (dry run stops here) -> commit with a way
back -> post-checks -> confirm or roll back; devices in failure-domain batches on Nornir's threaded
runner; the first failed batch stops the rollout and nothing after it is touched.

Every outcome lands in a report (JSON-serialisable) that says, per device, what changed, what
rolled back, what was not touched, and when each commit window opened and closed.
"""

from __future__ import annotations

import contextlib
import fnmatch
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netgen.checks import DesignContext
from netgen.deploy.checks import (
    CheckResult,
    DeviceCheck,
    Outcome,
    VerifyBgpBaseline,
    VerifyBgpEstablished,
    VerifyEcmpWidth,
    VerifyInterfaceErrors,
    VerifyModel,
    VerifyNoDiff,
    VerifyNoPfcStorm,
    VerifyPfcEnabled,
)
from netgen.deploy.drivers.base import Driver, load_drivers
from netgen.deploy.rollout import Batch
from netgen.platforms.routing import bgp_plan
from netgen.topology.model import Device


class Status(StrEnum):
    NOT_TOUCHED = "not_touched"  # the rollout stopped before this device
    UNCHANGED = "unchanged"  # already runs the intent
    DRY_RUN = "dry_run"  # diff shown, nothing applied
    CHANGED = "changed"  # committed, post-checks passed, confirmed
    ROLLED_BACK = "rolled_back"  # committed, post-checks failed, back on the old config
    FAILED = "failed"  # stopped before commit (pre-check, refused config): old config untouched
    UNCONFIRMED = "unconfirmed"  # committed but neither confirmed nor rolled back (connection lost)


GOOD = {Status.UNCHANGED, Status.DRY_RUN, Status.CHANGED}


@dataclass
class DeviceOutcome:
    device: str
    role: str
    zone: int | None
    nos: str
    batch: int
    status: Status = Status.NOT_TOUCHED
    stage: str = ""  # the last stage reached
    changes: int = 0
    diff: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    commit_started: float | None = None  # epoch seconds: the commit window
    commit_ended: float | None = None
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)  # where the time went

    def enter(self, stage: str) -> None:
        """Mark the start of a stage; the previous one's duration is recorded."""
        now = time.monotonic()
        if self.stage and self._mark is not None:
            self.stage_seconds[self.stage] = round(self.stage_seconds.get(self.stage, 0.0) + now - self._mark, 3)
        self.stage, self._mark = stage, now

    _mark: float | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("_mark")
        data["status"] = self.status.value
        return data


@dataclass(frozen=True)
class DeployOptions:
    change_id: str
    dry_run: bool = False
    confirm_timeout_s: int = 300
    post_check_timeout_s: float = 60.0
    max_failures: int = 0
    command_timeout_s: float = 120.0  # one command; a dropped session shows up as this timeout


def select(names: list[str], devices: Mapping[str, Device], limit: str | None) -> list[str]:
    """--limit: comma-separated globs on names, or `role:ctsw`, `zone:2` tokens (all must match one)."""
    if not limit:
        return names
    terms = [t.strip() for t in limit.split(",") if t.strip()]

    def matches(name: str) -> bool:
        device = devices[name]
        for term in terms:
            key, _, value = term.partition(":")
            if value and key == "role" and device.role.value == value:
                return True
            if value and key == "zone" and str(device.zone) == value:
                return True
            if not value and fnmatch.fnmatchcase(name, term):
                return True
        return False

    return [n for n in names if matches(n)]


def pre_checks(ctx: DesignContext, device: Device) -> list[DeviceCheck]:
    model = ctx.model(device)
    reported = (model.sonic.hwsku,) if model.sonic else ()
    peers = tuple(n.address for n in bgp_plan(ctx, device).neighbors)
    return [
        VerifyModel(VerifyModel.Inputs(hostname=device.name, nos=device.nos, models=reported)),
        # recorded, not judged: a change may be the fix for a session that is down
        VerifyBgpBaseline(VerifyBgpBaseline.Inputs(peers=peers, allow_down=len(peers))),
        VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()),
    ]


def post_checks(ctx: DesignContext, device: Device, established_before: tuple[str, ...],
                error_baseline: dict[str, int], widths_before: dict[str, int] | None = None) -> list[DeviceCheck]:
    """After a change (with the baselines recorded before it); `netgen check` passes no route
    baseline and gets no ECMP check, since it has nothing to compare with."""
    # every used port carries RoCE: NIC-facing and fabric ports alike (the views apply PFC to all)
    backend_ports = tuple(p.name for p in ctx.topology.ports[device.name])
    return [
        # no session that was up before the change may be down after it
        VerifyBgpEstablished(VerifyBgpEstablished.Inputs(peers=established_before)),
        VerifyPfcEnabled(VerifyPfcEnabled.Inputs(interfaces=backend_ports,
                                                 priority=ctx.fabric.qos.lossless.pfc_priority)),
        VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()),
        VerifyInterfaceErrors(VerifyInterfaceErrors.Inputs(baseline=error_baseline)),
        VerifyNoDiff(VerifyNoDiff.Inputs()),
        *([VerifyEcmpWidth(VerifyEcmpWidth.Inputs(baseline=widths_before))] if widths_before is not None else []),
    ]


def _failed_detail(results: list[CheckResult]) -> str:
    return "; ".join(f"{r.check}: {r.detail}" for r in results if not r.ok)


def deploy_one(driver: Driver, ctx: DesignContext, device: Device, options: DeployOptions,
               outcome: DeviceOutcome, recover: Callable[[], Driver] | None = None) -> DeviceOutcome:
    """One device through the whole pipeline; the outcome is filled in as stages pass."""
    started = time.monotonic()
    committed = False
    try:
        outcome.enter("pre-check")
        driver.new_round()
        results = [c.run(driver) for c in pre_checks(ctx, device)]
        outcome.checks += [r.as_dict() for r in results]
        if not all(r.ok for r in results):
            outcome.status, outcome.error = Status.FAILED, "pre-check failed: " + _failed_detail(results)
            return outcome
        peers = driver.bgp_peers()
        up_before = tuple(sorted(p for p, state in peers.items() if state == "Established"))
        errors_before = driver.interface_errors()
        widths_before = driver.route_widths()

        outcome.enter("diff")
        staged = driver.stage()
        outcome.diff, outcome.changes = staged.text, staged.changes
        if options.dry_run or staged.empty:
            driver.discard()
            outcome.status = Status.DRY_RUN if options.dry_run else Status.UNCHANGED
            return outcome

        outcome.enter("commit")
        outcome.commit_started = time.time()
        committed = True
        driver.commit(options.confirm_timeout_s)

        outcome.enter("post-check")
        checks = post_checks(ctx, device, up_before, errors_before, widths_before)
        deadline = time.monotonic() + options.post_check_timeout_s
        while True:
            driver.new_round()
            results = [c.run(driver) for c in checks]
            if all(r.ok for r in results) or time.monotonic() >= deadline:
                break
            time.sleep(1.0)  # sessions need a few seconds to come back after a change
        outcome.checks += [r.as_dict() for r in results]
        if all(r.ok for r in results):
            outcome.enter("confirm")
            driver.confirm()
            outcome.status = Status.CHANGED
        else:
            outcome.enter("rollback")
            outcome.error = "post-check failed: " + _failed_detail(results)
            driver.rollback()
            outcome.status = Status.ROLLED_BACK
        outcome.commit_ended = time.time()
        return outcome
    except Exception as exc:  # netmiko raises many types (ReadTimeout, ConfigInvalidException, EOFError, ...)
        outcome.error = f"{outcome.stage}: {type(exc).__name__}: {exc}"[:800]
        outcome.status = _recover(recover, outcome) if committed else Status.FAILED
        if committed:
            outcome.commit_ended = time.time()
        return outcome
    finally:
        outcome.enter(outcome.stage)  # close the last stage's timer
        outcome.seconds = round(time.monotonic() - started, 3)


def _recover(recover: Callable[[], Driver] | None, outcome: DeviceOutcome) -> Status:
    """After a failure past commit: reconnect and roll back, so the device ends on its old config."""
    if recover is None:
        return Status.UNCONFIRMED
    try:
        recover().rollback()
    except Exception as exc:
        outcome.error = f"{outcome.error}; rollback after reconnect failed: {type(exc).__name__}: {exc}"[:1200]
        return Status.UNCONFIRMED
    return Status.ROLLED_BACK


@dataclass
class RolloutReport:
    fabric: str
    change_id: str
    dry_run: bool
    started: float
    finished: float = 0.0
    batches: list[dict[str, Any]] = field(default_factory=list)
    devices: dict[str, DeviceOutcome] = field(default_factory=dict)
    stopped: bool = False
    stopped_reason: str = ""

    @property
    def ok(self) -> bool:
        return not self.stopped and all(o.status in GOOD for o in self.devices.values())

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for outcome in self.devices.values():
            counts[outcome.status.value] = counts.get(outcome.status.value, 0) + 1
        return counts

    def as_dict(self) -> dict[str, Any]:
        return {"fabric": self.fabric, "change_id": self.change_id, "dry_run": self.dry_run, "ok": self.ok,
                "started": self.started, "finished": self.finished, "seconds": round(self.finished - self.started, 3),
                "counts": self.counts(), "stopped": self.stopped, "stopped_reason": self.stopped_reason,
                "batches": self.batches, "devices": {n: o.as_dict() for n, o in self.devices.items()}}


ProgressHook = Callable[[DeviceOutcome], None]


def run_rollout(nr: Nornir, ctx: DesignContext, batches: list[Batch], files: Mapping[str, Mapping[str, str]],
                options: DeployOptions, progress: ProgressHook | None = None) -> RolloutReport:
    drivers = load_drivers()
    report = RolloutReport(ctx.fabric.name, options.change_id, options.dry_run, time.time())
    for batch in batches:
        for name in batch.devices:
            device = ctx.topology.devices[name]
            report.devices[name] = DeviceOutcome(name, device.role.value, device.zone, device.nos, batch.index)
    lock = threading.Lock()

    def task(task: Task) -> Result:
        name = task.host.name
        device = ctx.topology.devices[name]
        outcome = report.devices[name]

        def connect() -> Driver:
            conn = task.host.get_connection("netmiko", task.nornir.config)
            return drivers[device.nos](conn, device, files[name], options.change_id, options.command_timeout_s)

        def reconnect() -> Driver:
            task.host.close_connection("netmiko")
            return connect()

        try:
            outcome.enter("connect")
            driver = connect()
        except Exception as exc:
            outcome.status, outcome.error = Status.FAILED, f"connect: {type(exc).__name__}: {exc}"[:800]
        else:
            deploy_one(driver, ctx, device, options, outcome, reconnect)
        finally:
            with contextlib.suppress(Exception):  # already gone with a dropped session
                task.host.close_connection("netmiko")
        if progress:
            with lock:
                progress(outcome)
        return Result(host=task.host, result=outcome.status.value, failed=outcome.status not in GOOD)

    failures = 0
    for batch in batches:
        members = set(batch.devices)
        nr.filter(filter_func=lambda host, members=members: host.name in members).run(
            task=task, name=f"netgen deploy batch {batch.index}", on_failed=True)
        bad = [n for n in batch.devices if report.devices[n].status not in GOOD]
        failures += len(bad)
        report.batches.append({"index": batch.index, "label": batch.label, "devices": list(batch.devices),
                               "failed": bad})
        canary = batch.label.startswith("canary")
        if bad and (canary or failures > options.max_failures):
            report.stopped = True
            report.stopped_reason = (f"batch {batch.index} ({batch.label}) failed on {', '.join(bad)}; "
                                     + ("a canary failed" if canary else
                                        f"{failures} failure(s), more than --max-failures {options.max_failures}")
                                     + "; later batches were not touched")
            break
    report.finished = time.time()
    return report


__all__ = ["DeployOptions", "DeviceOutcome", "Outcome", "RolloutReport", "Status", "deploy_one", "run_rollout",
           "select"]
