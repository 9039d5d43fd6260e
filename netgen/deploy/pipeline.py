"""The deploy pipeline: per device pre-checks -> diff -> (dry run stops here) -> commit with a way
back -> post-checks -> confirm or roll back; devices in failure-domain batches on Nornir's threaded
runner; the first failed batch stops the rollout and nothing after it is touched.

Every status past the commit is read back from the device (drivers.base.Readback), never inferred
from the commands sent: a confirm is `changed` only when the device runs the new config, has it
saved and has no revert pending, and `confirmed_unsaved` when it runs it with no revert pending but
boots on the old one; a rollback is `rolled_back` only when the device runs the old config again
with nothing pending. Anything else is `diverged`, with what was seen. A confirm whose answer is
lost is finished from a read-back (`_finish_confirm`), and is `unknown` when nothing can be read.
Each transition is journaled before it happens (journal.py), so an interrupted run can be finished
by `netgen recover` / `netgen deploy --resume`.

Every outcome lands in a report (JSON-serialisable) that says, per device, what changed, what
rolled back, what was not touched, and when each commit window opened and closed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from nornir.core import Nornir
from nornir.core.task import Result, Task

from netgen.context import DesignContext
from netgen.deploy.checks import (
    CheckResult,
    DeviceCheck,
    Outcome,
    PlannedNeighbor,
    VerifyBgpBaseline,
    VerifyBgpEstablished,
    VerifyEcmpWidth,
    VerifyInterfaceErrors,
    VerifyLldpNeighbors,
    VerifyModel,
    VerifyNoDiff,
    VerifyNoPfcStorm,
    VerifyPfcEnabled,
    lldp_verdicts,
)
from netgen.deploy.connect import connect_driver, disconnect
from netgen.deploy.driver import (
    HOLDS_NEW,
    HOLDS_OLD,
    DrainReadback,
    Driver,
    DriverError,
    Readback,
    drain_word,
)
from netgen.deploy.journal import ROLLOUT, State
from netgen.deploy.options import DeployOptions
from netgen.deploy.rollout import Batch
from netgen.platforms.base import renderers
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
    CONFIRMED_UNSAVED = "confirmed_unsaved"  # read back confirmed (nothing will revert it) but not saved
    UNKNOWN = "unknown"  # a confirm went out, its answer was lost and the device could not be read back
    DIVERGED = "diverged"  # read back after a step: the device holds what the step did not ask for


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
    ownership: dict[str, Any] | None = None  # what the change keeps, removes and refused (OwnershipReport)
    checks: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    readback: dict[str, Any] | None = None  # what the device was seen holding after the last step
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


CONFIRM_MARGIN_S = 30  # seconds the confirm window must leave after the post-checks for the confirm itself
MAX_TIMEOUT_S = 3600


def check_timeouts(confirm_timeout_s: float, post_check_timeout_s: float, *, confirm_name: str = "--confirm-timeout",
                   post_check_name: str = "--post-check-timeout") -> str | None:
    """Why these timeouts cannot work, naming the options; None when they can. The commit-confirm
    window must cover the post-checks, or the device would revert a change the checks are about to
    pass (and the confirm would then find it gone)."""
    for name, value in ((confirm_name, confirm_timeout_s), (post_check_name, post_check_timeout_s)):
        if not isinstance(value, (int, float)) or value != value or not 0 < value <= MAX_TIMEOUT_S:  # noqa: PLR0124
            return f"{name} {value!r}: give seconds, more than 0 and at most {MAX_TIMEOUT_S}"
    if confirm_timeout_s < post_check_timeout_s + CONFIRM_MARGIN_S:
        return (f"{confirm_name} {confirm_timeout_s:g} s does not cover {post_check_name} {post_check_timeout_s:g} s"
                f" plus {CONFIRM_MARGIN_S} s for the confirm: the device would roll back while the checks still run;"
                f" give at least {post_check_timeout_s + CONFIRM_MARGIN_S:g} s")
    return None


def lldp_plan(ctx: DesignContext, device: Device) -> dict[str, PlannedNeighbor]:
    """What every cabled port of the device should hear over LLDP: the peer's name and the port ID
    the peer's NOS sends for the planned port (its renderer plugin says which)."""
    plugins = renderers()
    planned: dict[str, PlannedNeighbor] = {}
    for port in ctx.topology.ports[device.name]:
        peer = ctx.topology.devices.get(port.peer_device)
        if peer is None:  # a host: its NIC's port ID is not in the intent
            planned[port.name] = PlannedNeighbor(system=port.peer_device, port=port.peer_port)
            continue
        peer_port = next(p for p in ctx.topology.ports[peer.name] if p.name == port.peer_port)
        plugin = plugins.get(peer.nos)  # a NOS netgen cannot render: assume it sends the interface name
        port_id = plugin.lldp_port_id(ctx, peer, peer_port) if plugin else peer_port.name
        planned[port.name] = PlannedNeighbor(system=peer.name, port=peer_port.name, port_ids=(port_id,))
    return planned


