"""`netgen cabling`: the cabling plan, one row per cable."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from netgen.cabling.plan import bill, cabling_plan, plan_text
from netgen.cli.common import (
    EXIT_OK,
    cli,
    emit_json,
    escape,
    fabric_argument,
    json_option,
    load_checked,
    out,
    output_file_option,
    write_output,
)


@cli.command()
@fabric_argument
@output_file_option("The cabling plan, in --format.")
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True,
              help="What the plan is written as: csv, one row per cable with a header; json, the cables and the"
                   " bill of cables. (--json is netgen's result document, as for every command.)")
@json_option
def cabling(fabric: str, output: Path | None, fmt: str, as_json: bool) -> None:
    """One row per cable (device, port, peer, peer port, speed, media, length from the intent, and the
    label for both ends), in the order a technician walks the hall: zone by zone, rack by rack (the
    rack's NIC cables, then its RTSW uplinks), then the zone's CTSW uplinks to the ATSW layer.

    --format says what the plan is written as; --json makes stdout one result document (counts, the
    bill of cables, and the plan itself as `text` when there is no -o)."""
    _, ctx = load_checked(fabric, as_json, "no cabling plan")
    cables = cabling_plan(ctx.fabric, ctx.topology)
    text = plan_text(ctx.fabric, cables, fmt)
    if output is not None:
        write_output(output, text, as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "output": str(output) if output else None, "format": fmt,
                   "cables": len(cables), "bill": bill(cables), **({} if output else {"text": text})})
    elif output is None:
        click.echo(text, nl=False)
    else:
        out.print(f"[bold green]cabling plan[/]: {len(cables)} cable(s) into {escape(str(output))}")
        for item in bill(cables):
            out.print(f"  {item['count']:>6} x {item['media']} {item['speed_gbps']}G {item['length_m']} m")
    sys.exit(EXIT_OK)
