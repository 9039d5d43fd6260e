"""`netgen drain` and `netgen undrain`: take switches out of service gracefully, and put them back
(netgen/day2/drain.py); `netgen replace`: a replacement switch's day-0 files, then its join
(netgen/day2/replace.py)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

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
    fabric_from_environment,
    fail,
    input_failure,
    json_option,
    load_checked,
    lock_failure,
    missing_fabric_message,
    out,
    write_replacing,
)
from netgen.context import DesignContext
from netgen.day2.drain import (
    DEFAULT_JOB_WAIT_S,
    DrainError,
    DrainHooks,
    DrainReport,
    DrainRequest,
    drain,
    new_change_id,
)
from netgen.day2.grow import plan_growth
from netgen.day2.recover import read_drain_journal, recover_drain
from netgen.day2.replace import DEFAULT_JOIN_WAIT_S, JoinReport, ReplaceError, day0_of, join_device
from netgen.deploy.change import ChangeRefused
from netgen.deploy.driver import DriverError
from netgen.deploy.journal import JournalError
from netgen.deploy.target import TargetError
from netgen.intent import NetgenInputError
from netgen.lock.lease import LockError
from netgen.registry import NosRegistryError
from netgen.scheduler.drain import SchedulerDrainError
from netgen.sot.base import SotError
from netgen.sot.nautobot import Nautobot
from netgen.topology.selection import select


def _options(command: Any) -> Any:
    for option in reversed([
        click.argument("targets", nargs=-1, metavar="TARGET..."),
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


def _fabric_and_rest(fabric: str | None, rest: tuple[str, ...], as_json: bool) -> tuple[str, tuple[str, ...]]:
    """FABRIC is optional before other arguments: one argument that is no file or folder is the
    first of the others (`netgen drain z01-ctsw02` with $NETGEN_FABRIC set, or in the fabric's
    folder), and FABRIC is found as every command finds it (NetgenCommand.invoke)."""
    if not rest and fabric is not None and not Path(fabric).exists():
        rest = (fabric,)
        fabric = fabric_from_environment()
    if fabric is None:
        fail(missing_fabric_message(), as_json)
    return fabric, rest


def _run(fabric: str | None, undrain: bool, params: dict[str, Any]) -> None:
    as_json = params["as_json"]
    fabric, targets = _fabric_and_rest(fabric, tuple(params["targets"]), as_json)
    loaded, ctx = load_checked(fabric, as_json, "fix them before draining")
    if not targets:
        fail("give the switches or links: TARGET... (names, globs, role:ctsw or zone:2 tokens, comma-separated;"
             " a link as A:PORT--B:PORT, or A--B for every link between two switches)", as_json)
    if params["force"] is not None and not params["force"].strip():
        fail("--force needs a reason: it goes into the journal beside the maintenance bound it breaks", as_json)
    request = DrainRequest(targets, undrain, params["why"], params["force"], params["dry_run"],
                           params["use_slurm"], job_wait_s=params["job_wait"], journal=params["journal_path"])
    try:
        with ProgressBars(not as_json) as bars:
            hooks = _bars(undrain, bars)
            report = drain(ctx, loaded.source, request, credentials_file=params["credentials"],
                           known_hosts=params["known_hosts"], verify_host_keys=not params["insecure"],
                           workers=params["workers"], hooks=hooks)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except (DrainError, TargetError, SchedulerDrainError, JournalError) as exc:
        fail(str(exc), as_json, EXIT_INPUT)
    except LockError as exc:
        lock_failure(exc, as_json)
    code = EXIT_OK if report.ok else EXIT_DESIGN
    if as_json:
        emit_json({"ok": report.ok, "exit_code": code, **report.as_dict()})
    else:
        _print(report)
    sys.exit(code)


def _bars(undrain: bool, bars: ProgressBars) -> DrainHooks:
    return DrainHooks(read=lambda name: bars.update("read", advance=1, note=name),
                      changed=lambda name: bars.update("undrain" if undrain else "drain", advance=1, note=name))


def recover_drain_journal(fabric: str, journal: Path, limit: str | None, confirm: bool, params: dict[str, Any],
                          as_json: bool, report_path: Path | None) -> None:
    """`netgen recover` of a drain's (undrain's) journal: what it left in flight put back, or with
    --confirm carried through (netgen/day2/recover.py); printed, and exit codes, as `netgen drain`."""
    loaded, ctx = load_checked(fabric, as_json, "fix them before recovering")
    try:
        view = read_drain_journal(journal)
    except JournalError as exc:
        fail(str(exc), as_json, EXIT_INPUT)
    if limit:
        kept = set(select(list(view.in_flight), ctx.topology.devices, limit))
        view.in_flight = {name: peers for name, peers in view.in_flight.items() if name in kept}
    if not view.in_flight:
        if not as_json:
            out.print(f"change {escape(view.change_id)}: nothing in flight in {escape(str(journal))}")
        _emit_recovered({"ok": True, "exit_code": EXIT_OK, "change_id": view.change_id, "kind": "drain",
                         "in_flight": [], "switches": []}, as_json, report_path, None)
    undrain = view.undrain if confirm else not view.undrain
    try:
        with ProgressBars(not as_json) as bars:
            report = recover_drain(ctx, loaded.source, view, confirm=confirm, credentials_file=params["credentials"],
                                   known_hosts=params["known_hosts"], verify_host_keys=not params["insecure"],
                                   workers=params["workers"], hooks=_bars(undrain, bars))
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except (DrainError, TargetError, JournalError) as exc:
        fail(str(exc), as_json, EXIT_INPUT)
    except LockError as exc:
        lock_failure(exc, as_json)
    code = EXIT_OK if report.ok else EXIT_DESIGN
    _emit_recovered({"ok": report.ok, "exit_code": code, "kind": "drain", "in_flight": sorted(view.in_flight),
                     **report.as_dict()}, as_json, report_path, report)


def _emit_recovered(payload: dict[str, Any], as_json: bool, report_path: Path | None,
                    report: DrainReport | None) -> NoReturn:
    if report_path is not None:
        try:
            write_replacing(report_path, json.dumps(payload, indent=2) + "\n")
        except OSError as exc:
            payload = {**payload, "exit_code": EXIT_INPUT,
                       "error": f"cannot write the report to {report_path}: {exc.strerror or exc}"}
    if as_json:
        emit_json(payload)
    else:
        if report is not None:
            _print(report)
        if payload.get("error"):
            err.print(f"[bold red]error[/]: {escape(payload['error'])} (the result above stands)")
    sys.exit(payload["exit_code"])


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
def drain_command(fabric: str | None, **params: Any) -> None:
    """Drain switches or links gracefully: capacity guard, Slurm, each switch, read back."""
    _run(fabric, False, params)


@cli.command(name="undrain", fabric_stdin=False)
@fabric_argument
@_options
@json_option
def undrain_command(fabric: str | None, **params: Any) -> None:
    """Put drained switches or links back in service, read back; then resume Slurm hosts."""
    _run(fabric, True, params)


@cli.command(fabric_stdin=False)  # deploy.yaml and secrets beside the fabric file
@fabric_argument
@click.argument("device", required=False)
@click.option("--day0", "day0_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write what the replacement boots with (drained) and its ZTP file to DIR/DEVICE/.")
@click.option("--url", metavar="URL", help="With --day0: the http(s) folder DIR is served from (DHCP option 67"
                                           " names URL/DEVICE/<its ZTP file>).")
@click.option("--join", "do_join", is_flag=True,
              help="Deploy the replacement with its drain kept, wait for every planned session and LLDP"
                   " neighbour, then undrain it.")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=DEFAULT_JOIN_WAIT_S, show_default=True,
              metavar="SECONDS", help="With --join: how long sessions and LLDP may take to come up.")
@click.option("--slurm", "use_slurm", is_flag=True, help="With --join: resume the RTSW's hosts in Slurm after it.")
@click.option("--nautobot", "nautobot_url", metavar="URL",
              help="With --join: record the serial number the replacement reports in Nautobot (token:"
                   " NAUTOBOT_TOKEN), read back.")
@click.option("--credentials", type=click.Path(dir_okay=False, path_type=Path),
              help="YAML with username and password or key_file (as `netgen deploy`).")
@click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path),
              help="SSH host keys to verify against (default: deploy.yaml ssh.known_hosts).")
@click.option("--insecure-no-host-key-check", "insecure", is_flag=True,
              help="Do not verify SSH host keys (never for production).")
@json_option
def replace(fabric: str | None, device: str | None, day0_dir: Path | None, url: str | None, do_join: bool,
            wait_s: float, use_slurm: bool, nautobot_url: str | None, credentials: Path | None,
            known_hosts: Path | None, insecure: bool, as_json: bool) -> None:
    """Replace a switch (RMA): its day-0 files (it boots drained), then its join: cabling and sessions
    read back before it is undrained."""
    fabric, rest = _fabric_and_rest(fabric, (device,) if device else (), as_json)
    if len(rest) != 1:
        fail("give the switch to replace: DEVICE", as_json)
    device = rest[0]
    if (day0_dir is None) == (not do_join):
        fail("give --day0 DIR --url URL (the files) or --join (the switch is up), one of them", as_json)
    if day0_dir is not None and not url:
        fail("--day0 needs --url: the http(s) folder DIR is served from", as_json)
    loaded, ctx = load_checked(fabric, as_json, "fix them before replacing a switch")
    try:
        if day0_dir is not None:
            _write_day0(ctx, device, day0_dir, str(url), as_json)
        with contextlib.ExitStack() as stack:
            sot = stack.enter_context(_nautobot(nautobot_url, as_json)) if nautobot_url else None
            report = join_device(ctx, loaded.source, device, new_change_id().replace("drain-", "rma-"),
                                 credentials_file=credentials, known_hosts=known_hosts,
                                 verify_host_keys=not insecure, wait_s=wait_s, slurm=use_slurm, sot=sot)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except (ReplaceError, TargetError, ChangeRefused, SchedulerDrainError, JournalError, NosRegistryError,
            SotError) as exc:
        fail(str(exc), as_json, EXIT_INPUT)
    except LockError as exc:
        lock_failure(exc, as_json)
    except DriverError as exc:
        fail(str(exc), as_json, EXIT_INTERNAL)
    _print_join(report, as_json)


def _nautobot(url: str, as_json: bool) -> Nautobot:
    """Nautobot at URL, with NAUTOBOT_TOKEN (as `netgen sot push`)."""
    token = os.environ.get("NAUTOBOT_TOKEN", "")
    if not token:
        fail("--nautobot: set NAUTOBOT_TOKEN to a Nautobot API token with write permission", as_json)
    return Nautobot(url, token)


def _write_day0(ctx: DesignContext, device: str, folder: Path, url: str, as_json: bool) -> None:
    made = day0_of(ctx, device, url)
    target = folder / device
    # as `render -o`: never written through a link (DIR, its device folder or a file in it), which
    # would put a switch's boot files wherever the link points
    for path in (folder, target, *(target / name for name in made.files)):
        if path.is_symlink():
            fail(f"{path}: a symbolic link; --day0 writes into real folders only (give the folder it points to)",
                 as_json)
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name, text in made.files.items():
            write_replacing(target / name, text)
    except OSError as exc:
        fail(f"{target}: cannot write: {exc.strerror or exc}", as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "day0": {**made.as_dict(), "folder": str(target)}})
    else:
        out.print(f"{escape(device)} ({made.nos}): {len(made.files)} file(s) in {escape(str(target))}, it boots"
                  " drained; secrets stay placeholders until --join")
        out.print(f"serve {escape(str(target))} as {escape(made.url)}; DHCP option 67 (bootfile-name):"
                  f" {escape(made.as_dict()['dhcp_option_67'])}")
        out.print(f"once it is up and reachable as deploy.yaml says: netgen replace FABRIC {escape(device)} --join")
    sys.exit(EXIT_OK)


def _print_join(report: JoinReport, as_json: bool) -> None:
    code = EXIT_OK if report.ok else EXIT_DESIGN
    if as_json:
        emit_json({"ok": report.ok, "exit_code": code, **report.as_dict()})
        sys.exit(code)
    deploy = report.deploy or {}
    out.print(f"deploy (drain kept): {escape(str(deploy.get('status', 'not run')))}"
              + (f": {escape(str(deploy['error']))}" if deploy.get("error") else ""))
    for check in report.checks:
        mark = "[green]ok[/]" if check.ok else f"[bold red]{check.outcome.value}[/]"
        out.print(f"{mark} {escape(check.check)}: {escape(check.detail)}")
    if report.serial:
        out.print(f"serial number (read from the switch): {escape(report.serial)}")
    if report.sot_serial is not None:
        out.print(f"Nautobot holds serial {escape(report.sot_serial)} (read back)")
    if report.sot_error:
        out.print(f"[bold red]not recorded[/]: {escape(report.sot_error)}")
    if report.undrain is not None:
        _print_changes(report.undrain)
    verdict = "joined: undrained and read back" if report.joined else "not joined: it stays drained"
    out.print(f"{escape(report.device)} {verdict}")
    sys.exit(code)


@cli.command()
@fabric_argument
@click.option("--from", "base", required=True, metavar="BASE",
              help="The fabric file (or its folder) the switches run now.")
@json_option
def grow(fabric: str, base: str, as_json: bool) -> None:
    """The rollout plan of a fabric that grows from BASE: new switches first, then the existing ones
    that change; refused if a switch or a session would go."""
    _, base_ctx = load_checked(base, as_json, "fix BASE's design errors first")
    loaded, ctx = load_checked(fabric, as_json, "fix them before growing the fabric")
    plan = plan_growth(base_ctx, ctx)
    code = EXIT_DESIGN if plan.refused else EXIT_OK
    if as_json:
        emit_json({"ok": not plan.refused, "exit_code": code, **plan.as_dict()})
        sys.exit(code)
    for name in plan.removed:
        out.print(f"[bold red]removed[/] {escape(name)}: BASE has it, FABRIC does not")
    for name, lost in plan.removed_sessions.items():
        out.print(f"[bold red]sessions removed[/] {escape(name)}: "
                  + ", ".join(f"{escape(s.address)} ({escape(s.peer)})" for s in lost[:6]))
    for name, gained in plan.added_sessions.items():
        out.print(f"sessions added {escape(name)}: {len(gained)}: "
                  + ", ".join(f"{escape(s.address)} ({escape(s.peer)})" for s in gained[:4])
                  + (" ..." if len(gained) > 4 else ""))
    if plan.refused:
        err.print("[bold red]refused[/]: growing never removes a switch or a session; review it with `netgen diff`")
        sys.exit(code)
    for number, (label, names) in enumerate(plan.phases, start=1):
        out.print(f"{number}. {label} ({len(names)}): netgen deploy {escape(str(loaded.source))}"
                  f" --limit {escape(','.join(names))}")
    sys.exit(code)


__all__ = ["drain_command", "grow", "replace", "undrain_command"]
