"""`netgen sot`: keep a source of truth (Nautobot) in step with the fabric."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from netgen.cli.common import (
    EXIT_OK,
    ProgressBars,
    cli,
    emit_json,
    escape,
    fabric_argument,
    fail,
    json_option,
    load_checked,
    out,
    write_output,
)
from netgen.safe_text import printable

if TYPE_CHECKING:  # the push loads with `netgen sot push`
    from netgen.sot.sync import KindReport, PushReport

TOKEN_VARIABLE = "NAUTOBOT_TOKEN"


def _shown(text: str) -> str:
    """Text that came from the server, safe to print: no control characters, no markup."""
    return escape(printable(text))


def _token(as_json: bool) -> str:
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        fail(f"no Nautobot API token: set {TOKEN_VARIABLE} (Nautobot: Profile > API Tokens)", as_json)
    return token


@cli.group()
def sot() -> None:
    """Keep a source of truth (Nautobot) in step with the fabric."""


@sot.command()
@fabric_argument
@click.option("--nautobot", "url", required=True, metavar="URL",
              help=f"Nautobot's base URL; the API token is read from ${TOKEN_VARIABLE}.")
@click.option("--dry-run", is_flag=True, help="Read Nautobot and say what a push would change; change nothing.")
@json_option
def push(fabric: str, url: str, dry_run: bool, as_json: bool) -> None:
    """Create or update, in Nautobot, the fabric's location, device types, roles, platforms, devices,
    interfaces, cables, prefixes, IP addresses and ASNs. Idempotent: a second push changes nothing
    and says so. Objects netgen did not make are never changed, and nothing is ever deleted."""
    from netgen.sot.base import SotError  # noqa: PLC0415
    from netgen.sot.nautobot import Nautobot  # noqa: PLC0415
    from netgen.sot.objects import wanted_objects  # noqa: PLC0415
    from netgen.sot.sync import push as push_objects  # noqa: PLC0415

    token = _token(as_json)
    _, ctx = load_checked(fabric, as_json, "nothing pushed")
    wanted = wanted_objects(ctx)
    reached = ""
    with ProgressBars(enabled=not as_json) as bars:
        def progress(kind: str, done: int, total: int) -> None:
            nonlocal reached
            reached = kind
            bars.update("sot push", total=total, done=done, note=kind)

        try:
            with Nautobot(url, token) as nautobot:
                url = nautobot.url
                report = push_objects(nautobot, ctx.fabric.name, wanted, dry_run=dry_run, progress=progress)
        except SotError as exc:
            where = f" (while pushing {reached}s: what earlier kinds created stays; run the push again" \
                    " to finish, it picks up where this one stopped)" if reached and not dry_run else ""
            fail(f"{exc}{where}", as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, **report.as_dict()})
        sys.exit(EXIT_OK)
    _print_push(report, ctx.fabric.name, url, dry_run)
    sys.exit(EXIT_OK)


def _print_push(report: PushReport, fabric: str, url: str, dry_run: bool) -> None:
    verb = "would change" if dry_run else "changed"
    out.print(f"[bold]{escape(fabric)}[/] -> Nautobot {escape(url)}: {report.changes} object(s) {verb}")
    for item in report.prepared:
        out.print(f"  {'would create' if dry_run else 'created'} {escape(item)}")
    for kind in report.kinds:
        out.print(f"  {kind.kind}: " + _kind_summary(kind, dry_run))
        for line in [] if kind.skipped else kind.updated[:10]:
            out.print(f"    {_shown(line)}")
    if not report.changes:
        out.print("[green]Nautobot already holds the fabric as it is: nothing to change[/]")


def _kind_summary(kind: KindReport, dry_run: bool) -> str:
    """One kind of object: what the push did (or would do) with it."""
    if kind.skipped:
        return f"skipped ({escape(kind.skipped)})"
    parts = [f"{len(kind.created)} {'to create' if dry_run else 'created'}",
             f"{len(kind.updated)} {'to update' if dry_run else 'updated'}", f"{kind.unchanged} unchanged"]
    if kind.foreign:
        parts.append(f"{len(kind.foreign)} not netgen's, left as they are ({escape(', '.join(kind.foreign[:3]))})")
    if kind.blocked:
        parts.append(f"{len(kind.blocked)} not written: they hang on objects netgen did not make")
    if kind.stale:
        parts.append(f"{len(kind.stale)} no longer in the fabric, kept ({_shown(', '.join(kind.stale[:3]))})")
    return ", ".join(parts)


@sot.command(fabric_stdin=False)  # writes deploy.sot.yaml beside the fabric file
@fabric_argument
@click.option("--nautobot", "url", required=True, metavar="URL",
              help=f"Nautobot's base URL; the API token is read from ${TOKEN_VARIABLE}.")
@json_option
def pull(fabric: str, url: str, as_json: bool) -> None:
    """Read what belongs to the source of truth about each switch (management address, serial,
    status) into deploy.sot.yaml beside the fabric file, replaced whole. `netgen deploy` then
    reaches a switch at that address unless deploy.yaml gives it a host of its own, and leaves
    out switches whose status is not Active or Staged."""
    from netgen.deploy.inventory import DEPLOYABLE_STATUSES, SOT_FILE  # noqa: PLC0415
    from netgen.sot.base import SotError  # noqa: PLC0415
    from netgen.sot.nautobot import Nautobot  # noqa: PLC0415
    from netgen.sot.pull import pulled  # noqa: PLC0415

    token = _token(as_json)
    loaded, ctx = load_checked(fabric, as_json, "nothing pulled")
    try:
        with Nautobot(url, token) as nautobot:
            url = nautobot.url  # as checked: scheme, host, port and path, nothing a terminal or YAML could trip on
            facts = nautobot.device_facts(ctx.fabric.name)
    except SotError as exc:
        fail(str(exc), as_json)
    found = pulled(url, ctx.topology.devices, facts, DEPLOYABLE_STATUSES)
    path = loaded.source.parent / SOT_FILE
    write_output(path, found.text, as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "output": str(path), "devices": found.devices,
                   "missing": found.missing, "out_of_service": found.out_of_service})
        sys.exit(EXIT_OK)
    with_host = sum(1 for d in found.devices.values() if "host" in d)
    out.print(f"[bold green]{escape(str(path))}[/]: {len(found.devices)} of {len(ctx.topology.devices)} switch(es)"
              f" in Nautobot, {with_host} with a management address")
    if found.missing:
        out.print(f"  not in Nautobot: {escape(', '.join(found.missing[:8]))}{' ...' if len(found.missing) > 8 else ''}"
                  " (`netgen sot push` adds them)")
    for name, status in found.out_of_service.items():
        out.print(f"  {escape(name)}: status {_shown(status)}, left out of deploys")
    sys.exit(EXIT_OK)
