"""`netgen deploy` and `netgen check`: push rendered configs with Nornir + netmiko in failure-domain
batches, or run the device checks read-only."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from nornir.core.task import Result, Task
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from netgen.checks import DesignContext
from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INTERNAL,
    EXIT_OK,
    cli,
    emit_json,
    err,
    fabric_argument,
    fail,
    input_failure,
    json_option,
    load_checked,
    out,
)
from netgen.deploy.ansible_inventory import ansible_inventory
from netgen.deploy.checks import CheckResult, Outcome
from netgen.deploy.drivers.base import DriverError, check_change_id, load_drivers
from netgen.deploy.inventory import (
    Credentials,
    CredentialsError,
    DeployFile,
    load_credentials,
    load_deploy,
    make_nornir,
    nornir_inventory,
)
from netgen.deploy.pipeline import DeployOptions, DeviceOutcome, RolloutReport, Status, post_checks, run_rollout, select
from netgen.deploy.rollout import plan_batches, violations
from netgen.intent import NetgenInputError
from netgen.lab.adapters import rendered_files
from netgen.lab.plan import LabSliceError
from netgen.platforms.base import RenderError
from netgen.platforms.routing import bgp_plan

DIFF_LINES_SHOWN = 40


def _access_options(command: Any) -> Any:
    for option in reversed([
        click.option("--limit", metavar="PATTERN",
                     help="Only these devices: comma-separated globs, or role:ctsw / zone:2 tokens."),
        click.option("--configs", type=click.Path(file_okay=False, exists=True, path_type=Path),
                     help="Push the files of this `netgen render` directory instead of rendering now."),
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


def _prepare(fabric: str, limit: str | None, configs: Path | None, credentials_file: Path | None,
             known_hosts: Path | None, insecure: bool, as_json: bool
             ) -> tuple[DesignContext, DeployFile, list[str], dict[str, dict[str, str]], Credentials, Path | None]:
    loaded, ctx = load_checked(fabric, as_json, "fix them before deploying")
    try:
        deploy = load_deploy(loaded.source.parent)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    names = select(list(ctx.topology.devices), ctx.topology.devices, limit)
    if not names:
        fail(f"--limit {limit!r} matches no device", as_json)
    drivers = load_drivers()
    unsupported = sorted({ctx.topology.devices[n].nos for n in names} - drivers.keys())
    if unsupported:
        fail(f"no deploy driver for {', '.join(unsupported)}", as_json)
    try:
        files = rendered_files(ctx, [ctx.topology.devices[n] for n in names], configs)
    except LabSliceError as exc:
        fail(str(exc), as_json)
    except RenderError as exc:
        fail(f"render error (a netgen bug): {exc}", as_json, EXIT_INTERNAL)
    try:
        credentials = load_credentials(credentials_file)
    except CredentialsError as exc:
        fail(str(exc), as_json)
    hosts_file: Path | None = None
    if insecure:
        err.print("[bold yellow]warning[/]: SSH host keys are NOT verified (--insecure-no-host-key-check):"
                  " a man in the middle could read and change what is pushed")
    else:
        hosts_file = (known_hosts or Path(deploy.ssh.known_hosts)).expanduser()
        if not hosts_file.is_file():
            fail(f"known_hosts file {hosts_file} not found: add the devices' host keys to it (or point"
                  " --known-hosts at one); --insecure-no-host-key-check turns verification off", as_json)
    return ctx, deploy, names, files, credentials, hosts_file


@cli.command()
@fabric_argument
@_access_options
@click.option("--dry-run", is_flag=True, help="Pre-checks and diffs only; nothing is changed anywhere.")
@click.option("--confirm-timeout", type=int, help="Seconds before an unconfirmed EOS commit rolls back.")
@click.option("--post-check-timeout", type=float, default=60.0, show_default=True,
              help="Seconds post-checks may take to pass (sessions re-establishing) before a rollback.")
@click.option("--batch-size", type=int, help="RTSWs per batch after the canaries.")
@click.option("--max-zone-share", type=float, help="Most of one zone's RTSWs in one batch (0-1).")
@click.option("--ctsw-per-zone", type=int, help="CTSWs of one zone in one batch.")
@click.option("--max-failures", type=int, help="Failed devices tolerated before the rollout stops (canaries: 0).")
@click.option("--change-id", help="Names the EOS config sessions and SONiC checkpoints (default: a timestamp).")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full JSON report (with every diff) here.")
@json_option
def deploy(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
           insecure: bool, workers: int | None, dry_run: bool, confirm_timeout: int | None,
           post_check_timeout: float, batch_size: int | None, max_zone_share: float | None,
           ctsw_per_zone: int | None, max_failures: int | None, change_id: str | None, report_path: Path | None,
           as_json: bool) -> None:
    """Push the rendered configs: pre-checks, diff, commit with confirm, post-checks, confirm or roll
    back; canary RTSW, canary CTSW, then failure-domain batches; stop at the first failed batch."""
    ctx, deploy_file, names, files, creds, hosts_file = _prepare(fabric, limit, configs, credentials, known_hosts,
                                                                 insecure, as_json)
    overrides = {k: v for k, v in {"workers": workers, "rtsw_batch_size": batch_size,
                                   "max_zone_share": max_zone_share, "ctsw_per_zone": ctsw_per_zone,
                                   "max_failures": max_failures, "confirm_timeout_s": confirm_timeout}.items()
                 if v is not None}
    try:
        policy = type(deploy_file.rollout).model_validate({**deploy_file.rollout.model_dump(), **overrides})
        change = check_change_id(change_id or time.strftime("%Y%m%d-%H%M%S"))
    except (ValueError, DriverError) as exc:
        fail(str(exc).splitlines()[0] if isinstance(exc, DriverError) else f"bad rollout option: {exc}", as_json)
    batches = plan_batches(ctx.topology, names, policy)
    problems = violations(batches, ctx.topology, policy)
    if problems:  # the planner's own rules, checked again: a bug if this ever fires
        fail("rollout plan breaks its policy: " + "; ".join(problems), as_json, EXIT_INTERNAL)
    options = DeployOptions(change_id=change, dry_run=dry_run, confirm_timeout_s=policy.confirm_timeout_s,
                            post_check_timeout_s=post_check_timeout, max_failures=policy.max_failures,
                            command_timeout_s=deploy_file.ssh.command_timeout_s)
    nr = make_nornir(nornir_inventory(ctx.topology, deploy_file, names, creds, hosts_file), policy.workers)
    if not as_json:
        out.print(f"{'dry run' if dry_run else 'deploy'} {change}: {len(names)} device(s) in {len(batches)} batch(es)"
                  f" ({batches[0].label} first), {policy.workers} worker(s)")
    with _progress_bar(len(names), not as_json) as tick:
        report = run_rollout(nr, ctx, batches, files, options, progress=tick)
    payload = {"exit_code": EXIT_OK if report.ok else EXIT_DESIGN, **report.as_dict()}
    if report_path is not None:
        report_path.write_text(json.dumps(payload, indent=2) + "\n")
    if as_json:
        emit_json(payload)
    else:
        _print_report(report, dry_run)
        if report_path is not None:
            out.print(f"report: {escape(str(report_path))}")
    sys.exit(payload["exit_code"])


class _progress_bar:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled and err.is_terminal
        self.bar: Progress | None = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return lambda _outcome: None
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=err, transient=True)
        self.bar.start()
        task = self.bar.add_task("devices", total=self.total)
        bar = self.bar

        def tick(outcome: DeviceOutcome) -> None:
            bar.update(task, advance=1, description=f"{outcome.device}: {outcome.status.value}")
        return tick

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _print_report(report: RolloutReport, dry_run: bool) -> None:
    table = Table(title=f"change {report.change_id}")
    for column in ("device", "batch", "status", "changes", "detail"):
        table.add_column(column)
    for outcome in report.devices.values():
        style = {"changed": "green", "rolled_back": "yellow", "failed": "red", "unconfirmed": "bold red",
                 "not_touched": "dim"}.get(outcome.status.value, "")
        status = f"[{style}]{outcome.status.value}[/]" if style else outcome.status.value
        table.add_row(outcome.device, str(outcome.batch), status, str(outcome.changes),
                      escape((outcome.error or "")[:120]))
    out.print(table)
    if dry_run:
        for outcome in report.devices.values():
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


@cli.command()
@fabric_argument
@_access_options
@json_option
def check(fabric: str, limit: str | None, configs: Path | None, credentials: Path | None, known_hosts: Path | None,
          insecure: bool, workers: int | None, as_json: bool) -> None:
    """Run the device checks read-only: model, every BGP session, PFC, watchdog, remaining diff."""
    ctx, deploy_file, names, files, creds, hosts_file = _prepare(fabric, limit, configs, credentials, known_hosts,
                                                                 insecure, as_json)
    drivers = load_drivers()
    nr = make_nornir(nornir_inventory(ctx.topology, deploy_file, names, creds, hosts_file),
                     workers or deploy_file.rollout.workers)
    results: dict[str, list[CheckResult]] = {}

    def task(task: Task) -> Result:
        device = ctx.topology.devices[task.host.name]
        try:
            conn = task.host.get_connection("netmiko", task.nornir.config)
            driver = drivers[device.nos](conn, device, files[device.name], "check", deploy_file.ssh.command_timeout_s)
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
                   "failed": len(failed), "results": [r.as_dict() for r in flat]})
        sys.exit(code)
    for r in flat:
        mark = "[green]ok[/]" if r.ok else f"[bold red]{r.outcome.value}[/]"
        out.print(f"{mark} {escape(r.device)} {r.check}: {escape(r.detail)}")
    out.print(f"{len(flat) - len(failed)}/{len(flat)} checks passed on {len(names)} device(s)")
    sys.exit(code)


__all__ = ["Status", "check", "deploy"]


@cli.command(name="ansible-inventory")
@fabric_argument
@click.option("--limit", metavar="PATTERN", help="Only these devices (as `netgen deploy --limit`).")
@click.option("--list", "list_all", is_flag=True, help="Ansible inventory-script protocol (the default output).")
@click.option("--host", "one_host", metavar="NAME", help="Ansible inventory-script protocol: one host's variables.")
def ansible_inventory_command(fabric: str, limit: str | None, list_all: bool, one_host: str | None) -> None:
    """Print an Ansible inventory (JSON) generated from FABRIC and its deploy.yaml: groups per tier,
    zone and NOS, and `netgen_rollout` in rollout order with `netgen_serial` batch sizes."""
    loaded, ctx = load_checked(fabric, True, "fix them first (`netgen validate`)")
    try:
        deploy_file = load_deploy(loaded.source.parent)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, True))
    names = select(list(ctx.topology.devices), ctx.topology.devices, limit)
    inventory = ansible_inventory(ctx.topology, deploy_file, names)
    if one_host is not None:
        click.echo(json.dumps(inventory["_meta"]["hostvars"].get(one_host, {}), indent=2))
    else:
        click.echo(json.dumps(inventory, indent=2))
    sys.exit(EXIT_OK)
