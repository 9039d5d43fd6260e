"""`netgen rollout`: run an Ansible playbook (by default roles/rollout.yml) with ansible-runner's
Python API, over an inventory generated from the fabric, and turn its event stream into the same
RolloutReport `netgen deploy` produces.

The playbook's `netgen_deploy` tasks return each device's outcome under `netgen` (see
ansible_module.py); other failures (an undefined variable, a failed assert, an unreachable host)
become a `failed` outcome with Ansible's message. Devices the play never reached stay
`not_touched`, and a play that ended early is reported as stopped, with the batch that ended it.

Secrets: credentials reach the module through the environment Ansible inherits (NETGEN_*), a
credentials file, or vault variables passed with no_log; never through extra vars or the inventory.
ansible-runner records the job's environment in `artifacts/<id>/command`; netgen blanks the
credential variables in that file as soon as it is written, and removes the whole private data
directory after the run unless `--artifacts DIR` asks to keep it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from netgen.deploy.ansible_inventory import ansible_inventory, yaml_inventory
from netgen.deploy.ansible_module import RESULT_KEY
from netgen.deploy.inventory import KEY_ENV, PASSWORD_ENV, USERNAME_ENV, RolloutPolicy
from netgen.deploy.lock import change_lock
from netgen.deploy.options import DeployOptions
from netgen.deploy.pipeline import GOOD, DeviceOutcome, RolloutReport, Status
from netgen.deploy.rollout import Batch
from netgen.deploy.target import DeployTarget
from netgen.platforms.output_dir import RenderDirError, render_or_read
from netgen.rendered import RenderInputError
from netgen.resources import ROLES

DEFAULT_PLAYBOOK = ROLES / "rollout.yml"  # the checkout's roles/, or the wheel's copy (netgen/resources.py)
# Environment variables blanked in ansible-runner's record of the job environment: netgen's own
# credentials and anything that looks like someone else's secret (cloud keys, vault passwords).
SECRET_ENV = re.compile(rf"^({PASSWORD_ENV}|{KEY_ENV}|{USERNAME_ENV})$|PASSW|SECRET|TOKEN|CREDENTIAL|_KEY$",
                        re.IGNORECASE)
REDACTED = "********"
DEVICE_EVENTS = {"runner_on_ok", "runner_on_failed", "runner_on_unreachable"}


class RolloutError(Exception):
    """The playbook could not be run at all (missing playbook, ansible-runner refused to start)."""


@dataclass
class AnsibleRun:
    """What Ansible itself said: runner status and rc, the per-host stats, the end of its output."""

    status: str = ""
    rc: int | None = None
    stats: dict[str, dict[str, int]] = field(default_factory=dict)
    tail: str = ""  # last lines of ansible-playbook's output, for a failure that is not a device's
    artifacts: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "rc": self.rc, "stats": self.stats, "tail": self.tail,
                "artifacts": self.artifacts}


@dataclass(frozen=True)
class RolloutRequest:
    playbook: Path
    fabric: Path  # the fabric file, absolute: the module loads it again on the controller
    policy: RolloutPolicy
    batches: list[Batch]
    options: DeployOptions
    configs: Path | None = None
    credentials_file: Path | None = None
    artifacts: Path | None = None  # keep ansible-runner's private data dir here
    extra_vars: Mapping[str, Any] = field(default_factory=dict)
    remove_unmanaged: bool = False  # --remove-unmanaged, passed to every device's task


def extravars(target: DeployTarget, request: RolloutRequest) -> dict[str, Any]:
    """Variables for the play: where the fabric is and how to push; no credential ever. The user's
    extra vars cannot override netgen's (the batches must stay the planned ones)."""
    values: dict[str, Any] = {
        "netgen_fabric": str(request.fabric),
        "netgen_serial": [len(b.devices) for b in request.batches],
        "netgen_change_id": request.options.change_id,
        "netgen_confirm_timeout": request.options.confirm_timeout_s,
        "netgen_post_check_timeout": request.options.post_check_timeout_s,
        "netgen_verify_host_keys": target.known_hosts is not None,
        "netgen_remove_unmanaged": request.remove_unmanaged,
    }
    if target.known_hosts is not None:
        values["netgen_known_hosts"] = str(target.known_hosts.resolve())
    if request.configs is not None:
        values["netgen_configs"] = str(request.configs.resolve())
    if request.credentials_file is not None:
        values["netgen_credentials_file"] = str(request.credentials_file.resolve())
    return {**request.extra_vars, **values}


def extra_vars(items: Iterable[str]) -> dict[str, str]:
    """`-e KEY=VALUE` items for the user's playbook. A netgen_* variable is refused: netgen rollout
    sets those from the fabric and the options, so the batches stay the planned ones."""
    found: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise RolloutError(f"-e {item!r}: expected KEY=VALUE with KEY a variable name")
        if key.startswith("netgen_"):
            raise RolloutError(f"-e {key}: netgen_* variables are set by netgen rollout from the fabric and the"
                               " options (--limit, --change-id, --confirm-timeout, ...), so the batches stay the"
                               " planned ones")
        found[key] = value
    return found


