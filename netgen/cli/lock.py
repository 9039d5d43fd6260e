"""`netgen lock status` and `netgen lock break`: the change lock every command that changes switches
takes (netgen/lock/, netgen/deploy/lock.py), shown and, when its holder is gone, broken by hand."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from netgen.cli.common import (
    EXIT_OK,
    cli,
    emit_json,
    escape,
    fabric_argument,
    fail,
    input_failure,
    json_option,
    load_checked,
    lock_failure,
    out,
)
from netgen.deploy.lock import break_lock, lock_status
from netgen.intent import NetgenInputError
from netgen.lock.lease import LockError


@cli.group()
def lock() -> None:
    """The change lock: who holds which zone of the fabric, and breaking a lease whose holder is gone."""


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


@lock.command(fabric_stdin=False)  # deploy.yaml beside the fabric file says where the lock is
@fabric_argument
@json_option
def status(fabric: str, as_json: bool) -> None:
    """Every lease of the fabric's change lock (holder, scope, since, expiry, why) and the switches
    the shared drain state records drained."""
    loaded, ctx = load_checked(fabric, as_json, "no lock read")
    try:
        state = lock_status(ctx, Path(loaded.source))
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except LockError as exc:
        lock_failure(exc, as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, **state.as_dict()})
        sys.exit(EXIT_OK)
    out.print(f"lock: {escape(state.where)}")
    if not state.leases:
        out.print("no lease held")
    now = time.time()
    for scope, lease in sorted(state.leases.items()):
        left = lease.expires - now
        expiry = f"expires in {left:.0f} s" if left > 0 else f"[yellow]expired {-left:.0f} s ago[/]"
        out.print(f"{escape(scope)}: held by {escape(lease.describe())}; {expiry}")
    for scope, why in sorted(state.unreadable.items()):
        out.print(f"[bold red]unreadable[/] lease {escape(scope)}: {escape(why)} (counts as held)")
    for name, record in sorted(state.drains.drained.items()):
        holder = record.get("by")
        by: dict[str, object] = holder if isinstance(holder, dict) else {}
        change = escape(str(record.get("change_id")))
        out.print(f"drained {escape(name)} since {_when(record['since'])} (change {change},"
                  f" {escape(str(by.get('user')))}@{escape(str(by.get('host')))})")
    for name, why in sorted(state.drains.skipped.items()):
        out.print(f"[yellow]skipped[/] drain record {escape(name)}: {escape(why)}")
    sys.exit(EXIT_OK)


@lock.command(name="break", fabric_stdin=False)
@fabric_argument
@click.option("--scope", required=True, metavar="SCOPE", help="The scope whose lease to break (e.g. zone-01).")
@click.option("--why", required=True, metavar="TEXT", help="Why the holder is gone (journaled in the lock's store).")
@json_option
def break_command(fabric: str, scope: str, why: str, as_json: bool) -> None:
    """Break the lease of --scope (e.g. zone-01), whoever holds it: only when its holder is gone. The
    holder, if it still runs, stops before its next switch. Journaled in the store with the reason."""
    if not why.strip():
        fail("--why needs a reason: it is journaled beside the lease that was broken", as_json)
    loaded, ctx = load_checked(fabric, as_json, "no lock broken")
    try:
        old = break_lock(ctx, Path(loaded.source), scope, why)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except LockError as exc:
        lock_failure(exc, as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "scope": scope, "broken": old.as_dict() if old else None})
    elif old is None:
        out.print(f"{escape(scope)}: no lease was held")
    else:
        out.print(f"{escape(scope)}: broke the lease of {escape(old.describe())}")
    sys.exit(EXIT_OK)
