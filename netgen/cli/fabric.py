"""Fabric commands: validate, show, render, headroom, schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.table import Table

from netgen.checks.summary import summarize
from netgen.cli import common
from netgen.cli.common import (
    DEVICE_PATTERN_HELP,
    EXIT_DESIGN,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    cli,
    counts,
    emit_json,
    err,
    escape,
    fabric_argument,
    fail,
    input_failure,
    json_option,
    load,
    named_devices,
    out,
    output_dir_failure,
    output_file_option,
    print_findings,
    progress,
)
from netgen.context import DesignContext
from netgen.intent import LoadedFabric, NetgenInputError, load_fabric
from netgen.intent.errors import InputProblem
from netgen.intent.loader import check_secrets
from netgen.intent.schema import catalog_schema, fabric_schema
from netgen.platforms.base import RenderError, RenderInputError
from netgen.platforms.render import (
    InspectionAhead,
    OutputDirError,
    RenderResult,
    fabric_key,
    render_fabric,
    render_keys,
    unchanged_render,
)
from netgen.topology.effective import EffectiveSettings, effective_settings


@cli.command()
@fabric_argument
@json_option
def validate(fabric: str, as_json: bool) -> None:
    """Load FABRIC, expand it and run every design check. Every secret reference is read as its
    user reads it: a local user's hash as `netgen render` does (unreadable, empty or not a hash:
    exit 2, at the reference's line and column), a key `netgen deploy` fills in as the deploy
    does (a warning here: the machine that validates need not be the one that deploys)."""
    try:
        loaded, _, findings = load(fabric)
        secrets = check_secrets(loaded)
        if secrets.errors:
            raise NetgenInputError(secrets.errors)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    errors, warnings = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({
            "ok": not errors,
            "exit_code": code,
            "fabric": loaded.fabric.name,
            "source": loaded.display,
            "errors": errors,
            "warnings": warnings,
            "findings": [f.as_dict() for f in findings],
            "input_warnings": [p.as_dict() for p in secrets.warnings],
        })
    else:
        print_findings(findings)
        for problem in secrets.warnings:
            out.print(f"[bold yellow]warning[/]: {escape(problem.render())}")
        verdict = "[bold red]FAIL[/]" if errors else "[bold green]OK[/]"
        unread = f", {len(secrets.warnings)} secret(s) a deploy could not read here" if secrets.warnings else ""
        out.print(f"{verdict} {escape(loaded.fabric.name)}: {errors} error(s), {warnings} warning(s){unread}")
    sys.exit(code)


@cli.command()
@fabric_argument
@click.option("--device", "devices", multiple=True, metavar="PATTERN",
              help=f"Each switch's effective settings and the fabric-file path each came from (repeatable;"
                   f" {DEVICE_PATTERN_HELP}).")
@json_option
def show(fabric: str, devices: tuple[str, ...], as_json: bool) -> None:
    """Summarise FABRIC: devices per tier, links, GPUs, oversubscription, buffer budget, pools.
    Tables are as wide as their content when stdout is not a terminal."""
    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    if devices:
        names = named_devices(ctx, devices, as_json)
        _show_devices([effective_settings(ctx.fabric, ctx.topology.devices[n]) for n in names], findings, as_json)
    summary = summarize(ctx)
    errors, warnings = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({"ok": not errors, **summary, "exit_code": code, "errors": errors, "warnings": warnings,
                   "findings": [f.as_dict() for f in findings]})
        sys.exit(code)
    _print_summary(summary)
    print_findings(findings)
    out.print(f"{errors} design error(s), {warnings} warning(s)")
    sys.exit(code)


def _show_devices(each: list[EffectiveSettings], findings: list[Any], as_json: bool) -> NoReturn:
    errors, warnings = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        # one device: its settings at the top level, as before patterns; always `devices`, one entry each
        top = each[0].as_dict() if len(each) == 1 else {}
        emit_json({"ok": not errors, **top, "exit_code": code, "errors": errors, "warnings": warnings,
                   "devices": [settings.as_dict() for settings in each]})
        sys.exit(code)
    for settings in each:
        # plain lines, never wrapped or cut: a source path is only useful whole (and greppable)
        width = max(len(s.name) for s in settings.settings)
        out.print(f"[bold]{escape(settings.device)}[/]: effective settings (value <- where it came from)")
        for s in settings.settings:
            out.print(f"  {escape(s.name.ljust(width))}  {escape(s.value)}  [dim]<-[/] {escape(s.source)}",
                      soft_wrap=True)
        if settings.custom_config:
            out.print("custom_config, in the order applied:")
            for b in settings.custom_config:
                state = f"replaced by {b.replaced_by}" if b.replaced_by else "applied"
                out.print(f"  {escape(b.name)} ({b.layer}, {b.source}, {', '.join(b.nos)}): {state}", soft_wrap=True)
    out.print(f"{errors} design error(s), {warnings} warning(s) in the fabric")
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
    for column in ("tier", "model", "devices", "mode", "xoff/port", "headroom pool", "committed", "of buffer"):
        table.add_column(column)
    for b in s["buffers"]:
        if b["source"] == "unpublished":
            table.add_row(b["tier"], b["model"], str(b["devices"]), b["mode"], "unpublished", "-", "-",
                          f"{b['domain_buffer_bytes'] / 1e6:.1f}MB")
            continue
        low, high = b["xoff_per_port_bytes"]
        per_port = f"{low / 1000:.0f}KB" if low == high else f"{low / 1000:.0f}-{high / 1000:.0f}KB"
        pool = (f"{b['headroom_pool_xoff_bytes'] / 1e6:.1f} of {b['headroom_pool_bytes'] / 1e6:.1f}MB"
                f" ({b['headroom_pool_used_percent']}%)")
        reference = " (reference)" if b["source"] == "reference" else ""
        table.add_row(b["tier"], b["model"] + reference, str(b["devices"]), b["mode"], per_port, pool,
                      f"{b['worst_domain_committed_bytes'] / 1e6:.1f}MB ({b['worst_domain_used_percent']}%)",
                      f"{b['domain_buffer_bytes'] / 1e6:.1f}MB")
    out.print(table)
    if any(b["source"] == "reference" for b in s["buffers"]):
        out.print("  (reference): the NOS sets these buffers itself; counted with the vendor's SONiC settings"
                  " for the same ASIC. `netgen headroom` has the per-port detail.")
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
    if s["unverified"]:
        table = Table(title="Not confirmed by a public source (NG507): verify on a device")
        for column in ("tier", "model", "item"):
            table.add_column(column)
        for u in s["unverified"]:
            for n, item in enumerate(u["items"]):
                table.add_row(u["tier"] if n == 0 else "", u["model"] if n == 0 else "", item)
        out.print(table)


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(readable=False, path_type=Path), metavar="DIR",
              help="Output directory: DIR/<device>/<file>. Replaced whole, atomically.")
@click.option("--device", "devices", multiple=True, metavar="PATTERN",
              help=f"Render only these devices (repeatable; {DEVICE_PATTERN_HELP}).")
@click.option("--check", is_flag=True, help="Render and check against the NOS models, write nothing.")
@click.option("--no-reuse", is_flag=True,
              help="Render every device, even those whose inputs are unchanged since DIR was written.")
@click.option("--keys-only", is_flag=True,
              help="Print each device's render key, tier and zone as JSON and write nothing"
                   " (`netgen diff` renders only the devices whose keys differ between revisions).")
@json_option
def render(fabric: str, output: Path | None, devices: tuple[str, ...], check: bool, no_reuse: bool,
           keys_only: bool, as_json: bool) -> None:
    """Render device configs (SONiC: config_db.json + frr.conf) and check each against what its NOS
    accepts (SONiC: typed models of the YANG tables). Nothing is written on any error. A device whose
    inputs, netgen and templates are those DIR was written with keeps its files (see --no-reuse)."""
    if keys_only and (output is not None or check):
        raise click.UsageError("--keys-only writes nothing: give it without -o DIR and --check")
    if output is None and not check and not keys_only:
        raise click.UsageError("give an output directory with -o DIR, or --check to only render and check")
    as_json = as_json or keys_only
    common.NOTHING_TO_TEAR_DOWN = True  # files are written by os-level calls; workers are joined
    key: str | None = None  # of a render of every device into DIR (fabric_key)
    ahead: InspectionAhead | None = None  # DIR's first look, taken while the fabric is expanded
    try:
        loaded = load_fabric(fabric)
        if output is not None and not check and not keys_only:
            if not devices:
                key = _whole_render_key(loaded)
                same = None if no_reuse or key is None else unchanged_render(output, key)  # DIR may hold it
                if same is not None:
                    _report_render(same[0], same[1], check, as_json)
            ahead = InspectionAhead.start(output)
            if ahead is not None:
                click.get_current_context().call_on_close(ahead.close)
        _, ctx, findings = load(fabric, loaded)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except OutputDirError as exc:
        output_dir_failure(str(exc), exc.path, as_json)
    except RenderInputError as exc:
        _render_input_failure(exc, as_json)
    errors, warnings = counts(findings)
    if errors:
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_DESIGN, "errors": errors, "warnings": warnings,
                        "findings": [f.as_dict() for f in findings], "written": False})
        else:
            print_findings(findings)
            err.print(f"[bold red]not rendered[/]: {errors} design error(s); nothing was written")
        sys.exit(EXIT_DESIGN)
    chosen = named_devices(ctx, devices, as_json) if devices else []
    selected = chosen or list(ctx.topology.devices)
    unread = [] if keys_only else check_secrets(loaded, deploy=False).errors  # the hashes it reads, at their lines
    if unread:
        _unreadable_secrets(unread, as_json)
    try:
        if keys_only:
            _print_keys(ctx, selected, warnings)
        with progress(len(selected), "rendering") as advance:
            result = render_fabric(ctx, None if check else output, chosen or None,
                                   progress=lambda _device: advance(), reuse=not no_reuse,
                                   whole=None if key is None else (key, warnings), ahead=ahead)
    except OutputDirError as exc:  # DIR may not be replaced, or the OS refused: exit 2, never a traceback
        output_dir_failure(str(exc), exc.path, as_json)
    except RenderInputError as exc:  # a custom block or a secret reference: input, exit 2
        _render_input_failure(exc, as_json)
    except RenderError as exc:
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_INTERNAL, "render_error": str(exc), "written": False})
        else:
            err.print(f"[bold red]render error[/] (a netgen bug; nothing was written): {escape(str(exc))}")
        sys.exit(EXIT_INTERNAL)
    _report_render(result, warnings, check, as_json)


def _whole_render_key(loaded: LoadedFabric) -> str | None:
    """fabric_key, or None where a local user's hash cannot be read: the render then reports that
    where it always has, after the design checks (design errors come first)."""
    try:
        return fabric_key(loaded.fabric, loaded.catalog)
    except RenderInputError:
        return None


def _unreadable_secrets(problems: list[InputProblem], as_json: bool) -> NoReturn:
    """Secret references the render cannot read, each at its line and column: exit 2, nothing written."""
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INPUT, "error": "; ".join(p.render() for p in problems),
                   "input_errors": [p.as_dict() for p in problems], "written": False})
    else:
        for problem in problems:
            err.print(f"[bold red]error[/]: {escape(problem.render())}")
        err.print("nothing was written")
    sys.exit(EXIT_INPUT)


def _render_input_failure(exc: RenderInputError, as_json: bool) -> NoReturn:
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INPUT, "error": str(exc), "written": False})
    else:
        err.print(f"[bold red]error[/]: {escape(str(exc))}; nothing was written")
    sys.exit(EXIT_INPUT)


def _report_render(result: RenderResult, warnings: int, check: bool, as_json: bool) -> NoReturn:
    payload = {"ok": True, "exit_code": EXIT_OK, "output": None if check else str(result.output),
               "checked_only": check, "devices": len(result.devices),
               "files": result.files, "bytes": result.bytes, "warnings": warnings,
               "skipped": {nos: len(names) for nos, names in result.skipped.items()},
               "reused": len(result.reused), "unchecked": result.unchecked, "notes": result.notes}
    if as_json:
        emit_json(payload)
    else:
        where = "checked, nothing written" if check else f"into {escape(str(result.output))}"
        kept = f" ({len(result.reused)} unchanged since the last render, kept)" if result.reused else ""
        out.print(f"[bold green]rendered[/] {len(result.devices)} device(s){kept}, {result.files} files,"
                  f" {result.bytes / 1e6:.1f} MB, all checked (SONiC: YANG models; EOS: shape, custom lines' top-level"
                  f" keywords); {where}")
        for nos, names in sorted(result.skipped.items()):
            out.print(f"[yellow]skipped[/] {len(names)} {nos} device(s): no {nos} renderer yet")
        for note in result.unchecked:
            out.print(f"[yellow]not checked[/] {escape(note)}")
        for note in result.notes:
            out.print(f"[yellow]note[/] {escape(note)}")
    sys.exit(EXIT_OK)


def _print_keys(ctx: DesignContext, names: list[str], warnings: int) -> NoReturn:
    devices = ctx.topology.devices
    with progress(len(names), "keying") as advance:
        keys, skipped = render_keys(ctx, [devices[n] for n in names], progress=lambda _device: advance())
    emit_json({"ok": True, "exit_code": EXIT_OK, "warnings": warnings,
               "devices": {name: {"key": key, "tier": devices[name].role.value, "zone": devices[name].zone}
                           for name, key in keys.items()},
               "skipped": {nos: sorted(found) for nos, found in skipped.items()}})
    sys.exit(EXIT_OK)


@cli.command()
@fabric_argument
@click.option("--device", "devices", multiple=True, metavar="PATTERN",
              help=f"Devices to show (repeatable; {DEVICE_PATTERN_HELP}); default: one device per tier and model.")
@json_option
def headroom(fabric: str, devices: tuple[str, ...], as_json: bool) -> None:
    """PFC headroom per port (reserved, xoff: netgen's and the vendor's) and each ASIC's buffer budget."""
    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    names = named_devices(ctx, devices, as_json) if devices else _one_per_model(ctx)
    report = [_headroom_report(ctx, name) for name in names]
    errors, _ = counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({"ok": not errors, "exit_code": code, "devices": report})
        sys.exit(code)
    for entry in report:
        _print_headroom(entry)
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
        pg = plan.lossless.get(port.name)
        if pg is not None:
            ports.append({"port": port.name, "speed_gbps": port.speed_gbps, "cable_m": port.cable_m,
                          "reserved": pg.size, "xon": pg.xon, "xon_offset": pg.xon_offset, "xoff": pg.xoff,
                          "computed_xoff": pg.computed_xoff, "vendor_xoff": pg.vendor_xoff,
                          "vendor_cable_m": pg.vendor_cable_m})
    asics = [{"asic": d.index, "ports": d.ports, "lossless_ports": d.lossless_ports,
              "buffer_bytes": d.buffer_bytes, "pool_bytes": d.pool_bytes,
              "headroom_pool_bytes": d.headroom_pool_bytes, "xoff_bytes": d.xoff_bytes,
              "headroom_pool_used_percent": round(100 * d.headroom_oversubscription, 2),
              "pgs_covered": d.pgs_covered, "reserved_bytes": d.reserved_bytes,
              "egress_pool_bytes": d.egress_pool_bytes, "egress_reserved_bytes": d.egress_reserved_bytes,
              "static_bytes": d.static_bytes, "per_port_static_bytes": d.per_port_static,
              "committed_bytes": d.committed,
              "used_percent": round(100 * d.committed / d.buffer_bytes, 2)} for d in plan.domains]
    vendor = plan.vendor.source if plan.vendor else None
    return {"device": name, "model": device.model, "mode": plan.mode, "source": plan.source,
            "vendor_settings": vendor, "dynamic_th": plan.dynamic_th, "ports": ports, "asics": asics}


