"""`netgen deploy` and `netgen check`: push rendered configs with Nornir + netmiko in failure-domain
batches, or run the device checks read-only."""

from __future__ import annotations

import contextlib
import json
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from nornir.core.task import Result, Task
from rich.markup import escape as markup_escape
from rich.table import Table

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    ProgressBars,
    cli,
    emit_json,
    err,
    escape,
    fabric_argument,
    fail,
    input_failure,
    json_option,
    load_checked,
    out,
    write_replacing,
)
from netgen.deploy.ansible_inventory import ansible_inventory, host_variables, yaml_inventory
from netgen.deploy.ansible_inventory import playbook_vars as rollout_playbook_vars
from netgen.deploy.ansible_rollout import DEFAULT_PLAYBOOK, RolloutError, RolloutRequest, run_playbook
from netgen.deploy.checks import CheckResult, Outcome
from netgen.deploy.drivers.base import DriverError, check_change_id, load_drivers
from netgen.deploy.inventory import (
    RolloutPolicy,
    load_deploy,
    make_nornir,
    nornir_inventory,
)
from netgen.deploy.journal import Journal, JournalError, default_path
from netgen.deploy.journal import read as read_journal
from netgen.deploy.pipeline import (
    DeployOptions,
    DeviceOutcome,
    RolloutReport,
    Status,
    check_timeouts,
    post_checks,
    run_rollout,
    select,
)
from netgen.deploy.recover import recover_change, recovered
from netgen.deploy.rollout import Batch, plan_batches, violations
from netgen.deploy.target import DeployTarget, TargetError, prepare_target
from netgen.intent import NetgenInputError
from netgen.lab.adapters import rendered_inputs
from netgen.lab.plan import LabSliceError
from netgen.platforms.base import RenderError
from netgen.platforms.routing import bgp_plan
from netgen.safe_text import without_controls

DIFF_LINES_SHOWN = 40


def _access_options(command: Any) -> Any:
    for option in reversed([
        click.option("--limit", metavar="PATTERN",
                     help="Only these devices: comma-separated globs, or role:ctsw / zone:2 tokens."),
        click.option("--configs", type=click.Path(file_okay=False, exists=True, path_type=Path), metavar="DIR",
                     help="Use the files of this `netgen render` output directory instead of rendering now."),
        click.option("--credentials", type=click.Path(dir_okay=False, path_type=Path),
                     help="YAML with username and password or key_file, readable only by you."
                          " Default: NETGEN_USERNAME / NETGEN_PASSWORD / NETGEN_SSH_KEY."),
        click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path),
                     help="SSH host keys to verify against (default: deploy.yaml ssh.known_hosts)."),
        click.option("--insecure-no-host-key-check", "insecure", is_flag=True,
                     help="Do not verify SSH host keys (prints a warning; never for production)."),
        click.option("--workers", type=int, help="Devices at once within a batch (default: deploy.yaml)."),
    ]):
        command = option(command)
    return command


accept_edited_option = click.option(
    "--accept-edited-configs", "accept_edited", is_flag=True,
    help="With --configs: use files netgen cannot vouch for (changed since `netgen render` wrote them, or,"
         " where DIR's manifest is not authenticated, not what the fabric renders now); the report and the"
         " journal name each one. Never a symbolic link or a file its manifest does not list.")


def _prepare(fabric: str, limit: str | None, configs: Path | None, credentials_file: Path | None,
             known_hosts: Path | None, insecure: bool, as_json: bool, render: bool = True,
             changes: bool = True, accept_edited: bool = False) -> DeployTarget:
    if accept_edited and configs is None:
        fail("--accept-edited-configs is about the files of --configs DIR: give --configs DIR too", as_json)
    loaded, ctx = load_checked(fabric, as_json, "fix them before deploying")
    try:
        target = prepare_target(ctx, loaded.source, limit=limit, configs=configs,
                                credentials_file=credentials_file, known_hosts=known_hosts,
                                verify_host_keys=not insecure, render=render, changes=changes,
                                accept_edited_configs=accept_edited)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except TargetError as exc:
        fail(str(exc), as_json, EXIT_INTERNAL if exc.internal else EXIT_INPUT)
    if insecure:
        err.print("[bold yellow]warning[/]: SSH host keys are NOT verified (--insecure-no-host-key-check):"
                  " a man in the middle could read and change what is pushed")
    if target.edited_configs and not as_json:
        err.print(f"[bold yellow]warning[/]: {len(target.edited_configs)} file(s) of {escape(str(configs))} are"
                  " used though netgen cannot vouch for them (--accept-edited-configs):")
        for name, why in target.edited_configs.items():
            err.print(f"  {escape(name)}: {escape(why)}")
    return target


