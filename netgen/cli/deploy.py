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
from typing import Any, NoReturn

import click
from rich.markup import escape as markup_escape
from rich.table import Table

from netgen import api
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
    lock_failure,
    out,
    write_replacing,
)
from netgen.cli.day2 import recover_drain_journal
from netgen.day2.drain import default_journal
from netgen.deploy.ansible_inventory import ansible_inventory, host_variables, yaml_inventory
from netgen.deploy.ansible_inventory import playbook_vars as rollout_playbook_vars
from netgen.deploy.ansible_rollout import (
    DEFAULT_PLAYBOOK,
    RolloutError,
    RolloutRequest,
    check_configs,
    extra_vars,
    run_playbook,
)
from netgen.deploy.change import (
    ChangePlan,
    ChangeRefused,
    ChangeRequest,
    nothing_in_flight,
    push_change,
    read_change,
    recover_in_flight,
)
from netgen.deploy.driver import DriverError, check_change_id
from netgen.deploy.inventory import load_deploy
from netgen.deploy.journal import JournalError, JournalView, default_path
from netgen.deploy.journal import kind as journal_kind
from netgen.deploy.pipeline import DeviceOutcome, RolloutReport, Status
from netgen.deploy.recover import recovered
from netgen.deploy.target import DeployTarget, TargetError, prepare_target
from netgen.intent import NetgenInputError
from netgen.lock.lease import LockError
from netgen.rendered import RenderError
from netgen.safe_text import without_controls
from netgen.topology.selection import select

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


# command-line option -> the rollout policy field it overrides (deploy.yaml's `rollout:`)
POLICY_OPTIONS = (("workers", "workers"), ("rtsw_batch_size", "batch_size"), ("max_zone_share", "max_zone_share"),
                  ("ctsw_per_zone", "ctsw_per_zone"), ("max_failures", "max_failures"),
                  ("confirm_timeout_s", "confirm_timeout"))


def _plan(target: DeployTarget, as_json: bool, dry_run: bool, params: dict[str, Any], verb: str = "deploy",
          resume: bool = False) -> ChangePlan:
    """The rollout policy (deploy.yaml with the command-line overrides), its batches and the options."""
    # a second and a random suffix: two runs in the same second never share a journal
    change = params.get("change_id") or f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    request = ChangeRequest(change, dry_run=dry_run, post_check_timeout_s=params["post_check_timeout"],
                            remove_unmanaged=bool(params.get("remove_unmanaged")),
                            keep_drained=bool(params.get("keep_drained")),
                            policy={key: params[option] for key, option in POLICY_OPTIONS
                                    if params.get(option) is not None},
                            journal=params.get("journal_path"), append_journal=resume)
    try:
        plan = api.plan_deploy(target, request)
    except ChangeRefused as exc:
        fail(str(exc), as_json, EXIT_INTERNAL if exc.internal else EXIT_INPUT)
    if not as_json:
        mode = " (dry run)" if dry_run else ""
        out.print(f"{verb}{mode} {plan.options.change_id}: {len(target.names)} device(s) in {len(plan.batches)}"
                  f" batch(es) ({plan.batches[0].label} first), {plan.policy.workers} worker(s)")
    return plan


def _conclude(report: RolloutReport, report_path: Path | None, as_json: bool, extra: dict[str, Any] | None = None,
              ok: bool | None = None) -> NoReturn:
    """Print the report (or its JSON), write it, and exit 0 only when every device is good. A report
    file that cannot be written is exit 2 naming the path and the reason, after the result was shown."""
    good = report.ok if ok is None else ok
    payload = {"exit_code": EXIT_OK if good else EXIT_DESIGN, **report.as_dict(), **(extra or {})}
    problem = _write_report(report_path, payload)
    if problem:
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


def _write_report(path: Path | None, payload: dict[str, Any]) -> str | None:
    """The JSON report written to `path`; why not, when the OS refused it."""
    if path is None:
        return None
    try:
        write_replacing(path, json.dumps(payload, indent=2) + "\n")
    except OSError as exc:
        return f"cannot write the report to {path}: {exc.strerror or exc}"
    return None


@cli.command(fabric_stdin=False)  # deploy.yaml, deploy.sot.yaml and secrets beside the fabric file
@fabric_argument
@_access_options
@accept_edited_option
@click.option("--dry-run", is_flag=True, help="Pre-checks and diffs only; nothing is changed anywhere.")
@click.option("--resume", metavar="CHANGE_ID",
              help="Finish an interrupted deploy from its journal: roll back what it left in flight, then run"
                   " the rollout again for the devices it planned.")
@click.option("--keep-drained", is_flag=True,
              help="Push to a switch `netgen drain` drained with its drain kept in what is pushed (without it,"
                   " a drained switch fails its pre-check: the push would undrain it).")