def _print_headroom(entry: dict[str, Any]) -> None:
    where = {"sku": "the SONiC SKU's settings, rendered",
             "reference": "reference: the NOS sets its own; counted with the vendor's SONiC settings",
             "unpublished": "unpublished: the SDK's defaults, no vendor table"}[entry["source"]]
    title = f"{entry['device']} ({entry['model']}, {entry['mode']} buffers; {where})"
    out.print(escape(title))
    if entry["vendor_settings"]:
        out.print(f"  vendor settings: {escape(entry['vendor_settings'])}")
    if not entry["ports"]:
        out.print("  no lossless headroom is known for this device")
        return
    # One row per distinct profile: a leaf has two (host and uplink ports), not 32 identical lines.
    groups: dict[tuple[Any, ...], list[str]] = {}
    for port in entry["ports"]:
        key = tuple(port[k] for k in ("speed_gbps", "cable_m", "reserved", "xoff", "computed_xoff", "vendor_xoff",
                                      "vendor_cable_m", "xon_offset"))
        groups.setdefault(key, []).append(port["port"])
    table = Table()
    for column in ("ports", "speed", "cable", "reserved", "xoff", "netgen formula", "vendor row", "xon_offset"):
        table.add_column(column, justify="right" if column != "ports" else "left")
    for (speed, cable, reserved, xoff, computed, vendor, vendor_cable, xon_offset), names in groups.items():
        label = names[0] if len(names) == 1 else f"{len(names)}: {names[0]} .. {names[-1]}"
        formula = "-" if computed is None else f"{computed:,}"
        row = "beyond the table" if vendor is None else f"{vendor:,} ({vendor_cable}m)"
        table.add_row(label, f"{speed}G", f"{cable}m", f"{reserved:,}", f"{xoff:,}", formula, row, f"{xon_offset:,}")
    out.print(table)
    for d in entry["asics"]:
        out.print(f"  ASIC {d['asic']}: {d['lossless_ports']} lossless PGs draw up to {d['xoff_bytes']:,} B from a"
                  f" {d['headroom_pool_bytes']:,} B shared headroom pool ({d['headroom_pool_used_percent']}%;"
                  f" {d['pgs_covered']} can fill their headroom at once); ingress pool {d['pool_bytes']:,} B +"
                  f" reserved {d['reserved_bytes']:,} B, egress pool {d['egress_pool_bytes']:,} B + reserved"
                  f" {d['egress_reserved_bytes']:,} B; {d['committed_bytes']:,} of {d['buffer_bytes']:,} B"
                  f" ({d['used_percent']}%)")


@cli.command(fabric_optional=True)
@click.option("--kind", type=click.Choice(["fabric", "catalog"]), default="fabric", show_default=True,
              help="Which file format to describe.")
@output_file_option("The JSON Schema.")
@fabric_argument
@json_option
def schema(kind: str, output: Path | None, fabric: str | None, as_json: bool) -> None:
    """Print the JSON Schema of fabric files (or catalog files) for editors and CI linters.

    Model names are an enum of the built-in catalog's; with a FABRIC, of its own catalog too.
    --json: the schema inside the result document (`schema`), or where it was written."""
    models = None
    if fabric is not None:
        try:
            models = list(load_fabric(fabric).catalog.models)
        except NetgenInputError as exc:
            sys.exit(input_failure(exc, as_json))
    document = fabric_schema(models) if kind == "fabric" else catalog_schema()
    text = json.dumps(document, indent=2) + "\n"
    if output is not None:
        try:
            common.write_replacing(output, text)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}", as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "kind": kind, "fabric": fabric,
                   "output": None if output is None else str(output), **({} if output else {"schema": document})})
    elif output is None:
        click.echo(text, nl=False)

