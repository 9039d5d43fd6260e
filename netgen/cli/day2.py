"""`netgen drain` and `netgen undrain`: take switches out of service gracefully, and put them back
(netgen/day2/drain.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INPUT,
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
)
from netgen.day2.drain import DEFAULT_JOB_WAIT_S, DrainError, DrainHooks, DrainReport, DrainRequest, drain
from netgen.deploy.journal import JournalError
from netgen.deploy.target import TargetError
from netgen.intent import NetgenInputError
from netgen.scheduler.drain import SchedulerDrainError


def _options(command: Any) -> Any:
    for option in reversed([
        click.argument("targets", nargs=-1, required=True, metavar="TARGET..."),
        click.option("--why", default="", metavar="TEXT",
                     help="Why (the journal; Slurm's node reason with --slurm)."),
        click.option("--force", metavar="REASON",
                     help="Go on although the change breaks a maintenance bound; the reason lands in the journal."),
        click.option("--dry-run", is_flag=True, help="Read the switches and judge the capacity only: nothing changes."),
        click.option("--slurm", "use_slurm", is_flag=True,
                     help="Drain (undrain: resume) the hosts under the RTSW targets in Slurm, with scontrol"
                          " (SLURM_CONF names the cluster)."),
        click.option("--job-wait", type=click.FloatRange(min=0), default=DEFAULT_JOB_WAIT_S, show_default=True,
                     metavar="SECONDS", help="With --slurm: how long to wait for the hosts' jobs to end."),
        click.option("--journal", "journal_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="Journal file (default: $NETGEN_STATE_DIR/drain/CHANGE_ID.jsonl)."),
        click.option("--credentials", type=click.Path(dir_okay=False, path_type=Path),
                     help="YAML with username and password or key_file (as `netgen deploy`)."),
        click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path),
                     help="SSH host keys to verify against (default: deploy.yaml ssh.known_hosts)."),
        click.option("--insecure-no-host-key-check", "insecure", is_flag=True,
                     help="Do not verify SSH host keys (never for production)."),
        click.option("--workers", type=click.IntRange(min=1), help="Switches at once (default: deploy.yaml)."),
    ]):
        command = option(command)
    return command


def _run(fabric: str, undrain: bool, params: dict[str, Any]) -> None:
    as_json = params["as_json"]
    loaded, ctx = load_checked(fabric, as_json, "fix them before draining")
    request = DrainRequest(tuple(params["targets"]), undrain, params["why"], params["force"], params["dry_run"],
                           params["use_slurm"], job_wait_s=params["job_wait"], journal=params["journal_path"])
    try:
        with ProgressBars(not as_json) as bars:
            hooks = DrainHooks(read=lambda name: bars.update("read", advance=1, note=name),
                               changed=lambda name: bars.update("undrain" if undrain else "drain", advance=1,
                                                                note=name))
            report = drain(ctx, loaded.source, request, credentials_file=params["credentials"],
                           known_hosts=params["known_hosts"], verify_host_keys=not params["insecure"],
                           workers=params["workers"], hooks=hooks)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except (DrainError, TargetError, SchedulerDrainError, JournalError) as exc:
        fail(str(exc), as_json, EXIT_INPUT)
    code = EXIT_OK if report.ok else EXIT_DESIGN
    if as_json:
        emit_json({"ok": report.ok, "exit_code": code, **report.as_dict()})
    else:
        _print(report)
    sys.exit(code)


def _print_guard(report: DrainReport, verb: str) -> None:
    """What was read from the switches and what the capacity guard made of it."""
    for name, seen in sorted(report.read.items()):
        out.print(f"read {escape(name)}: {escape(seen.as_dict()['state'])} ({escape(seen.detail)})")
    for name, why in sorted(report.unreadable.items()):
        out.print(f"[yellow]unreadable[/] {escape(name)}: {escape(why)} (counted as drained)")
    capacity = report.capacity
    if capacity is None:
        return
    for zone in capacity.zones:
        out.print(f"zone {zone.zone} after the {verb}: CTSWs drained {', '.join(zone.ctsw_drained) or 'none'};"
                  f" RTSW-CTSW {zone.spine_gbps_after:,} of {zone.spine_gbps:,} Gb/s ({zone.spine_pct:.1f}%)")
    mark = "[yellow]forced past[/]" if report.request.force else "[bold red]refused[/]"
    for violation in capacity.violations:
        out.print(f"{mark} {violation.rule}: {escape(violation.message)}")
    if report.request.force and capacity.violations:
        out.print(f"forced: {escape(report.request.force)}")


def _print_changes(report: DrainReport) -> None:
    """The hosts in Slurm and each switch, as read back."""
    for node in report.nodes:
        out.print(f"slurm {escape(node.node.name)}: {node.action.value} ({escape(node.node.state)})")
    for name in report.nodes_busy:
        out.print(f"[bold red]busy[/] {escape(name)}: jobs still run after --job-wait; no switch was changed")
    for switch in report.switches:
        style = "green" if switch.ok else "bold red"
        seen = switch.after.detail if switch.after else switch.error
        out.print(f"[{style}]{escape(switch.action)}[/] {escape(switch.device)} ({switch.nos}): {escape(seen)}")
        if switch.error and switch.after:
            out.print(f"  {escape(switch.error)}")


def _print(report: DrainReport) -> None:
    verb = "undrain" if report.request.undrain else "drain"
    _print_guard(report, verb)
    _print_changes(report)
    if report.refused:
        err.print(f"[bold red]refused[/]: the {verb} breaks a maintenance bound (the fabric file's maintenance:);"
                  " nothing was changed. --force REASON goes on anyway")
    elif report.request.dry_run:
        out.print(f"dry run: the {verb} is allowed; nothing was changed")
    else:
        done = sum(1 for s in report.switches if s.ok)
        out.print(f"{done}/{len(report.switches)} switch(es) {verb}ed and read back;"
                  f" journal {escape(str(report.journal))}")


@cli.command(name="drain", fabric_stdin=False)  # deploy.yaml and secrets beside the fabric file
@fabric_argument
@_options
@json_option
def drain_command(fabric: str, **params: Any) -> None:
    """Drain switches gracefully: capacity guard, Slurm first, then each switch, read back."""
    _run(fabric, False, params)


@cli.command(name="undrain", fabric_stdin=False)
@fabric_argument
@_options
@json_option
def undrain_command(fabric: str, **params: Any) -> None:
    """Put drained switches back in service, read back; then resume their hosts in Slurm."""
    _run(fabric, True, params)


__all__ = ["drain_command", "undrain_command"]