@_push_options
def deploy(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
           insecure: bool, accept_edited: bool, dry_run: bool, resume: str | None, report_path: Path | None,
           as_json: bool, **params: Any) -> None:
    """Push the rendered configs: pre-checks, diff, commit with confirm, post-checks, confirm or roll
    back; canary RTSW, canary CTSW, then failure-domain batches; stop at the first failed batch.
    Every status is read back from the device; every step is journaled first."""
    resumed = _resumed(resume, limit, dry_run, params, as_json) if resume else None
    if resumed is not None:
        params["change_id"], limit = resume, ",".join(resumed.devices)
    target = _prepare(fabric, limit, configs, credentials, known_hosts, insecure, as_json,
                      accept_edited=accept_edited)
    plan = _plan(target, as_json, dry_run, params, resume=resumed is not None)
    try:
        run = push_change(target, plan, configs=configs, resumed=resumed, progress=_device_bars(not as_json))
    except ChangeRefused as exc:
        fail(str(exc), as_json)
    except LockError as exc:
        lock_failure(exc, as_json)
    if not run.complete:
        _conclude(run.report, report_path, as_json, _edited_record(target, configs), ok=False)
    if not as_json:
        for name, why in target.excluded.items():
            out.print(f"[yellow]left out[/] {escape(name)}: {escape(why)}")
        for name, why in target.edited_configs.items():
            out.print(f"[yellow]edited[/] {escape(name)} pushed as it is in {escape(str(configs))}"
                      f" (--accept-edited-configs): {escape(why)}")
    _conclude(run.report, report_path, as_json, {"excluded": target.excluded, **_edited_record(target, configs)})


def _resumed(change: str, limit: str | None, dry_run: bool, params: dict[str, Any], as_json: bool) -> JournalView:
    """--resume CHANGE: the interrupted run's journal, which names the devices."""
    if params.get("change_id") not in (None, change):
        fail("--resume names the change: leave out --change-id", as_json)
    if limit or dry_run:
        fail("--resume takes the devices from the journal and pushes: leave out --limit and --dry-run", as_json)
    return _read_change(change, params.get("journal_path"), as_json)


def _drain_journal(change: str, journal: Path | None, as_json: bool) -> Path | None:
    """The journal of CHANGE when a drain or an undrain wrote it (`--journal`, else the drain
    journal of that id where no deploy journal of it is); None: a deploy's (or none at all)."""
    path = journal if journal is not None else None if default_path(change).exists() else default_journal(change)
    if path is None or (journal is None and not path.exists()):
        return None
    try:
        return path if journal_kind(path) == "drain" else None
    except JournalError as exc:
        fail(str(exc), as_json)


def _read_change(change: str, journal: Path | None, as_json: bool) -> JournalView:
    try:
        return read_change(change, journal)
    except ChangeRefused as exc:
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
    """Finish what an interrupted change left in flight, from its journal: a deploy's devices rolled
    back to their old config (or --confirm'ed); a drain's or an undrain's switches and links put back
    as they were (or --confirm: carried through). Read back from each device."""
    try:
        change = check_change_id(change_id)
    except DriverError as exc:
        fail(str(exc), as_json)
    drain_journal = _drain_journal(change, journal_path, as_json)
    if drain_journal is not None:
        if configs is not None or accept_edited:
            fail("--configs and --accept-edited are a deploy's: a drain's recovery renders nothing", as_json)
        recover_drain_journal(fabric, drain_journal, limit, confirm,
                              {"credentials": credentials, "known_hosts": known_hosts, "insecure": insecure,
                               "workers": workers}, as_json, report_path)
    view = _read_change(change, journal_path, as_json)
    pending = [r.device for r in view.in_flight()]
    if not pending:
        if not as_json:
            out.print(f"change {change}: nothing in flight in {escape(str(view.path))}")
        _conclude(nothing_in_flight(view, change), report_path, as_json)
    target = _prepare(fabric, ",".join(pending), configs, credentials, known_hosts, insecure, as_json,
                      changes=False, accept_edited=accept_edited)
    try:
        report = recover_in_flight(target, view, change, limit=limit, confirm=confirm, workers=workers,
                                   configs=configs, progress=_device_bars(not as_json))
    except ChangeRefused as exc:
        fail(str(exc), as_json)
    except LockError as exc:
        lock_failure(exc, as_json)
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
    try:
        variables = extra_vars(extra)
    except RolloutError as exc:
        fail(str(exc), as_json)
    target = _prepare(fabric, limit, configs, credentials, known_hosts, insecure, as_json, render=False)
    _check_configs(target, configs, as_json)
    plan = _plan(target, as_json, dry_run, params, "ansible rollout")
    request = RolloutRequest(playbook=(playbook or DEFAULT_PLAYBOOK).resolve(),
                             fabric=target.fabric_file.resolve(),
                             policy=plan.policy, batches=plan.batches, options=plan.options, configs=configs,
                             credentials_file=credentials, artifacts=artifacts, extra_vars=variables,
                             remove_unmanaged=bool(params.get("remove_unmanaged")))
    try:
        with _progress_bar(len(target.names), not as_json) as tick:
            report, run = run_playbook(target, request, progress=tick)
    except RolloutError as exc:
        fail(str(exc), as_json)
    except LockError as exc:
        lock_failure(exc, as_json)
    if not as_json and run.rc not in (0, None) and not any(b["failed"] for b in report.batches):
        tail = markup_escape(without_controls(run.tail))  # its own lines kept, nothing else that acts on a terminal
        err.print(f"[red]ansible-playbook {escape(run.status)} (rc {run.rc})[/]:\n{tail}")
    _conclude(report, report_path, as_json, {"ansible": run.as_dict()})


