"""A change's plan, built once for every caller that pushes: `netgen deploy` and `netgen rollout`
(from the command line) and the netgen_deploy Ansible module (from its arguments, which `netgen
rollout` sets from the same plan). The plan is the rollout policy (deploy.yaml's, with the caller's
overrides), its failure-domain batches, and the push options: the change id, the commit-confirm
window checked against the post-checks, the journal and what the change may remove. A request the
plan cannot honour is refused with one line that names the option as the caller's user spells it.

Then the change itself, as `netgen deploy` runs it: pushed batch by batch (pipeline.run_rollout),
after `--resume` rolled back what an interrupted run of it left in flight; and `netgen recover`,
which finishes such a change from its journal (recover.recover_change)."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from netgen.deploy.connect import nornir_for
from netgen.deploy.driver import DriverError, check_change_id
from netgen.deploy.inventory import RolloutPolicy
from netgen.deploy.journal import Journal, JournalError, JournalView, default_path, read
from netgen.deploy.lock import change_lock
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import ProgressHook, RolloutReport, check_timeouts, run_rollout
from netgen.deploy.recover import recover_change, recovered
from netgen.deploy.rollout import Batch, plan_batches, violations
from netgen.deploy.target import DeployTarget
from netgen.topology.selection import select

DEFAULT_POST_CHECK_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class OptionNames:
    """How the caller's user names the timeouts, for the messages that refuse them. A confirm
    timeout that comes from deploy.yaml is named by its file and key where `deploy_yaml_names` holds."""

    confirm_timeout: str = "--confirm-timeout"
    post_check_timeout: str = "--post-check-timeout"
    deploy_yaml_names: bool = True


COMMAND_LINE = OptionNames()
MODULE_ARGUMENTS = OptionNames("confirm_timeout", "post_check_timeout", deploy_yaml_names=False)


@dataclass(frozen=True)
class ChangeRequest:
    """What the caller asks of a change. `policy`: rollout policy fields (RolloutPolicy: workers,
    rtsw_batch_size, confirm_timeout_s, ...) given over deploy.yaml's. `journal`: where the change's
    journal goes (default: journal.default_path); `append_journal`: a journal already there is
    added to (each Ansible module run of one change), else refused (one `netgen deploy` per change
    id; `--resume` finishes it). A dry run keeps no journal."""

    change_id: str
    dry_run: bool = False
    post_check_timeout_s: float = DEFAULT_POST_CHECK_TIMEOUT_S
    remove_unmanaged: bool = False
    keep_drained: bool = False  # a drained switch gets the change with its drain kept (else refused)
    policy: Mapping[str, Any] = field(default_factory=dict)
    journal: Path | None = None
    append_journal: bool = False
    names: OptionNames = COMMAND_LINE


class ChangeRefused(ValueError):
    """A request the plan cannot honour: the message is one line naming the option. `internal`: a
    netgen bug (the planner broke its own policy); `validation`: the policy's own refusal of an
    override, for a caller that words it itself."""

    def __init__(self, message: str, *, internal: bool = False, validation: ValidationError | None = None) -> None:
        super().__init__(message)
        self.internal = internal
        self.validation = validation


@dataclass(frozen=True)
class ChangePlan:
    policy: RolloutPolicy
    batches: list[Batch]
    options: DeployOptions


def plan_change(target: DeployTarget, request: ChangeRequest) -> ChangePlan:
    """The policy, batches and options of the change `request` asks for on `target`'s devices."""
    rollout = target.deploy.rollout
    try:
        policy = type(rollout).model_validate({**rollout.model_dump(), **request.policy})
    except ValidationError as exc:
        raise ChangeRefused(f"bad rollout option: {exc}", validation=exc) from None
    try:
        change = check_change_id(request.change_id)
    except DriverError as exc:
        raise ChangeRefused(str(exc).splitlines()[0]) from None
    problem = check_timeouts(policy.confirm_timeout_s, request.post_check_timeout_s,
                             confirm_name=_confirm_name(target, request),
                             post_check_name=request.names.post_check_timeout)
    if problem:
        raise ChangeRefused(problem)
    batches = plan_batches(target.ctx.topology, target.names, policy)
    problems = violations(batches, target.ctx.topology, policy)
    if problems:  # the planner's own rules, checked again: a bug if this ever fires
        raise ChangeRefused("rollout plan breaks its policy: " + "; ".join(problems), internal=True)
    journal = None if request.dry_run else _journal(request, change)
    options = DeployOptions(change_id=change, dry_run=request.dry_run, confirm_timeout_s=policy.confirm_timeout_s,
                            post_check_timeout_s=request.post_check_timeout_s, max_failures=policy.max_failures,
                            command_timeout_s=target.deploy.ssh.command_timeout_s, journal=journal,
                            ownership=target.ownership(request.remove_unmanaged),
                            keep_drained=request.keep_drained)
    return ChangePlan(policy, batches, options)


def _confirm_name(target: DeployTarget, request: ChangeRequest) -> str:
    if "confirm_timeout_s" in request.policy or not request.names.deploy_yaml_names:
        return request.names.confirm_timeout
    return f"{target.fabric_file.parent / 'deploy.yaml'} rollout.confirm_timeout_s"


def _journal(request: ChangeRequest, change: str) -> Journal:
    path = request.journal or default_path(change)
    if path.exists() and not request.append_journal:
        raise ChangeRefused(
            f"change {change} already has a journal at {path}: `netgen deploy --resume {change}` finishes it,"
            f" `netgen recover --change-id {change}` rolls back what it left in flight; or give a new --change-id")
    try:
        return Journal(path, change)
    except JournalError as exc:
        raise ChangeRefused(str(exc)) from None