def lldp_check(ctx: DesignContext, device: Device, required: Iterable[str] = ()) -> VerifyLldpNeighbors:
    return VerifyLldpNeighbors(VerifyLldpNeighbors.Inputs(ports=lldp_plan(ctx, device), required=tuple(required),
                                                          fabric_names=ctx.system_names))


def pre_checks(ctx: DesignContext, device: Device) -> list[DeviceCheck]:
    model = ctx.model(device)
    reported = (model.sonic.hwsku,) if model.sonic else ()
    peers = tuple(n.address for n in bgp_plan(ctx, device).neighbors)
    return [
        VerifyModel(VerifyModel.Inputs(hostname=device.name, nos=device.nos, models=reported)),
        # recorded, not judged: a change may be the fix for a session that is down
        VerifyBgpBaseline(VerifyBgpBaseline.Inputs(peers=peers, allow_down=len(peers))),
        VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()),
        # a miscabled port fails: the config would assume the plan's neighbour; silent or unnamed
        # neighbours pass (recorded), as most are before a first rollout
        lldp_check(ctx, device),
    ]


def lldp_baseline(ctx: DesignContext, device: Device, heard: Mapping[str, list[tuple[str, str]]]) -> tuple[str, ...]:
    """The ports that hear their planned neighbour now: after the change they still must."""
    verdicts = lldp_verdicts(lldp_plan(ctx, device), heard, ctx.system_names)
    return tuple(port for port, (verdict, _) in verdicts.items() if verdict == "planned")


def post_checks(ctx: DesignContext, device: Device, established_before: tuple[str, ...],
                error_baseline: dict[str, int], widths_before: dict[str, int] | None = None,
                lldp_before: Iterable[str] | None = None) -> list[DeviceCheck]:
    """After a change (with the baselines recorded before it); `netgen check` passes no route
    baseline and gets no ECMP check, since it has nothing to compare with. LLDP: every port that
    heard its planned neighbour before still must (`lldp_before`); without a baseline (`netgen
    check`) every switch-to-switch port must, host ports only must not be miscabled."""
    # every used port carries RoCE: NIC-facing and fabric ports alike (the views apply PFC to all)
    backend_ports = tuple(p.name for p in ctx.topology.ports[device.name])
    if lldp_before is None:
        lldp_before = [p.name for p in ctx.topology.ports[device.name] if p.peer_device in ctx.topology.devices]
    return [
        # no session that was up before the change may be down after it
        VerifyBgpEstablished(VerifyBgpEstablished.Inputs(peers=established_before)),
        VerifyPfcEnabled(VerifyPfcEnabled.Inputs(interfaces=backend_ports,
                                                 priority=ctx.fabric.qos.lossless.pfc_priority)),
        VerifyNoPfcStorm(VerifyNoPfcStorm.Inputs()),
        VerifyInterfaceErrors(VerifyInterfaceErrors.Inputs(baseline=error_baseline)),
        VerifyNoDiff(VerifyNoDiff.Inputs()),
        *([VerifyEcmpWidth(VerifyEcmpWidth.Inputs(baseline=widths_before))] if widths_before is not None else []),
        lldp_check(ctx, device, lldp_before),
    ]


