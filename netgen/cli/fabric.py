"""Fabric commands: validate, show, render, headroom, schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from netgen.checks import DesignContext
from netgen.checks.summary import summarize
from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INTERNAL,
    EXIT_OK,
    cli,
    counts,
    emit_json,
    err,
    fabric_argument,
    input_failure,
    json_option,
    load,
    out,
    print_findings,
    progress,
    require_devices,
)
from netgen.intent import NetgenInputError
from netgen.intent.schema import catalog_schema, fabric_schema
from netgen.platforms.base import RenderError
from netgen.platforms.render import OutputDirError, render_fabric


@cli.command()
@fabric_argument
@json_option
def validate(fabric: str, as_json: bool) -> None:
    """Load FABRIC (a fabric.yaml or its directory), expand it and run every design check."""
    try:
        loaded, _, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    errors, warnings = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({
            "ok": not errors,
            "exit_code": code,
            "fabric": loaded.fabric.name,
            "source": str(loaded.source),
            "errors": errors,
            "warnings": warnings,
            "findings": [f.as_dict() for f in findings],
        })
    else:
        print_findings(findings)
        verdict = "[bold red]FAIL[/]" if errors else "[bold green]OK[/]"
        out.print(f"{verdict} {escape(loaded.fabric.name)}: {errors} error(s), {warnings} warning(s)")
    sys.exit(code)


@cli.command()
@fabric_argument
@json_option
def show(fabric: str, as_json: bool) -> None:
    """Summarise FABRIC: devices per tier, links, GPUs, oversubscription, buffer budget, pools."""
    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    summary = summarize(ctx)
    errors, warnings = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        summary.update({"exit_code": code, "errors": errors, "warnings": warnings,
                        "findings": [f.as_dict() for f in findings]})
        emit_json(summary)
        sys.exit(code)
    _print_summary(summary)
    print_findings(findings)
    out.print(f"{errors} design error(s), {warnings} warning(s)")
    sys.exit(code)


def _print_summary(s: dict[str, Any]) -> None:
    out.print(f"[bold]{escape(s['fabric'])}[/]: {s['zones']} zone(s), {s['racks']} racks, {s['hosts']} hosts,"
              f" {s['gpus']} GPUs, {s['nics']} backend NICs, {s['devices']} switches,"
              f" {s['bgp_sessions']} BGP sessions")
    table = Table(title="Switches per tier")
    for column in ("tier", "devices", "models", "nos"):
        table.add_column(column)
    for t in s["tiers"]:
        table.add_row(t["tier"], str(t["devices"]), ", ".join(f"{m} x{n}" for m, n in t["models"].items()),
                      ", ".join(f"{m} x{n}" for m, n in t["nos"].items()))
    out.print(table)
    table = Table(title="Links")
    for column in ("tier", "speed", "links"):
        table.add_column(column)
    for link in s["links"]:
        table.add_row(link["tier"], link["speed"], str(link["links"]))
    out.print(table)
    table = Table(title="Oversubscription (uplink:downlink bandwidth)")
    for column in ("zone", "tier", "derived", "declared"):
        table.add_column(column)
    for row in s["oversubscription"]:
        table.add_row(str(row["zone"]), row["tier"], row["ratio"], row["declared"])
    out.print(table)
    table = Table(title="Buffer budget (worst ASIC per model)")
    for column in ("tier", "model", "devices", "mode", "headroom/port", "committed", "of buffer", "used"):
        table.add_column(column)
    for b in s["buffers"]:
        low, high = b["headroom_per_port_bytes"]
        per_port = f"{low / 1000:.0f}KB" if low == high else f"{low / 1000:.0f}-{high / 1000:.0f}KB"
        table.add_row(b["tier"], b["model"], str(b["devices"]), b["mode"], per_port,
                      f"{b['worst_domain_committed_bytes'] / 1e6:.1f}MB", f"{b['domain_buffer_bytes'] / 1e6:.1f}MB",
                      f"{b['worst_domain_used_percent']}%")
    out.print(table)
    table = Table(title="Address pools (busiest slot per pool)")
    for column in ("pool", "slot", "for", "used"):
        table.add_column(column)
    busiest: dict[str, dict[str, Any]] = {}
    for p in s["pools"]:
        if p["pool"] not in busiest or p["used_percent"] > busiest[p["pool"]]["used_percent"]:
            busiest[p["pool"]] = p
    for p in busiest.values():
        table.add_row(p["pool"], p["slot"], p["what"], f"{p['used_percent']}%")
    out.print(table)


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path),
              help="Output directory: DIR/<device>/<file>. Replaced whole, atomically.")
@click.option("--device", "devices", multiple=True, metavar="NAME", help="Render only these devices (repeatable).")
@click.option("--check", is_flag=True, help="Render and check against the NOS models, write nothing.")
@json_option
def render(fabric: str, output: Path | None, devices: tuple[str, ...], check: bool, as_json: bool) -> None:
    """Render device configs (SONiC: config_db.json + frr.conf) and check each against what its NOS
    accepts (SONiC: typed models of the YANG tables). Nothing is written on any error."""
    if output is None and not check:
        raise click.UsageError("give an output directory with -o DIR, or --check to only render and check")
    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    errors, warnings = counts(findings)
    if errors:
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_DESIGN, "errors": errors, "warnings": warnings,
                        "findings": [f.as_dict() for f in findings], "written": False})
        else:
            print_findings(findings)
            err.print(f"[bold red]not rendered[/]: {errors} design error(s); nothing was written")
        sys.exit(EXIT_DESIGN)
    require_devices(ctx, devices)
    selected = list(devices) or list(ctx.topology.devices)
    try:
        with progress(len(selected), "rendering") as advance:
            result = render_fabric(ctx, None if check else output, list(devices) or None,
                                   progress=lambda _device: advance())
    except OutputDirError as exc:
        raise click.UsageError(str(exc)) from None
    except RenderError as exc:
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_INTERNAL, "render_error": str(exc), "written": False})
        else:
            err.print(f"[bold red]render error[/] (a netgen bug; nothing was written): {escape(str(exc))}")
        sys.exit(EXIT_INTERNAL)
    payload = {"ok": True, "exit_code": EXIT_OK, "output": None if check else str(result.output),
               "checked_only": check, "devices": len(result.devices),
               "files": result.files, "bytes": result.bytes, "warnings": warnings,
               "skipped": {nos: len(names) for nos, names in result.skipped.items()}}
    if as_json:
        emit_json(payload)
    else:
        where = "checked, nothing written" if check else f"into {escape(str(result.output))}"
        out.print(f"[bold green]rendered[/] {len(result.devices)} device(s), {result.files} files,"
                  f" {result.bytes / 1e6:.1f} MB, all accepted by their NOS models; {where}")
        for nos, names in sorted(result.skipped.items()):
            out.print(f"[yellow]skipped[/] {len(names)} {nos} device(s): no {nos} renderer yet")
    sys.exit(EXIT_OK)


@cli.command()
@fabric_argument
@click.option("--device", "devices", multiple=True, metavar="NAME",
              help="Devices to show (repeatable); default: one device per tier and model.")
@json_option
def headroom(fabric: str, devices: tuple[str, ...], as_json: bool) -> None:
    """PFC headroom per port (xon, xoff, size) and each ASIC's buffer budget."""
    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    require_devices(ctx, devices)
    names = list(devices) or _one_per_model(ctx)
    report = [_headroom_report(ctx, name) for name in names]
    errors, _ = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({"exit_code": code, "devices": report})
        sys.exit(code)
    for entry in report:
        table = Table(title=f"{entry['device']} ({entry['model']}, {entry['mode']} buffers)")
        for column in ("port", "speed", "cable", "lanes", "xon", "xoff", "size"):
            table.add_column(column, justify="right" if column != "port" else "left")
        for port in entry["ports"]:
            table.add_row(port["port"], f"{port['speed_gbps']}G", f"{port['cable_m']}m", str(port["lanes"]),
                          str(port["xon"]), str(port["xoff"]), str(port["size"]))
        out.print(table)
        for domain in entry["asics"]:
            out.print(f"  ASIC {domain['asic']}: {domain['lossless_ports']} lossless ports, headroom"
                      f" {domain['headroom_bytes']:,} B + static {domain['static_bytes']:,} B ="
                      f" {domain['committed_bytes']:,} of {domain['buffer_bytes']:,} B"
                      f" ({domain['used_percent']}%); left for the shared pool {domain['free_bytes']:,} B")
    if errors:
        err.print(f"[red]{errors} design error(s): run `netgen validate` for details[/]")
    sys.exit(code)