def _check_configs(target: DeployTarget, configs: Path | None, as_json: bool) -> None:
    """--configs DIR refused before any play, as each device's module run would refuse it."""
    try:
        check_configs(target, configs)
    except RolloutError as exc:
        fail(str(exc), as_json)
    except RenderError as exc:
        fail(f"render error (a netgen bug): {exc}", as_json, EXIT_INTERNAL)


@contextlib.contextmanager
def _progress_bar(total: int, enabled: bool) -> Iterator[Callable[[DeviceOutcome], None]]:
    """One bar over the devices; each finished device shows with its status."""
    with ProgressBars(enabled) as bars:
        yield lambda outcome: bars.update("devices", total=total, advance=1,
                                          note=f"{outcome.device} {outcome.status.value}")


def _device_bars(enabled: bool) -> Callable[[int], contextlib.AbstractContextManager[Callable[[DeviceOutcome], None]]]:
    """A bar over N devices for each stage of a change (change.DeviceProgress)."""
    return lambda total: _progress_bar(total, enabled)


STATUS_STYLES = {"changed": "green", "rolled_back": "yellow", "failed": "red", "unconfirmed": "bold red",
                 "diverged": "bold red", "confirmed_unsaved": "bold yellow", "unknown": "bold red",
                 "not_touched": "dim"}


def _outcomes_table(report: RolloutReport) -> Table:
    table = Table(title=f"change {report.change_id}")
    for column in ("device", "batch", "status", "changes", "detail"):
        table.add_column(column)
    for outcome in report.devices.values():
        style = STATUS_STYLES.get(outcome.status.value, "")
        status = f"[{style}]{outcome.status.value}[/]" if style else outcome.status.value
        table.add_row(outcome.device, str(outcome.batch), status, str(outcome.changes),
                      escape((outcome.error or "")[:120]))
    return table


def _print_report(report: RolloutReport, dry_run: bool) -> None:
    out.print(_outcomes_table(report))
    for outcome in report.devices.values():
        _print_unmanaged(outcome, dry_run)
    if dry_run:
        for outcome in report.devices.values():
            _print_dry_run(outcome)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(report.counts().items()))
    if report.stopped:
        out.print(f"[bold red]stopped[/]: {escape(report.stopped_reason)}")
    verdict = "[bold green]OK[/]" if report.ok else "[bold red]FAILED[/]"
    out.print(f"{verdict} {summary} in {report.finished - report.started:.1f} s")


def _print_unmanaged(outcome: DeviceOutcome, dry_run: bool) -> None:
    """What the change kept and removed outside netgen's sections (the report file lists them)."""
    owned = outcome.ownership or {}
    kept, removed = owned.get("kept_unmanaged", []), owned.get("removed_unmanaged", [])
    if kept or removed:
        verb = "would keep" if dry_run else "kept"
        out.print(f"{escape(outcome.device)}: {verb} {len(kept)} line(s) outside netgen's sections, "
                  f"{'would remove' if dry_run else 'removed'} {len(removed)} (--report FILE lists them)")


def _print_dry_run(outcome: DeviceOutcome) -> None:
    """A dry run's device: what the change would remove, and its diff (the first DIFF_LINES_SHOWN lines)."""
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
    report = api.check_devices(target, workers)
    code = EXIT_OK if report.ok else EXIT_DESIGN
    if as_json:
        emit_json({"ok": report.ok, "exit_code": code, **report.as_dict(), **_edited_record(target, configs)})
        sys.exit(code)
    for r in report.results:
        mark = "[green]ok[/]" if r.ok else f"[bold red]{r.outcome.value}[/]"
        out.print(f"{mark} {escape(r.device)} {r.check}: {escape(r.detail)}")
    out.print(f"{len(report.results) - len(report.failed)}/{len(report.results)} checks passed on"
              f" {len(report.devices)} device(s)")
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