def _edited_record(target: DeployTarget, configs: Path | None) -> dict[str, Any]:
    """What the report says about --accept-edited-configs: each file used though netgen cannot
    vouch for it (empty without --configs)."""
    return {"configs": None if configs is None else str(configs), "accepted_edited_configs": target.edited_configs}


def _journal_edited(target: DeployTarget, configs: Path | None, options: DeployOptions, as_json: bool) -> None:
    """The journal's record of the files used though edited, before anything is pushed (a journal
    line holds names and reasons, never a configuration)."""
    if options.journal is None or not target.edited_configs:
        return
    try:
        options.journal.write(None, "accepted_edited_configs", configs=str(configs), files=target.edited_configs)
    except JournalError as exc:
        fail(str(exc), as_json)


def _push_options(command: Any) -> Any:
    """Options shared by `deploy` and `rollout`: commit-confirm, post-checks, batch policy, report."""
    for option in reversed([
        click.option("--confirm-timeout", type=int, help="Seconds before an unconfirmed commit rolls back."),
        click.option("--post-check-timeout", type=float, default=60.0, show_default=True,
                     help="Seconds post-checks may take to pass (sessions re-establishing) before a rollback."),
        click.option("--batch-size", type=int, help="RTSWs per batch after the canaries."),
        click.option("--max-zone-share", type=float, help="Most of one zone's RTSWs in one batch (0-1)."),
        click.option("--ctsw-per-zone", type=int, help="CTSWs of one zone in one batch."),
        click.option("--max-failures", type=int,
                     help="Failed devices tolerated before the rollout stops (canaries: 0; deploy only)."),
        click.option("--change-id", help="Names the EOS config sessions and SONiC checkpoints (default: a timestamp)."),
        click.option("--remove-unmanaged", is_flag=True,
                     help="Also remove configuration outside netgen's sections and the device-owned ones"
                          " (default: deploy.yaml's ownership policy, normally keep it)."),
        click.option("-o", "--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                     help="Write the full JSON report (with every diff) to FILE (replaced whole)."),
        click.option("--journal", "journal_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="The change's journal (default: $NETGEN_STATE_DIR or ~/.local/state/netgen,"
                          " deploy/<change id>.jsonl)."),
        json_option,
    ]):
        command = option(command)
    return command


def _plan(target: DeployTarget, as_json: bool, dry_run: bool, params: dict[str, Any], verb: str = "deploy",
          resume: bool = False) -> tuple[RolloutPolicy, list[Batch], DeployOptions]:
    """The rollout policy (deploy.yaml with the command-line overrides), its batches and the options."""
    overrides = {key: params[option] for key, option in (
        ("workers", "workers"), ("rtsw_batch_size", "batch_size"), ("max_zone_share", "max_zone_share"),
        ("ctsw_per_zone", "ctsw_per_zone"), ("max_failures", "max_failures"),
        ("confirm_timeout_s", "confirm_timeout")) if params.get(option) is not None}
    rollout = target.deploy.rollout
    try:
        policy = type(rollout).model_validate({**rollout.model_dump(), **overrides})
        # a second and a random suffix: two runs in the same second never share a journal
        change = check_change_id(params.get("change_id") or f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}")
    except (ValueError, DriverError) as exc:
        fail(str(exc).splitlines()[0] if isinstance(exc, DriverError) else f"bad rollout option: {exc}", as_json)
    confirm_name = ("--confirm-timeout" if params.get("confirm_timeout") is not None
                    else f"{target.fabric_file.parent / 'deploy.yaml'} rollout.confirm_timeout_s")
    problem = check_timeouts(policy.confirm_timeout_s, params["post_check_timeout"], confirm_name=confirm_name)
    if problem:
        fail(problem, as_json)
    batches = plan_batches(target.ctx.topology, target.names, policy)
    problems = violations(batches, target.ctx.topology, policy)
    if problems:  # the planner's own rules, checked again: a bug if this ever fires
        fail("rollout plan breaks its policy: " + "; ".join(problems), as_json, EXIT_INTERNAL)
    journal = None if dry_run else _journal(params.get("journal_path"), change, as_json, resume)
    options = DeployOptions(change_id=change, dry_run=dry_run, confirm_timeout_s=policy.confirm_timeout_s,
                            post_check_timeout_s=params["post_check_timeout"], max_failures=policy.max_failures,
                            command_timeout_s=target.deploy.ssh.command_timeout_s, journal=journal,
                            ownership=target.ownership(bool(params.get("remove_unmanaged"))))
    if not as_json:
        mode = " (dry run)" if dry_run else ""
        out.print(f"{verb}{mode} {change}: {len(target.names)} device(s) in {len(batches)} batch(es)"
                  f" ({batches[0].label} first), {policy.workers} worker(s)")
    return policy, batches, options


def _journal(path: Path | None, change: str, as_json: bool, resume: bool) -> Journal:
    """The change's journal; a change that has one already is finished with --resume or `netgen recover`."""
    path = path or default_path(change)
    if path.exists() and not resume:
        fail(f"change {change} already has a journal at {path}: `netgen deploy --resume {change}` finishes it,"
             f" `netgen recover --change-id {change}` rolls back what it left in flight; or give a new --change-id",
             as_json)
    try:
        return Journal(path, change)
    except JournalError as exc:
        fail(str(exc), as_json)


def _conclude(report: RolloutReport, report_path: Path | None, as_json: bool, extra: dict[str, Any] | None = None,
              ok: bool | None = None) -> None:
    """Print the report (or its JSON), write it, and exit 0 only when every device is good. A report
    file that cannot be written is exit 2 naming the path and the reason, after the result was shown."""
    good = report.ok if ok is None else ok
    payload = {"exit_code": EXIT_OK if good else EXIT_DESIGN, **report.as_dict(), **(extra or {})}
    problem = None
    if report_path is not None:
        try:
            write_replacing(report_path, json.dumps(payload, indent=2) + "\n")
        except OSError as exc:
            problem = f"cannot write the report to {report_path}: {exc.strerror or exc}"
            payload = {**payload, "exit_code": EXIT_INPUT, "error": problem}
    if as_json:
        emit_json(payload)
    else:
        _print_report(report, report.dry_run)
        if report_path is not None and problem is None:
            out.print(f"report: {escape(str(report_path))}")
    if problem:
        err.print(f"[bold red]error[/]: {escape(problem)} (the result above stands)")
    sys.exit(payload["exit_code"])


@cli.command(fabric_stdin=False)  # deploy.yaml, deploy.sot.yaml and secrets beside the fabric file
@fabric_argument
@_access_options
@accept_edited_option
@click.option("--dry-run", is_flag=True, help="Pre-checks and diffs only; nothing is changed anywhere.")
@click.option("--resume", metavar="CHANGE_ID",
              help="Finish an interrupted deploy from its journal: roll back what it left in flight, then run"
                   " the rollout again for the devices it planned.")
@_push_options
def deploy(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
           insecure: bool, accept_edited: bool, dry_run: bool, resume: str | None, report_path: Path | None,
           as_json: bool, **params: Any) -> None:
    """Push the rendered configs: pre-checks, diff, commit with confirm, post-checks, confirm or roll
    back; canary RTSW, canary CTSW, then failure-domain batches; stop at the first failed batch.
    Every status is read back from the device; every step is journaled first."""
    view = None
    if resume:
        if params.get("change_id") not in (None, resume):
            fail("--resume names the change: leave out --change-id", as_json)
        if limit or dry_run:
            fail("--resume takes the devices from the journal and pushes: leave out --limit and --dry-run", as_json)
        path = params.get("journal_path") or default_path(resume)
        view = _read_journal(path, as_json)
        params["change_id"], limit = resume, ",".join(view.devices)
    target = _prepare(fabric, limit, configs, credentials, known_hosts, insecure, as_json,
                      accept_edited=accept_edited)
    policy, batches, options = _plan(target, as_json, dry_run, params, resume=view is not None)
    _journal_edited(target, configs, options, as_json)
    nr = make_nornir(nornir_inventory(target.ctx.topology, target.deploy, target.names, target.credentials,
                                      target.known_hosts), policy.workers)
    if view is not None and view.in_flight():
        with _progress_bar(len(view.in_flight()), not as_json) as tick:
            recovery = recover_change(nr, target.ctx, view, target.files, options, confirm=False, progress=tick)
        if not recovered(recovery, confirm=False):
            recovery.stopped, recovery.stopped_reason = True, ("--resume: not every device the interrupted run left"
                                                               " in flight could be rolled back; nothing else touched")
            _conclude(recovery, report_path, as_json, _edited_record(target, configs), ok=False)
    with _progress_bar(len(target.names), not as_json) as tick:
        report = run_rollout(nr, target.ctx, batches, target.files, options, progress=tick)
    if not as_json:
        for name, why in target.excluded.items():
            out.print(f"[yellow]left out[/] {escape(name)}: {escape(why)}")
        for name, why in target.edited_configs.items():
            out.print(f"[yellow]edited[/] {escape(name)} pushed as it is in {escape(str(configs))}"
                      f" (--accept-edited-configs): {escape(why)}")
    _conclude(report, report_path, as_json, {"excluded": target.excluded, **_edited_record(target, configs)})


def _read_journal(path: Path, as_json: bool) -> Any:
    if not path.is_file():
        fail(f"no deploy journal at {path}: give the change id of an earlier `netgen deploy` (and --journal if it"
             " used one)", as_json)
    try:
        return read_journal(path)
    except JournalError as exc:
        fail(str(exc), as_json)


@cli.command(fabric_stdin=False)  # deploy.yaml, deploy.sot.yaml and secrets beside the fabric file
@fabric_argument
@_access_options
@accept_edited_option
@click.option("--change-id", required=True, help="The interrupted change (its journal names the devices).")
@click.option("--confirm", is_flag=True,
              help="Confirm devices that run exactly the intended config, instead of rolling them back.")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The change's journal, if `netgen deploy --journal` put it elsewhere.")
@click.option("-o", "--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the JSON report to FILE (replaced whole).")
@json_option
def recover(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
            insecure: bool, workers: int | None, accept_edited: bool, change_id: str, confirm: bool,
            journal_path: Path | None, report_path: Path | None, as_json: bool) -> None:
    """Finish what an interrupted `netgen deploy` left in flight, from its journal: roll each such
    device back to its old config (or --confirm it), read back from the device."""
    try:
        change = check_change_id(change_id)
    except DriverError as exc:
        fail(str(exc), as_json)
    path = journal_path or default_path(change)
    view = _read_journal(path, as_json)
    pending = [r.device for r in view.in_flight()]
    if not pending:
        report = RolloutReport(view.fabric or "", change, False, time.time(), finished=time.time())
        if not as_json:
            out.print(f"change {change}: nothing in flight in {escape(str(path))}")
        _conclude(report, report_path, as_json)
    target = _prepare(fabric, ",".join(pending), configs, credentials, known_hosts, insecure, as_json,
                      changes=False, accept_edited=accept_edited)
    chosen = set(select(target.names, target.ctx.topology.devices, limit))  # --limit narrows it further
    if not chosen:
        fail(f"--limit {limit!r} matches none of the devices in flight: {', '.join(pending)}", as_json)
    view.records = {n: r for n, r in view.records.items() if n in chosen}
    try:
        journal = Journal(path, change)
    except JournalError as exc:
        fail(str(exc), as_json)
    options = DeployOptions(change_id=change, command_timeout_s=target.deploy.ssh.command_timeout_s, journal=journal)
    _journal_edited(target, configs, options, as_json)
    nr = make_nornir(nornir_inventory(target.ctx.topology, target.deploy, target.names, target.credentials,
                                      target.known_hosts), workers or target.deploy.rollout.workers)
    with _progress_bar(len(view.in_flight()), not as_json) as tick:
        report = recover_change(nr, target.ctx, view, target.files, options, confirm=confirm, progress=tick)
    _conclude(report, report_path, as_json, _edited_record(target, configs), ok=recovered(report, confirm))


@cli.command(fabric_stdin=False)  # deploy.yaml, deploy.sot.yaml and secrets beside the fabric file
@fabric_argument
@_access_options
@click.option("--playbook", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The playbook to run (default: roles/rollout.yml, netgen_deploy over netgen_rollout in batches).")
@click.option("--check", "dry_run", is_flag=True,
              help="Ansible check mode: pre-checks and each device's real diff; nothing is changed.")
@click.option("--artifacts", type=click.Path(file_okay=False, path_type=Path),
              help="Keep ansible-runner's private data dir (inventory, events, output) here.")
@click.option("-e", "--extra-var", "extra", multiple=True, metavar="KEY=VALUE",
              help="An extra variable for your playbook (repeatable; never credentials).")
@_push_options
def rollout(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
            insecure: bool, playbook: Path | None, dry_run: bool, artifacts: Path | None, extra: tuple[str, ...],
            report_path: Path | None, as_json: bool, **params: Any) -> None:
    """Run the rollout playbook with ansible-runner: each device through the netgen_deploy module
    (same pipeline as `netgen deploy`), Ansible batches = netgen's failure-domain batches,
    max_fail_percentage 0; events stream into the same progress and report."""
    extra_vars: dict[str, str] = {}
    for item in extra:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            fail(f"-e {item!r}: expected KEY=VALUE with KEY a variable name", as_json)
        if key.startswith("netgen_"):
            fail(f"-e {key}: netgen_* variables are set by netgen rollout from the fabric and the options"
                 " (--limit, --change-id, --confirm-timeout, ...), so the batches stay the planned ones", as_json)
        extra_vars[key] = value
    target = _prepare(fabric, limit, configs, credentials, known_hosts, insecure, as_json, render=False)
    if configs is not None:  # refused here as each device's module run would refuse it, before any play
        try:
            rendered_inputs(target.ctx, [target.ctx.topology.devices[n] for n in target.names], configs)
        except LabSliceError as exc:
            fail(f"{exc} (netgen rollout takes no --accept-edited-configs: the Ansible module reads DIR itself;"
                 " `netgen deploy --configs DIR --accept-edited-configs` pushes edited files)", as_json)
        except RenderError as exc:
            fail(f"render error (a netgen bug): {exc}", as_json, EXIT_INTERNAL)
    policy, batches, options = _plan(target, as_json, dry_run, params, "ansible rollout")
    request = RolloutRequest(playbook=(playbook or DEFAULT_PLAYBOOK).resolve(),
                             fabric=target.fabric_file.resolve(),
                             policy=policy, batches=batches, options=options, configs=configs,
                             credentials_file=credentials, artifacts=artifacts, extra_vars=extra_vars,
                             remove_unmanaged=bool(params.get("remove_unmanaged")))
    try:
        with _progress_bar(len(target.names), not as_json) as tick:
            report, run = run_playbook(target, request, progress=tick)
    except RolloutError as exc:
        fail(str(exc), as_json)
    if not as_json and run.rc not in (0, None) and not any(b["failed"] for b in report.batches):
        tail = markup_escape(without_controls(run.tail))  # its own lines kept, nothing else that acts on a terminal
        err.print(f"[red]ansible-playbook {escape(run.status)} (rc {run.rc})[/]:\n{tail}")
    _conclude(report, report_path, as_json, {"ansible": run.as_dict()})


@contextlib.contextmanager
def _progress_bar(total: int, enabled: bool) -> Iterator[Callable[[DeviceOutcome], None]]:
    """One bar over the devices; each finished device shows with its status."""
    with ProgressBars(enabled) as bars:
        yield lambda outcome: bars.update("devices", total=total, advance=1,
                                          note=f"{outcome.device} {outcome.status.value}")


def _print_report(report: RolloutReport, dry_run: bool) -> None:
    table = Table(title=f"change {report.change_id}")
    for column in ("device", "batch", "status", "changes", "detail"):
        table.add_column(column)
    for outcome in report.devices.values():
        style = {"changed": "green", "rolled_back": "yellow", "failed": "red", "unconfirmed": "bold red",
                 "diverged": "bold red", "confirmed_unsaved": "bold yellow", "unknown": "bold red",
                 "not_touched": "dim"}.get(outcome.status.value, "")
        status = f"[{style}]{outcome.status.value}[/]" if style else outcome.status.value
        table.add_row(outcome.device, str(outcome.batch), status, str(outcome.changes),
                      escape((outcome.error or "")[:120]))
    out.print(table)
    for outcome in report.devices.values():
        owned = outcome.ownership or {}
        kept, removed = owned.get("kept_unmanaged", []), owned.get("removed_unmanaged", [])
        if kept or removed:
            verb = "would keep" if dry_run else "kept"
            out.print(f"{escape(outcome.device)}: {verb} {len(kept)} line(s) outside netgen's sections, "
                      f"{'would remove' if dry_run else 'removed'} {len(removed)} (--report FILE lists them)")
    if dry_run:
        for outcome in report.devices.values():
            gone = (outcome.ownership or {}).get("would_remove", [])
            if gone:
                out.print(f"[bold]{escape(outcome.device)}[/]: the change removes {len(gone)} line(s): "
                          + escape("; ".join(gone[:3])[:200]) + (" ..." if len(gone) > 3 else ""))
            if outcome.diff:
                lines = outcome.diff.splitlines()
                out.print(f"[bold]{escape(outcome.device)}[/] ({outcome.changes} change(s)):")
                for line in lines[:DIFF_LINES_SHOWN]:
                    out.print("  " + escape(line))
                if len(lines) > DIFF_LINES_SHOWN:
                    out.print(f"  ... {len(lines) - DIFF_LINES_SHOWN} more lines (--report FILE has all)")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(report.counts().items()))
    if report.stopped:
        out.print(f"[bold red]stopped[/]: {escape(report.stopped_reason)}")
    verdict = "[bold green]OK[/]" if report.ok else "[bold red]FAILED[/]"
    out.print(f"{verdict} {summary} in {report.finished - report.started:.1f} s")


@cli.command(fabric_stdin=False)  # deploy.yaml, deploy.sot.yaml and secrets beside the fabric file
@fabric_argument
@_access_options
@accept_edited_option
@json_option
def check(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
          insecure: bool, workers: int | None, accept_edited: bool, as_json: bool) -> None:
    """Run the device checks read-only: model, every BGP session, PFC, watchdog, remaining diff, LLDP cabling."""
    target = _prepare(fabric, limit, configs, credentials, known_hosts, insecure, as_json, changes=False,
                      accept_edited=accept_edited)
    ctx, deploy_file, names, files = target.ctx, target.deploy, target.names, target.files
    drivers, ownership = load_drivers(), target.ownership()
    nr = make_nornir(nornir_inventory(ctx.topology, deploy_file, names, target.credentials, target.known_hosts),
                     workers or deploy_file.rollout.workers)
    results: dict[str, list[CheckResult]] = {}

    def task(task: Task) -> Result:
        device = ctx.topology.devices[task.host.name]
        try:
            conn = task.host.get_connection("netmiko", task.nornir.config)
            driver = drivers[device.nos](conn, device, files[device.name], "check", deploy_file.ssh.command_timeout_s,
                                         ownership[device.nos])
            peers = tuple(n.address for n in bgp_plan(ctx, device).neighbors)
            checks = post_checks(ctx, device, peers, {})
            results[device.name] = [c.run(driver) for c in checks]
        except Exception as exc:
            results[device.name] = [CheckResult("connect", device.name, Outcome.ERROR,
                                                f"{type(exc).__name__}: {exc}"[:300])]
        finally:
            with contextlib.suppress(Exception):  # never connected
                task.host.close_connection("netmiko")
        return Result(host=task.host, result=None)

    nr.run(task=task, name="netgen check", on_failed=True)
    flat = [r for name in names for r in results.get(name, [])]
    failed = [r for r in flat if not r.ok]
    code = EXIT_OK if not failed else EXIT_DESIGN
    if as_json:
        emit_json({"ok": not failed, "exit_code": code, "devices": len(names), "checks": len(flat),
                   "failed": len(failed), "results": [r.as_dict() for r in flat], **_edited_record(target, configs)})
        sys.exit(code)
    for r in flat:
        mark = "[green]ok[/]" if r.ok else f"[bold red]{r.outcome.value}[/]"
        out.print(f"{mark} {escape(r.device)} {r.check}: {escape(r.detail)}")
    out.print(f"{len(flat) - len(failed)}/{len(flat)} checks passed on {len(names)} device(s)")
    for name, why in target.edited_configs.items():
        out.print(f"[yellow]edited[/] {escape(name)} compared as it is in {escape(str(configs))}"
                  f" (--accept-edited-configs): {escape(why)}")
    sys.exit(code)


__all__ = ["Status", "check", "deploy", "recover"]


@cli.command(name="ansible-inventory")
@fabric_argument
@click.option("--limit", metavar="PATTERN", help="Only these devices (as `netgen deploy --limit`).")
@click.option("--list", "list_all", is_flag=True, help="Ansible inventory-script protocol (the default output).")
@click.option("--host", "one_host", metavar="NAME",
              help="Ansible inventory-script protocol: one host's variables (its groups' included).")
@click.option("--static", is_flag=True,
              help="A static inventory file instead (YAML/JSON plugin format): `ansible-playbook -i FILE.json`.")
@click.option("--playbook-vars", is_flag=True,
              help="The extra vars roles/rollout.yml needs (netgen_fabric, netgen_serial): `-e @FILE.json`.")
def ansible_inventory_command(fabric: str, limit: str | None, list_all: bool, one_host: str | None, static: bool,
                              playbook_vars: bool) -> None:
    """Print an Ansible inventory (JSON) generated from FABRIC and its deploy.yaml: groups per tier,
    zone and NOS, and `netgen_rollout` in rollout order with `netgen_serial` batch sizes."""
    if sum([list_all, one_host is not None, static, playbook_vars]) > 1:
        fail("--list, --host, --static and --playbook-vars exclude each other", True)
    loaded, ctx = load_checked(fabric, True, "fix them first (`netgen validate`)")
    try:
        deploy_file = load_deploy(loaded.source.parent)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, True))
    names = select(list(ctx.topology.devices), ctx.topology.devices, limit)
    if not names:
        fail(f"--limit {limit!r} matches no device", True)
    inventory = ansible_inventory(ctx.topology, deploy_file, names)
    if one_host is not None:
        document = host_variables(inventory, one_host)  # with its groups' variables, as Ansible sees them
    elif static:
        document = yaml_inventory(inventory)
    elif playbook_vars:
        document = rollout_playbook_vars(loaded.source, inventory)
    else:
        document = inventory
    click.echo(json.dumps(document, indent=2))
    sys.exit(EXIT_OK)


@cli.command(name="ansible-collection")
@click.option("-o", "--output", "output", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Directory for the collection tarball.")
@json_option
def ansible_collection_command(output: Path, as_json: bool) -> None:
    """Build the netgen.fabric Ansible collection (module, role, rollout playbook, inventory plugin)
    with ansible-galaxy, and print the tarball's path."""
    from netgen.deploy.collection import DISTRIBUTION, CollectionError, build_collection  # noqa: PLC0415

    try:
        tarball = build_collection(output)
    except (CollectionError, OSError) as exc:
        fail(str(exc), as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "collection": str(tarball)})
    else:
        out.print(f"built {escape(str(tarball))}: ansible-galaxy collection install {escape(str(tarball))}"
                  f" (and netgen in the Python Ansible runs in: pip install {DISTRIBUTION})")
    sys.exit(EXIT_OK)
