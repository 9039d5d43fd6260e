"""The work behind the `netgen_deploy` Ansible module (roles/netgen_deploy/library/netgen_deploy.py).

The module file holds Ansible's contract (argument spec, documentation); everything it does is
here, typed and tested with the rest of netgen: one device goes through the same pipeline as
`netgen deploy` (pre-checks, diff, commit with a confirm timer / checkpoint, post-checks, confirm or
roll back), on the same Nornir + netmiko connection handling, as a rollout batch of one.

Check mode is netgen's dry run: pre-checks and the device's real diff (read from the device, not
predicted), then the staged change is discarded. `changed` is what Ansible means by it: in check
mode "would change", otherwise "was changed and confirmed". A rolled-back or refused change fails
the task, so a play with `max_fail_percentage: 0` stops before the next batch.

The result carries the device outcome under `netgen` (status, stage, diff, checks, timings), which
`netgen rollout` reads from ansible-runner's events to build the same report as `netgen deploy`.
"""

from __future__ import annotations

import dataclasses
import difflib
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from netgen.deploy.change import (
    DEFAULT_POST_CHECK_TIMEOUT_S,
    MODULE_ARGUMENTS,
    ChangeRefused,
    ChangeRequest,
    plan_change,
)
from netgen.deploy.driver import DriverError, check_change_id
from netgen.deploy.inventory import Credentials, DeviceAccess, make_nornir, nornir_inventory
from netgen.deploy.lock import change_lock, held_by
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import GOOD, DeviceOutcome, Status, run_rollout
from netgen.deploy.rollout import Batch
from netgen.deploy.target import DeployTarget, TargetError, load_context, prepare_target
from netgen.intent import NetgenInputError
from netgen.lock.lease import LockError

RESULT_KEY = "netgen"  # the device outcome in the module result (read by netgen rollout)


def deploy_device(target: DeployTarget, name: str, options: DeployOptions) -> DeviceOutcome:
    """One device on its own: a Nornir of one host and a rollout of one batch, so connection
    handling, reconnect-and-roll-back and timings are exactly `netgen deploy`'s."""
    inventory = nornir_inventory(target.ctx.topology, target.deploy, [name], target.credentials, target.known_hosts)
    report = run_rollout(make_nornir(inventory, 1), target.ctx, [Batch(1, "ansible", (name,))], target.files,
                         options)
    return report.devices[name]


def _path(value: Any) -> Path | None:
    return Path(value).expanduser() if value else None


def _credentials(params: dict[str, Any]) -> Credentials | None:
    """Credentials given as module arguments (from Ansible vault or vars); None: netgen's own
    sources (credentials_file, then NETGEN_USERNAME / NETGEN_PASSWORD / NETGEN_SSH_KEY)."""
    if not params.get("username"):
        if params.get("password") or params.get("ssh_key_file"):
            raise TargetError("password or ssh_key_file given without username")
        return None
    password, key = params.get("password"), params.get("ssh_key_file")
    if not password and not key:
        raise TargetError("username given without password or ssh_key_file")
    return Credentials(params["username"], SecretStr(password) if password else None, _path(key),
                       "module arguments")


def _with_access(target: DeployTarget, name: str, host: str | None, port: int | None) -> DeployTarget:
    """The inventory's ansible_host / ansible_port for this device, when given, instead of deploy.yaml's."""
    if not host and not port:
        return target
    management = target.deploy.management
    current = management.devices.get(name, DeviceAccess())
    try:
        access = DeviceAccess.model_validate({"host": host or current.host, "port": port or current.port})
    except ValidationError:
        raise TargetError(f"host {host!r} / port {port!r} (from ansible_host / ansible_port): give a host name or IP"
                          " address (letters, digits, '.', ':', '-') and a port from 1 to 65535") from None
    deploy = target.deploy.model_copy(update={"management": management.model_copy(
        update={"devices": {**management.devices, name: access}})})
    return dataclasses.replace(target, deploy=deploy)