def _failed_detail(results: list[CheckResult]) -> str:
    return "; ".join(f"{r.check}: {r.detail}" for r in results if not r.ok)


def drain_precheck(driver: Driver, keep: bool,
                   kept: str = "the change keeps the drain (--keep-drained)",
                   seen: DrainReadback | None = None) -> CheckResult:
    """A drained switch (`netgen drain`) would be undrained by a push of its rendered config, which
    has no drain: refused, unless `keep` (--keep-drained), which puts the drain into what is pushed
    (Driver.keep_drained) so the switch stays drained. Read from the switch, as every check (`seen`:
    read already)."""
    seen = seen if seen is not None else driver.drain_state()
    if seen.running is False and seen.saved is False and not seen.peers:
        return CheckResult("drain", driver.name, Outcome.PASS, "not drained")
    word = drain_word(seen.state) if seen.running is not False or seen.saved is not False else \
        f"sessions drained ({', '.join(sorted(seen.peers))})"
    if keep:
        driver.keep_drained(seen)
        return CheckResult("drain", driver.name, Outcome.PASS, f"{word}: {kept}")
    return CheckResult("drain", driver.name, Outcome.FAIL,
                       f"{word} ({seen.detail}): pushing its rendered config would undrain it; `netgen undrain"
                       f" {driver.name}` (or the link) first, or --keep-drained to keep the drain through the change")


def _moved_since_staged(driver: Driver, options: DeployOptions, drain_seen: DrainReadback | None) -> str:
    """Why the staged change must not be committed ("" : it may): the change lock is no longer this
    change's, or the switch's drain is not what the pre-check read (someone drained or undrained it
    since, by hand or through a netgen that holds no lock): committing what was staged from the old
    read would silently undo (or redo) that drain."""
    if options.lock_check is not None:
        try:
            options.lock_check()
        except Exception as exc:  # LeaseLost, or a store that cannot say
            return str(exc)
    now = driver.drain_state()
    if drain_seen is not None and now.as_dict() != drain_seen.as_dict():
        return (f"its drain changed since the pre-check (then {drain_seen.detail}; now {now.detail}): the staged"
                " change was discarded; run the deploy again")
    return ""