# a progress display over N devices, as a context that yields the hook each finished device is given to
DeviceProgress = Callable[[int], AbstractContextManager[ProgressHook | None]]


@contextlib.contextmanager
def no_progress(_total: int) -> Iterator[ProgressHook | None]:
    yield None


def read_change(change_id: str, journal: Path | None = None) -> JournalView:
    """The journal of an earlier change (`journal`, default: where `netgen deploy` writes it)."""
    path = journal or default_path(change_id)
    if not path.is_file():
        raise ChangeRefused(f"no deploy journal at {path}: give the change id of an earlier `netgen deploy` (and"
                            " --journal if it used one)")
    try:
        return read(path)
    except JournalError as exc:
        raise ChangeRefused(str(exc)) from None


def _record_edited(options: DeployOptions, target: DeployTarget, configs: Path | None) -> None:
    """The journal's record of the files used though edited, before anything is pushed (a journal
    line holds names and reasons, never a configuration)."""
    if options.journal is None or not target.edited_configs:
        return
    try:
        options.journal.write(None, "accepted_edited_configs", configs=str(configs), files=target.edited_configs)
    except JournalError as exc:
        raise ChangeRefused(str(exc)) from None


@dataclass
class ChangeRun:
    """What a push did. `complete` False: `resumed` could not roll back every device the
    interrupted run left in flight, and `report` is that recovery's (stopped); nothing else was touched."""

    report: RolloutReport
    complete: bool = True


RESUME_STOPPED = ("--resume: not every device the interrupted run left in flight could be rolled back; nothing"
                  " else touched")


def push_change(target: DeployTarget, plan: ChangePlan, *, configs: Path | None = None,
                resumed: JournalView | None = None, progress: DeviceProgress = no_progress) -> ChangeRun:
    """Push the planned change: the files of --configs DIR used though edited journaled first; with
    `resumed` (an interrupted run of this change), what it left in flight rolled back; then the
    rollout, batch by batch (pipeline.run_rollout)."""
    if plan.options.dry_run:  # reads only: no lock, nothing to keep others from
        with progress(len(target.names)) as tick:
            return ChangeRun(run_rollout(nornir_for(target, plan.policy.workers), target.ctx, plan.batches,
                                         target.files, plan.options, progress=tick))
    names = sorted({*target.names, *(resumed.records if resumed is not None else ())})
    lock = change_lock(target.ctx, target.fabric_file, target.deploy, names,
                       command=f"netgen deploy --change-id {plan.options.change_id}", change_id=plan.options.change_id)
    with lock:  # LockHeld (exit 1, the holder named) before anything is read
        options = dataclasses.replace(plan.options, lock_check=lock.check)
        _record_edited(options, target, configs)
        nr = nornir_for(target, plan.policy.workers)
        if resumed is not None and resumed.in_flight():
            with progress(len(resumed.in_flight())) as tick:
                recovery = recover_change(nr, target.ctx, resumed, target.files, options, confirm=False,
                                          progress=tick)
            if not recovered(recovery, confirm=False):
                recovery.stopped, recovery.stopped_reason = True, RESUME_STOPPED
                return ChangeRun(recovery, complete=False)
        with progress(len(target.names)) as tick:
            return ChangeRun(run_rollout(nr, target.ctx, plan.batches, target.files, options, progress=tick))


def nothing_in_flight(view: JournalView, change_id: str) -> RolloutReport:
    """The report of a recovery with nothing to do."""
    now = time.time()
    return RolloutReport(view.fabric or "", change_id, False, now, finished=now)


def recover_in_flight(target: DeployTarget, view: JournalView, change_id: str, *, limit: str | None = None,
                      confirm: bool = False, workers: int | None = None, configs: Path | None = None,
                      progress: DeviceProgress = no_progress) -> RolloutReport:
    """Finish what change `change_id` (its journal read as `view`) left in flight on `target`'s
    devices (those `limit` keeps):
    roll each back to its old config, or `confirm` it where it runs exactly the intended config
    (recover.recover_change). The journal of `view` records every step."""
    pending = [r.device for r in view.in_flight()]
    chosen = set(select(target.names, target.ctx.topology.devices, limit))  # --limit narrows it further
    if not chosen:
        raise ChangeRefused(f"--limit {limit!r} matches none of the devices in flight: {', '.join(pending)}")
    view.records = {n: r for n, r in view.records.items() if n in chosen}
    try:
        journal = Journal(view.path, change_id)
    except JournalError as exc:
        raise ChangeRefused(str(exc)) from None
    lock = change_lock(target.ctx, target.fabric_file, target.deploy, sorted(view.records),
                       command=f"netgen recover --change-id {change_id}", change_id=change_id)
    with lock:  # LockHeld (exit 1, the holder named) before anything is read
        options = DeployOptions(change_id=change_id, command_timeout_s=target.deploy.ssh.command_timeout_s,
                                journal=journal, lock_check=lock.check)
        _record_edited(options, target, configs)
        nr = nornir_for(target, workers)
        with progress(len(view.in_flight())) as tick:
            return recover_change(nr, target.ctx, view, target.files, options, confirm=confirm, progress=tick)


__all__ = ["COMMAND_LINE", "DEFAULT_POST_CHECK_TIMEOUT_S", "MODULE_ARGUMENTS", "ChangePlan", "ChangeRefused",
           "ChangeRequest", "ChangeRun", "DeviceProgress", "OptionNames", "nothing_in_flight", "plan_change",
           "push_change", "read_change", "recover_in_flight"]