def check_configs(target: DeployTarget, configs: Path | None) -> None:
    """The files of --configs DIR refused here, before any play, as each device's module run would
    refuse them: the module reads DIR itself and takes nothing netgen cannot vouch for. A render
    error (a netgen bug) is raised as it is."""
    if configs is None:
        return
    try:
        render_or_read(target.ctx, [target.ctx.topology.devices[n] for n in target.names], configs)
    except (RenderDirError, RenderInputError) as exc:
        raise RolloutError(f"{exc} (netgen rollout takes no --accept-edited-configs: the Ansible module reads DIR"
                           " itself; `netgen deploy --configs DIR --accept-edited-configs` pushes edited files)"
                           ) from None


def _update(outcome: DeviceOutcome, data: Mapping[str, Any]) -> None:
    """Copy a module-reported outcome (DeviceOutcome.as_dict) onto the report's outcome."""
    outcome.status = Status(data.get("status", Status.FAILED.value))
    for name in ("stage", "changes", "diff", "checks", "error", "commit_started", "commit_ended", "seconds",
                 "stage_seconds"):
        if name in data:
            setattr(outcome, name, data[name])


class EventCollector:
    """ansible-runner's event handler: device outcomes into the report, progress as each lands."""

    def __init__(self, report: RolloutReport, progress: Callable[[DeviceOutcome], None] | None) -> None:
        self.report, self.progress = report, progress
        self.done: set[str] = set()

    def __call__(self, event: dict[str, Any]) -> bool:
        kind = event.get("event")
        data = event.get("event_data") or {}
        host = data.get("host")
        if kind not in DEVICE_EVENTS or host not in self.report.devices:
            return True
        outcome = self.report.devices[host]
        result = data.get("res") or {}
        if isinstance(result.get(RESULT_KEY), dict):
            _update(outcome, result[RESULT_KEY])
        elif result.get("censored") and str(data.get("task_action", "")).endswith("netgen_deploy"):
            # `no_log: true` on the task hides the outcome: netgen cannot tell what happened, so
            # the device cannot count as good (the module already hides the password by itself)
            outcome.status = Status.FAILED
            outcome.stage = outcome.stage or "ansible"
            outcome.error = ("the netgen_deploy task ran with no_log: true, which hides its outcome from netgen;"
                             " remove no_log (the module never returns the password)")
        elif kind != "runner_on_ok" and not data.get("ignore_errors"):
            # a task other than the module failed for this host (or it was unreachable)
            outcome.status = Status.FAILED
            outcome.stage = outcome.stage or "ansible"
            outcome.error = f"ansible task {data.get('task', '?')!r}: {result.get('msg', kind)}"[:800]
        else:
            return True
        if host not in self.done:
            self.done.add(host)
            if self.progress:
                self.progress(outcome)
        return True


def _blank_secrets(artifact_dir: Path) -> None:
    """ansible-runner writes the job environment into `command`; blank the credential variables."""
    command = artifact_dir / "command"
    try:
        data = json.loads(command.read_text())
    except (OSError, ValueError):
        return
    env = data.get("env") or {}
    if any(SECRET_ENV.search(name) for name in env):
        data["env"] = {k: (REDACTED if SECRET_ENV.search(k) else v) for k, v in env.items()}
        command.write_text(json.dumps(data))


def ansible_playbook() -> str:
    """The ansible-playbook of the environment netgen runs in (a venv's bin need not be on PATH),
    else the one on PATH: the module then runs with that environment's Python, which has netgen.
    (ansible-runner's `binary=` would switch it to raw mode, which drops the playbook argument,
    so its directory goes first on the job's PATH instead.)"""
    found = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent)) or shutil.which("ansible-playbook")
    if found is None:
        raise RolloutError("ansible-playbook not found beside this Python or on PATH: pip install ansible-core")
    return found


def _roles_path() -> str:
    """The user's roles path plus netgen's roles/, so a playbook anywhere can use netgen_deploy."""
    own = os.environ.get("ANSIBLE_ROLES_PATH", "")
    return os.pathsep.join([p for p in own.split(os.pathsep) if p] + [str(ROLES)])


def run_playbook(target: DeployTarget, request: RolloutRequest,
                 progress: Callable[[DeviceOutcome], None] | None = None) -> tuple[RolloutReport, AnsibleRun]:
    """Run the playbook to completion, under the change lock of every zone it touches (a dry run
    takes none): each task checks that lease by its token. The report says per device what happened."""
    if request.options.dry_run:
        return _run_playbook(target, request, progress, None)
    names = [n for b in request.batches for n in b.devices]
    with change_lock(target.ctx, target.fabric_file, target.deploy, names,
                     command=f"netgen rollout --change-id {request.options.change_id}",
                     change_id=request.options.change_id) as lock:
        return _run_playbook(target, request, progress, lock.lease.token)