def deploy_one(driver: Driver, ctx: DesignContext, device: Device, options: DeployOptions,
               outcome: DeviceOutcome, recover: Callable[[], Driver] | None = None) -> DeviceOutcome:
    """One device through the whole pipeline; the outcome is filled in as stages pass."""
    started = time.monotonic()
    journal = options.journal
    committed = False
    before: str | None = None
    after: str | None = None

    def note(state: State, **data: Any) -> None:
        if journal is not None and not options.dry_run:
            journal.write(device.name, state, stage=outcome.stage, **data)

    try:
        outcome.enter("pre-check")
        driver.new_round()
        drain_seen: DrainReadback | None = None
        try:
            drain_seen = driver.drain_state()
            drained = drain_precheck(driver, options.keep_drained, seen=drain_seen)
        except Exception as exc:  # a switch that cannot say whether it is drained is not pushed to
            drained = CheckResult("drain", device.name, Outcome.ERROR, f"{type(exc).__name__}: {exc}"[:500])
        results = [drained, *(c.run(driver) for c in pre_checks(ctx, device))]
        outcome.checks += [r.as_dict() for r in results]
        if not all(r.ok for r in results):
            outcome.status, outcome.error = Status.FAILED, "pre-check failed: " + _failed_detail(results)
            note(State.FAILED, reason=outcome.error)
            return outcome
        peers = driver.bgp_peers()
        up_before = tuple(sorted(p for p, state in peers.items() if state == "Established"))
        errors_before = driver.interface_errors()
        widths_before = driver.route_widths()
        lldp_before = lldp_baseline(ctx, device, driver.lldp_neighbors())

        outcome.enter("diff")
        staged = driver.stage()
        outcome.diff, outcome.changes = staged.text, staged.changes
        outcome.ownership = staged.detail.get("ownership")
        before = staged.detail.get("before")
        if options.dry_run or staged.empty:
            driver.discard()
            outcome.status = Status.DRY_RUN if options.dry_run else Status.UNCHANGED
            note(State.UNCHANGED)
            return outcome
        note(State.STAGED, before=before, changes=staged.changes)

        outcome.enter("commit")
        moved = _moved_since_staged(driver, options, drain_seen)
        if moved:
            driver.discard()
            outcome.status, outcome.error = Status.FAILED, f"commit: not sent: {moved}"
            note(State.FAILED, reason=outcome.error)
            return outcome
        note(State.COMMITTING, confirm_timeout_s=options.confirm_timeout_s)
        outcome.commit_started = time.time()
        committed = True
        driver.commit(options.confirm_timeout_s)
        after = driver.running_digest()
        note(State.COMMITTED, after=after)

        outcome.enter("post-check")
        checks = post_checks(ctx, device, up_before, errors_before, widths_before, lldp_before)
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
            note(State.CONFIRMING)
            try:
                driver.confirm()
                seen = driver.readback(before or "", after)
            except Exception as exc:  # a lost answer (or a refusal): what the device did is read back
                _finish_confirm(driver, recover, outcome, before or "", after, note, exc)
                outcome.commit_ended = time.time()
                return outcome
            settle(outcome, seen, confirmed=True)
        else:
            outcome.enter("rollback")
            outcome.error = "post-check failed: " + _failed_detail(results)
            note(State.ROLLING_BACK, reason=outcome.error)
            driver.rollback()
            settle(outcome, driver.readback(before or "", after), confirmed=False)
        note(State(outcome.status.value), **(outcome.readback or {}))
        outcome.commit_ended = time.time()
        return outcome
    except Exception as exc:  # netmiko raises many types (ReadTimeout, ConfigInvalidException, EOFError, ...)
        outcome.error = f"{outcome.stage}: {type(exc).__name__}: {exc}"[:800]
        if committed:
            # the post-checks passed before a confirm was cut short: finish it; roll back otherwise
            _recover(recover, outcome, before or "", after, note, confirm=outcome.stage == "confirm")
            outcome.commit_ended = time.time()
        else:
            outcome.status = Status.FAILED
            note(State.FAILED, reason=outcome.error)
        return outcome
    finally:
        outcome.enter(outcome.stage)  # close the last stage's timer
        outcome.seconds = round(time.monotonic() - started, 3)


def settle(outcome: DeviceOutcome, seen: Readback, *, confirmed: bool) -> None:
    """The status a confirm or a rollback earned, from what the device was seen holding."""
    outcome.readback = seen.as_dict()
    if confirmed and seen.holds == HOLDS_NEW and seen.saved and not seen.pending:
        outcome.status = Status.CHANGED
        return
    if not confirmed and seen.holds == HOLDS_OLD and not seen.pending:
        outcome.status = Status.ROLLED_BACK
        return
    asked = "confirm" if confirmed else "roll back"
    seen_text = f"asked to {asked}, the device was seen: {seen.detail}" + (f"; pending: {seen.pending}"
                                                                            if seen.pending else "")
    if confirmed and seen.holds == HOLDS_NEW and not seen.pending:
        # nothing is left to revert it, but it boots on the old config: only a save is missing
        outcome.status = Status.CONFIRMED_UNSAVED
        seen_text += " (confirmed, not saved: it boots on the old config until `netgen recover` saves it)"
    elif seen.holds == HOLDS_NEW and seen.pending:
        # still inside its commit-confirm window: the device reverts by itself unless confirmed
        outcome.status = Status.UNCONFIRMED
        seen_text += " (it reverts by itself when that runs out, unless `netgen recover --confirm`)"
    else:
        outcome.status = Status.DIVERGED
    seen_text = seen_text[:1000]  # what was seen is kept whole; what led to it is cut first
    outcome.error = "; ".join(filter(None, [(outcome.error or "")[:1200 - len(seen_text) - 2], seen_text]))