def run(params: dict[str, Any], check_mode: bool) -> dict[str, Any]:
    """The module result for `params` (the module's validated arguments). Never raises for bad
    input: the result fails with a message that names the argument or file and the fix."""
    name = str(params["device"])
    try:
        loaded, ctx = load_context(params["fabric"])
        if name not in ctx.topology.devices:
            close = difflib.get_close_matches(name, list(ctx.topology.devices), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise TargetError(f"device {name!r} is not in {params['fabric']}{hint}: the inventory and the fabric"
                              " disagree; generate the inventory with `netgen ansible-inventory`")
        target = prepare_target(ctx, loaded.source, limit=name, configs=_path(params.get("configs")),
                                credentials=_credentials(params),
                                credentials_file=_path(params.get("credentials_file")),
                                known_hosts=_path(params.get("known_hosts")),
                                verify_host_keys=bool(params.get("verify_host_keys", True)))
        target = _with_access(target, name, params.get("host"), params.get("port"))
        change_id = check_change_id(params.get("change_id") or time.strftime("ansible-%Y%m%d-%H%M%S"))
    except NetgenInputError as exc:
        return {"failed": True, "changed": False, "msg": "; ".join(p.render() for p in exc.problems)}
    except (TargetError, DriverError, ValueError) as exc:
        return {"failed": True, "changed": False, "msg": str(exc).splitlines()[0]}
    try:
        plan = plan_change(target, _change_request(params, change_id, check_mode))
    except ChangeRefused as exc:
        return {"failed": True, "changed": False, "msg": _refusal(exc, params)}
    if check_mode:
        return result_of(deploy_device(target, name, plan.options), check_mode)
    try:
        token = params.get("lock_token")
        if token:  # under netgen rollout's lease for the whole run
            check = held_by(ctx, target.fabric_file, target.deploy, [name], str(token))
            return result_of(deploy_device(target, name, dataclasses.replace(plan.options, lock_check=check)),
                             check_mode)
        with change_lock(ctx, target.fabric_file, target.deploy, [name], command=f"ansible netgen_deploy {name}",
                         change_id=change_id) as lock:
            return result_of(deploy_device(target, name, dataclasses.replace(plan.options, lock_check=lock.check)),
                             check_mode)
    except LockError as exc:
        return {"failed": True, "changed": False, "msg": str(exc)}


def _change_request(params: dict[str, Any], change_id: str, check_mode: bool) -> ChangeRequest:
    """The change the arguments ask for: as `netgen deploy` plans it (change.plan_change), each module
    run of a change appending to its one journal."""
    timeout, post_check = params.get("confirm_timeout"), params.get("post_check_timeout")
    return ChangeRequest(change_id, dry_run=check_mode,
                         post_check_timeout_s=DEFAULT_POST_CHECK_TIMEOUT_S if post_check is None else float(post_check),
                         remove_unmanaged=bool(params.get("remove_unmanaged")),
                         policy={} if timeout is None else {"confirm_timeout_s": timeout},
                         append_journal=True, names=MODULE_ARGUMENTS)


def _refusal(exc: ChangeRefused, params: dict[str, Any]) -> str:
    """The plan's refusal, in the module's words: its one policy argument, confirm_timeout, by name."""
    if exc.validation is None:
        return str(exc)
    # the policy model holds the bounds (a commit timer shorter than the post-checks is a trap)
    reason = exc.validation.errors()[0]["msg"].lower()
    return f"confirm_timeout {params.get('confirm_timeout')!r}: {reason} (seconds in the commit-confirm window)"


def result_of(outcome: DeviceOutcome, check_mode: bool) -> dict[str, Any]:
    """Ansible's view of an outcome: changed, failed, msg, the diff, and the outcome itself."""
    # an unconfirmed, diverged or unknown device may still hold the change (EOS reverts only when its
    # timer runs out), a confirmed-unsaved one does: changed unless it was read back holding the old config
    holds_old = (outcome.readback or {}).get("holds") == "old"
    may_hold = (Status.UNCONFIRMED, Status.DIVERGED, Status.CONFIRMED_UNSAVED, Status.UNKNOWN)
    changed = (outcome.status is Status.CHANGED or (check_mode and outcome.changes > 0)
               or (outcome.status in may_hold and not holds_old))
    result: dict[str, Any] = {
        "changed": changed, "status": outcome.status.value, "changes": outcome.changes,
        RESULT_KEY: outcome.as_dict(),
    }
    if outcome.diff:
        result["diff"] = {"prepared": outcome.diff}  # shown by ansible-playbook --diff
    if outcome.status in GOOD:
        result["msg"] = {Status.CHANGED: f"{outcome.changes} change(s) committed, post-checks passed, confirmed",
                         Status.UNCHANGED: "already runs the intent",
                         Status.DRY_RUN: f"check mode: {outcome.changes} change(s) would be made"}[outcome.status]
    else:
        result["failed"] = True
        result["msg"] = f"{outcome.status.value}: {outcome.error or 'no detail recorded (see the netgen result)'}"
    return result


__all__ = ["RESULT_KEY", "deploy_device", "result_of", "run"]