def _run_playbook(target: DeployTarget, request: RolloutRequest, progress: Callable[[DeviceOutcome], None] | None,
                  lock_token: str | None) -> tuple[RolloutReport, AnsibleRun]:
    import ansible_runner  # noqa: PLC0415  (an import that only `netgen rollout` needs)

    if not request.playbook.is_file():
        raise RolloutError(f"playbook {request.playbook} not found")
    binary = ansible_playbook()
    ctx = target.ctx
    report = RolloutReport(ctx.fabric.name, request.options.change_id, request.options.dry_run, time.time())
    for batch in request.batches:
        for name in batch.devices:
            device = ctx.topology.devices[name]
            report.devices[name] = DeviceOutcome(name, device.role.value, device.zone, device.nos, batch.index)
    names = [n for b in request.batches for n in b.devices]
    inventory = yaml_inventory(ansible_inventory(ctx.topology, target.deploy, names, request.policy))

    private = request.artifacts or Path(tempfile.mkdtemp(prefix="netgen-rollout-"))
    private.mkdir(parents=True, exist_ok=True)
    os.chmod(private, 0o700)
    (private / "inventory").mkdir(exist_ok=True)
    inventory_file = private / "inventory" / "netgen.json"
    inventory_file.write_text(json.dumps(inventory, indent=1))
    ident = request.options.change_id
    collector = EventCollector(report, progress)

    def on_status(status: dict[str, Any], runner_config: Any = None) -> None:
        if status.get("status") == "running":  # `command` (with the environment) was just written
            _blank_secrets(private / "artifacts" / ident)

    cmdline = [f"--forks {request.policy.workers}", "--diff"]
    if request.options.dry_run:
        cmdline.append("--check")
    run = AnsibleRun(artifacts=str(private) if request.artifacts else None)
    handlers = _signal_handlers()
    try:
        runner = ansible_runner.run(
            private_data_dir=str(private), ident=ident, playbook=str(request.playbook.resolve()),
            inventory=str(inventory_file),
            extravars={**extravars(target, request), **({"netgen_lock_token": lock_token} if lock_token else {})},
            cmdline=" ".join(cmdline),
            envvars={"PATH": os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", "")]),
                     "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_ROLES_PATH": _roles_path(),
                     "ANSIBLE_LOCAL_TEMP": str(private / "tmp"), "ANSIBLE_DEPRECATION_WARNINGS": "0"},
            event_handler=collector, status_handler=on_status, quiet=True, rotate_artifacts=0)
        run.status, run.rc = str(runner.status), runner.rc
        run.stats = {k: v for k, v in (runner.stats or {}).items() if isinstance(v, dict)}
        with open(runner.stdout.name) as handle:
            run.tail = "\n".join(handle.read().splitlines()[-15:])
    finally:
        _restore(handlers)
        _blank_secrets(private / "artifacts" / ident)
        if request.artifacts is None:
            shutil.rmtree(private, ignore_errors=True)
    _finish(report, request.batches, run)
    return report, run


# ansible_runner.run() sets SIGTERM and SIGINT handlers of its own in the main thread, so a signal
# cancels the playbook (ansible_runner.utils.signal_handler), and leaves them set when it returns.
# netgen puts back the caller's: after a rollout, Ctrl-C must still interrupt the program that
# called netgen, and SIGTERM still end it (a multiprocessing pool terminates its workers so).
_RUNNER_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _signal_handlers() -> dict[int, Any] | None:
    if threading.current_thread() is not threading.main_thread():
        return None  # ansible_runner sets none there either
    return {number: signal.getsignal(number) for number in _RUNNER_SIGNALS}


def _restore(handlers: dict[int, Any] | None) -> None:
    for number, handler in (handlers or {}).items():
        signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _finish(report: RolloutReport, batches: list[Batch], run: AnsibleRun) -> None:
    """Batches with their failures, and why the rollout stopped (if it did)."""
    for batch in batches:
        bad = [n for n in batch.devices if report.devices[n].status not in GOOD | {Status.NOT_TOUCHED}]
        report.batches.append({"index": batch.index, "label": batch.label, "devices": list(batch.devices),
                               "failed": bad})
    failed_batches = [b for b in report.batches if b["failed"]]
    untouched = [n for n, o in report.devices.items() if o.status is Status.NOT_TOUCHED]
    if failed_batches:
        first = failed_batches[0]
        report.stopped = bool(untouched) or run.rc != 0
        report.stopped_reason = (f"batch {first['index']} ({first['label']}) failed on {', '.join(first['failed'])};"
                                 f" ansible-playbook ended the play (max_fail_percentage)"
                                 + ("; later batches were not touched" if untouched else ""))
    elif run.rc != 0 or untouched:
        report.stopped = True
        report.stopped_reason = (f"ansible-playbook {run.status or 'failed'} (rc {run.rc})"
                                 + (f" and never reached {len(untouched)} device(s)" if untouched else "")
                                 + (": " + run.tail.strip().splitlines()[-1] if run.tail.strip() else ""))
    report.finished = time.time()


__all__ = ["DEFAULT_PLAYBOOK", "AnsibleRun", "RolloutError", "RolloutRequest", "run_playbook", "yaml_inventory"]