LOST_ANSWER_READS = 3  # read-backs after a confirm whose answer was lost; each but the last may send one step


def _why(step: str, exc: Exception) -> str:
    """`step: Type: message` on one line: a refusal whole (the device's reason may be on its last
    line), anything else by its first line (netmiko's messages run to several paragraphs of advice)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = " ".join(lines)[:300] if isinstance(exc, DriverError) else (lines[0][:200] if lines else "")
    return f"{step}: {type(exc).__name__}" + (f": {text}" if text else "")


def _read_as(seen: Readback) -> str:
    """What a read-back after a confirm says, in a few words."""
    if seen.holds != HOLDS_NEW:
        return f"runs the {seen.holds} config"
    if seen.pending:
        return f"not confirmed yet ({seen.pending})"
    return "confirmed and saved" if seen.saved else "confirmed, not saved"


def _finish_confirm(driver: Driver, recover: Callable[[], Driver] | None, outcome: DeviceOutcome, before: str,
                    after: str | None, note: Callable[..., None], failure: Exception) -> None:
    """A confirm (or its save, or the read-back after them) that failed, finished from what the
    device itself says. The confirm may have reached the device or not, the save may have run or
    not: only a read-back tells. So reconnect unless the device answered (a refusal), read back,
    and send only the step the device still lacks: the confirm again while its revert is still
    pending, the save alone once nothing is left to revert it (a second confirm would find nothing
    to confirm, and saving is all a confirmed change can lack). Those answers may be lost too: after
    LOST_ANSWER_READS read-backs, or one read after a refusal, the last read-back decides the
    status (settle); when none could be read the status is `unknown`, with the last one read, if any."""
    story = [_why(outcome.stage, failure) + ("" if isinstance(failure, DriverError) else " (answer lost)")]
    connected = isinstance(failure, DriverError)  # the device answered: the connection still works
    seen: Readback | None = None
    last_seen: Readback | None = None
    refused = False
    for read in range(1, LOST_ANSWER_READS + 1):
        if not connected and recover is not None:
            try:
                driver = recover()
            except Exception as exc:
                story.append(_why("reconnect", exc))
                continue
        try:
            seen = last_seen = driver.readback(before, after)
        except Exception as exc:
            story.append(_why("read back", exc))
            seen, connected = None, isinstance(exc, DriverError)
            continue
        connected = True
        story.append(f"read back: {_read_as(seen)}")
        confirmed = seen.holds == HOLDS_NEW and not seen.pending
        if seen.holds != HOLDS_NEW or (confirmed and seen.saved) or refused or read == LOST_ANSWER_READS:
            break
        step = "save" if confirmed else "confirm"
        note(State.CONFIRMED_UNSAVED if confirmed else State.CONFIRMING, **seen.as_dict(),
             reason=f"read back after a lost answer: {step} next")
        try:
            driver.save() if confirmed else driver.confirm()
        except DriverError as exc:  # the device refused: read it once more, then report
            story.append(_why(step, exc))
            refused = True
        except Exception as exc:
            story.append(_why(step, exc) + " (answer lost)")
            connected = False
        else:
            story.append(f"{step}: answered")
        seen = None  # what was read before the step is out of date
    outcome.error = "; ".join(story)[:800]
    if seen is None:
        outcome.status = Status.UNKNOWN
        outcome.readback = last_seen.as_dict() if last_seen else None
        earlier = f"; the last read-back, before the steps after it: {last_seen.detail}" if last_seen else ""
        outcome.error = f"unknown: could not read back: {outcome.error}{earlier}"[:1200]
        note(State.UNKNOWN, reason=outcome.error)
        return
    settle(outcome, seen, confirmed=True)
    note(State(outcome.status.value), **(outcome.readback or {}), reason=outcome.error or "")


def _recover(recover: Callable[[], Driver] | None, outcome: DeviceOutcome, before: str, after: str | None,
             note: Callable[..., None], *, confirm: bool) -> None:
    """After a failure past the commit: reconnect, read what the device holds, and finish the step
    that was interrupted. A confirm that was under way (the post-checks had passed) is completed if
    the device still runs the new config; anything else is rolled back. Unreachable: unconfirmed."""
    if recover is None:
        outcome.status = Status.UNCONFIRMED
        note(State.UNCONFIRMED, reason=outcome.error)
        return
    try:
        driver = recover()
    except Exception as exc:
        outcome.error = f"{outcome.error}; reconnect failed: {type(exc).__name__}: {exc}"[:1200]
        outcome.status = Status.UNCONFIRMED
        note(State.UNCONFIRMED, reason=outcome.error)
        return
    try:
        seen = driver.readback(before, after)
        if confirm and seen.holds == HOLDS_NEW:
            note(State.CONFIRMING, reason="after a reconnect")
            driver.confirm()
            settle(outcome, driver.readback(before, after), confirmed=True)
        else:
            note(State.ROLLING_BACK, reason="after a reconnect: " + (outcome.error or ""))
            driver.rollback()
            settle(outcome, driver.readback(before, after), confirmed=False)
    except Exception as exc:
        outcome.error = f"{outcome.error}; recovery after reconnect failed: {type(exc).__name__}: {exc}"[:1200]
        try:  # the device answers but refused: say what it holds
            settle(outcome, driver.readback(before, after), confirmed=confirm)
        except Exception:
            outcome.status = Status.UNCONFIRMED
            note(State.UNCONFIRMED, reason=outcome.error)
            return
    note(State(outcome.status.value), **(outcome.readback or {}))


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
    report = RolloutReport(ctx.fabric.name, options.change_id, options.dry_run, time.time())
    for batch in batches:
        for name in batch.devices:
            device = ctx.topology.devices[name]
            report.devices[name] = DeviceOutcome(name, device.role.value, device.zone, device.nos, batch.index)
    if options.journal is not None and not options.dry_run:
        options.journal.write(None, ROLLOUT, fabric=ctx.fabric.name, devices=list(report.devices),
                              confirm_timeout_s=options.confirm_timeout_s)
        for name in report.devices:
            options.journal.write(name, State.PLANNED)
    lock = threading.Lock()

    def task(task: Task) -> Result:
        name = task.host.name
        device = ctx.topology.devices[name]
        outcome = report.devices[name]

        def reconnect() -> Driver:
            disconnect(task)  # nothing to close after an earlier reconnect that failed: Nornir had dropped it
            return connect_driver(task, device, files[name], options)

        try:
            outcome.enter("connect")
            if options.lock_check is not None:
                options.lock_check()  # a lost lock stops the change before this device is touched
            driver = connect_driver(task, device, files[name], options)
        except Exception as exc:
            outcome.status, outcome.error = Status.FAILED, f"connect: {type(exc).__name__}: {exc}"[:800]
            if options.journal is not None and not options.dry_run:
                options.journal.write(name, State.FAILED, stage="connect", reason=outcome.error)
        else:
            deploy_one(driver, ctx, device, options, outcome, reconnect)
        finally:
            disconnect(task)  # already gone with a dropped session
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


__all__ = ["DeviceOutcome", "Outcome", "ProgressHook", "RolloutReport", "Status", "check_timeouts",
           "deploy_one", "run_rollout", "settle"]