def _one_per_model(ctx: DesignContext) -> list[str]:
    seen: dict[tuple[str, str], str] = {}
    for name, device in ctx.topology.devices.items():
        seen.setdefault((device.role.value, device.model), name)
    return list(seen.values())


def _headroom_report(ctx: DesignContext, name: str) -> dict[str, Any]:
    device = ctx.topology.devices[name]
    plan = ctx.buffers[name]
    ports = []
    for port in ctx.topology.ports[name]:
        room = plan.headroom.get(port.name)
        if room is not None:
            ports.append({"port": port.name, "speed_gbps": port.speed_gbps, "cable_m": port.cable_m,
                          "lanes": port.lanes, "xon": room.xon, "xoff": room.xoff, "size": room.size})
    asics = [{"asic": d.index, "ports": d.ports, "lossless_ports": d.lossless_ports,
              "headroom_bytes": d.headroom_bytes, "static_bytes": d.static_bytes,
              "per_port_static_bytes": d.per_port_static, "committed_bytes": d.committed,
              "buffer_bytes": d.buffer_bytes, "free_bytes": d.free,
              "used_percent": round(100 * d.committed / d.buffer_bytes, 2)} for d in plan.domains]
    return {"device": name, "model": device.model, "mode": plan.mode, "ports": ports, "asics": asics}



@cli.command()
@click.option("--kind", type=click.Choice(["fabric", "catalog"]), default="fabric", show_default=True,
              help="Which file format to describe.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write to this file instead of stdout.")
def schema(kind: str, output: Path | None) -> None:
    """Print the JSON Schema of fabric files (or catalog files) for editors and CI linters."""
    document = fabric_schema() if kind == "fabric" else catalog_schema()
    text = json.dumps(document, indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise click.UsageError(f"cannot write {output}: {exc.strerror}") from None

