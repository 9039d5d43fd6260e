"""Fabric commands: validate, show, render, headroom, schema."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.table import Table

from netgen import api
from netgen.api import UnreadableSecrets
from netgen.checks import Finding
from netgen.checks.summary import headroom_report, one_per_model, summarize
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
    load_or_exit,
    named_devices,
    out,
    output_dir_failure,
    output_file_option,
    print_findings,
    progress,
    write_output,
)
from netgen.intent import NetgenInputError, load_fabric
from netgen.intent.errors import InputProblem
from netgen.intent.schema import catalog_schema, fabric_schema
from netgen.output.inspection import OutputDirError
from netgen.platforms.render import RenderResult
from netgen.rendered import RenderError, RenderInputError
from netgen.topology.effective import EffectiveSettings, effective_settings
from netgen.topology.selection import SelectionError


@cli.command()
@fabric_argument
@json_option
def validate(fabric: str, as_json: bool) -> None:
    """Load FABRIC, expand it and run every design check. Every secret reference is read as its
    user reads it: a local user's hash as `netgen render` does (unreadable, empty or not a hash:
    exit 2, at the reference's line and column), a key `netgen deploy` fills in as the deploy
    does (a warning here: the machine that validates need not be the one that deploys)."""
    try:
        checked = api.validate(fabric, kept_to_exit=True, checking=common.checking)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    code = EXIT_DESIGN if checked.errors else EXIT_OK
    if as_json:
        emit_json({
            "ok": checked.ok,
            "exit_code": code,
            "fabric": checked.loaded.fabric.name,
            "source": checked.loaded.display,
            "errors": checked.errors,
            "warnings": checked.warnings,
            "findings": [f.as_dict() for f in checked.findings],
            "input_warnings": [p.as_dict() for p in checked.input_warnings],
        })
        sys.exit(code)
    print_findings(checked.findings)
    for problem in checked.input_warnings:
        out.print(f"[bold yellow]warning[/]: {escape(problem.render())}")
    verdict = "[bold red]FAIL[/]" if checked.errors else "[bold green]OK[/]"
    unread = (f", {len(checked.input_warnings)} secret(s) a deploy could not read here" if checked.input_warnings
              else "")
    out.print(f"{verdict} {escape(checked.loaded.fabric.name)}: {checked.errors} error(s), {checked.warnings}"
              f" warning(s){unread}")
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
    _, ctx, findings = load_or_exit(fabric, as_json)
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
        _print_settings(settings)
    out.print(f"{errors} design error(s), {warnings} warning(s) in the fabric")
    sys.exit(code)


def _print_settings(settings: EffectiveSettings) -> None:
    # plain lines, never wrapped or cut: a source path is only useful whole (and greppable)
    width = max(len(s.name) for s in settings.settings)
    out.print(f"[bold]{escape(settings.device)}[/]: effective settings (value <- where it came from)")
    for s in settings.settings:
        out.print(f"  {escape(s.name.ljust(width))}  {escape(s.value)}  [dim]<-[/] {escape(s.source)}", soft_wrap=True)
    if settings.custom_config:
        out.print("custom_config, in the order applied:")
        for b in settings.custom_config:
            state = f"replaced by {b.replaced_by}" if b.replaced_by else "applied"
            out.print(f"  {escape(b.name)} ({b.layer}, {b.source}, {', '.join(b.nos)}): {state}", soft_wrap=True)


def _table(title: str | None, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title) if title is not None else Table()
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table


def _counted(items: dict[str, int]) -> str:
    return ", ".join(f"{m} x{n}" for m, n in items.items())


def _print_summary(s: dict[str, Any]) -> None:
    out.print(f"[bold]{escape(s['fabric'])}[/]: {s['zones']} zone(s), {s['racks']} racks, {s['hosts']} hosts,"
              f" {s['gpus']} GPUs, {s['nics']} backend NICs, {s['devices']} switches,"
              f" {s['bgp_sessions']} BGP sessions")
    out.print(_table("Switches per tier", ("tier", "devices", "models", "nos"),
                     [(t["tier"], str(t["devices"]), _counted(t["models"]), _counted(t["nos"])) for t in s["tiers"]]))
    out.print(_table("Links", ("tier", "speed", "links"),
                     [(link["tier"], link["speed"], str(link["links"])) for link in s["links"]]))
    out.print(_table("Oversubscription (uplink:downlink bandwidth)", ("zone", "tier", "derived", "declared"),
                     [(str(row["zone"]), row["tier"], row["ratio"], row["declared"]) for row in s["oversubscription"]]))
    out.print(_table("Buffer budget (worst ASIC per model)",
                     ("tier", "model", "devices", "mode", "xoff/port", "headroom pool", "committed", "of buffer"),
                     [_buffer_row(b) for b in s["buffers"]]))
    if any(b["source"] == "reference" for b in s["buffers"]):
        out.print("  (reference): the NOS sets these buffers itself; counted with the vendor's SONiC settings"
                  " for the same ASIC. `netgen headroom` has the per-port detail.")
    out.print(_table("Address pools (busiest slot per pool)", ("pool", "slot", "for", "used"),
                     [(p["pool"], p["slot"], p["what"], f"{p['used_percent']}%") for p in _busiest(s["pools"])]))
    if s["unverified"]:
        out.print(_table("Not confirmed by a public source (NG507): verify on a device", ("tier", "model", "item"),
                         _unverified_rows(s["unverified"])))


def _unverified_rows(unverified: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One row per item, the tier and model on each model's first row only."""
    return [(u["tier"] if n == 0 else "", u["model"] if n == 0 else "", item)
            for u in unverified for n, item in enumerate(u["items"])]


def _buffer_row(b: dict[str, Any]) -> tuple[str, ...]:
    buffer = f"{b['domain_buffer_bytes'] / 1e6:.1f}MB"
    if b["source"] == "unpublished":
        return b["tier"], b["model"], str(b["devices"]), b["mode"], "unpublished", "-", "-", buffer
    low, high = b["xoff_per_port_bytes"]
    per_port = f"{low / 1000:.0f}KB" if low == high else f"{low / 1000:.0f}-{high / 1000:.0f}KB"
    pool = (f"{b['headroom_pool_xoff_bytes'] / 1e6:.1f} of {b['headroom_pool_bytes'] / 1e6:.1f}MB"
            f" ({b['headroom_pool_used_percent']}%)")
    reference = " (reference)" if b["source"] == "reference" else ""
    return (b["tier"], b["model"] + reference, str(b["devices"]), b["mode"], per_port, pool,
            f"{b['worst_domain_committed_bytes'] / 1e6:.1f}MB ({b['worst_domain_used_percent']}%)", buffer)


def _busiest(pools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The busiest slot of each pool, pools in first-seen order."""
    busiest: dict[str, dict[str, Any]] = {}
    for p in pools:
        if p["pool"] not in busiest or p["used_percent"] > busiest[p["pool"]]["used_percent"]:
            busiest[p["pool"]] = p
    return list(busiest.values())


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(readable=False, path_type=Path), metavar="DIR",
              help="Output directory: DIR/<device>/<file>. Replaced whole, atomically.")
@click.option("--device", "devices", multiple=True, metavar="PATTERN",
              help=f"Render only these devices (repeatable; {DEVICE_PATTERN_HELP}).")
@click.option("--check", is_flag=True, help="Render and check against the NOS models, write nothing.")
@click.option("--no-reuse", is_flag=True,
              help="Render every device, even those whose inputs are unchanged since DIR was written.")
@click.option("--verify", is_flag=True,
              help="Read and hash every file DIR's manifest lists before replacing DIR or keeping any of it."
                   " Without it, a file whose inode, size and mtime are those the manifest recorded (not within"
                   " 2 s of when it was written) is taken as unchanged unread, as git and rsync do: an edit that"
                   " keeps the size and puts the mtime back is missed. `netgen deploy` always reads and checks"
                   " what it pushes.")
@click.option("--keys-only", is_flag=True,
              help="Print each device's render key, tier and zone as JSON and write nothing"
                   " (`netgen diff` renders only the devices whose keys differ between revisions).")
@json_option
def render(fabric: str, output: Path | None, devices: tuple[str, ...], check: bool, no_reuse: bool,
           verify: bool, keys_only: bool, as_json: bool) -> None:
    """Render device configs (SONiC: config_db.json + frr.conf) and check each against what its NOS
    accepts (SONiC: typed models of the YANG tables). Nothing is written on any error. A device whose
    inputs, netgen and templates are those DIR was written with keeps its files (see --no-reuse)."""
    if keys_only and (output is not None or check):
        raise click.UsageError("--keys-only writes nothing: give it without -o DIR and --check")
    if output is None and not check and not keys_only:
        raise click.UsageError("give an output directory with -o DIR, or --check to only render and check")
    common.NOTHING_TO_TEAR_DOWN = True  # files are written by os-level calls; workers are joined
    if keys_only:
        _print_keys(fabric, devices)
    with _render_failures(as_json):
        outcome = api.render(fabric, None if check else output, devices=devices, reuse=not no_reuse, verify=verify,
                             kept_to_exit=True, checking=common.checking, progress=progress)
    if outcome.result is None:
        _not_rendered(outcome.findings, outcome.warnings, as_json)
    _report_render(outcome.result, outcome.warnings, check, as_json)


@contextlib.contextmanager
def _render_failures(as_json: bool) -> Iterator[None]:
    """What stops a render, each with its message and exit code; nothing was written."""
    try:
        yield
    except UnreadableSecrets as exc:
        _unreadable_secrets(exc.problems, as_json)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    except SelectionError as exc:
        fail(f"--device: {exc}", as_json)
    except OutputDirError as exc:  # DIR may not be replaced, or the OS refused: exit 2, never a traceback
        output_dir_failure(str(exc), exc.path, as_json)
    except RenderInputError as exc:  # a custom block or a secret reference: input, exit 2
        _render_input_failure(exc, as_json)
    except RenderError as exc:
        _render_bug(exc, as_json)


def _not_rendered(findings: list[Finding], warnings: int, as_json: bool) -> NoReturn:
    errors = len(findings) - warnings
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_DESIGN, "errors": errors, "warnings": warnings,
                   "findings": [f.as_dict() for f in findings], "written": False})
    else:
        print_findings(findings)
        err.print(f"[bold red]not rendered[/]: {errors} design error(s); nothing was written")
    sys.exit(EXIT_DESIGN)


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


def _render_bug(exc: RenderError, as_json: bool) -> NoReturn:
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_INTERNAL, "render_error": str(exc), "written": False})
    else:
        err.print(f"[bold red]render error[/] (a netgen bug; nothing was written): {escape(str(exc))}")
    sys.exit(EXIT_INTERNAL)


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


def _print_keys(fabric: str, devices: tuple[str, ...]) -> NoReturn:
    """--keys-only: one JSON document, errors included."""
    with _render_failures(True):
        keyed = api.render_keys(fabric, devices=devices, kept_to_exit=True, checking=common.checking,
                                progress=progress)
    if keyed.checked.errors:
        _not_rendered(keyed.checked.findings, keyed.checked.warnings, True)
    emit_json({"ok": True, "exit_code": EXIT_OK, "warnings": keyed.checked.warnings, **keyed.as_dict()})
    sys.exit(EXIT_OK)


@cli.command()
@fabric_argument
@click.option("--device", "devices", multiple=True, metavar="PATTERN",
              help=f"Devices to show (repeatable; {DEVICE_PATTERN_HELP}); default: one device per tier and model.")
@json_option
def headroom(fabric: str, devices: tuple[str, ...], as_json: bool) -> None:
    """PFC headroom per port (reserved, xoff: netgen's and the vendor's) and each ASIC's buffer budget."""
    _, ctx, findings = load_or_exit(fabric, as_json)
    names = named_devices(ctx, devices, as_json) if devices else one_per_model(ctx)
    report = [headroom_report(ctx, name) for name in names]
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
    out.print(_headroom_table(entry["ports"]))
    for d in entry["asics"]:
        out.print(f"  ASIC {d['asic']}: {d['lossless_ports']} lossless PGs draw up to {d['xoff_bytes']:,} B from a"
                  f" {d['headroom_pool_bytes']:,} B shared headroom pool ({d['headroom_pool_used_percent']}%;"
                  f" {d['pgs_covered']} can fill their headroom at once); ingress pool {d['pool_bytes']:,} B +"
                  f" reserved {d['reserved_bytes']:,} B, egress pool {d['egress_pool_bytes']:,} B + reserved"
                  f" {d['egress_reserved_bytes']:,} B; {d['committed_bytes']:,} of {d['buffer_bytes']:,} B"
                  f" ({d['used_percent']}%)")


HEADROOM_PROFILE = ("speed_gbps", "cable_m", "reserved", "xoff", "computed_xoff", "vendor_xoff", "vendor_cable_m",
                    "xon_offset")


def _headroom_table(ports: list[dict[str, Any]]) -> Table:
    # One row per distinct profile: a leaf has two (host and uplink ports), not 32 identical lines.
    groups: dict[tuple[Any, ...], list[str]] = {}
    for port in ports:
        groups.setdefault(tuple(port[k] for k in HEADROOM_PROFILE), []).append(port["port"])
    table = Table()
    for column in ("ports", "speed", "cable", "reserved", "xoff", "netgen formula", "vendor row", "xon_offset"):
        table.add_column(column, justify="right" if column != "ports" else "left")
    for (speed, cable, reserved, xoff, computed, vendor, vendor_cable, xon_offset), names in groups.items():
        label = names[0] if len(names) == 1 else f"{len(names)}: {names[0]} .. {names[-1]}"
        formula = "-" if computed is None else f"{computed:,}"
        row = "beyond the table" if vendor is None else f"{vendor:,} ({vendor_cable}m)"
        table.add_row(label, f"{speed}G", f"{cable}m", f"{reserved:,}", f"{xoff:,}", formula, row, f"{xon_offset:,}")
    return table


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
    models = None if fabric is None else _catalog_models(fabric, as_json)
    document = fabric_schema(models) if kind == "fabric" else catalog_schema()
    text = json.dumps(document, indent=2) + "\n"
    if output is not None:
        write_output(output, text, as_json)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "kind": kind, "fabric": fabric,
                   "output": None if output is None else str(output), **({} if output else {"schema": document})})
    elif output is None:
        click.echo(text, nl=False)


def _catalog_models(fabric: str, as_json: bool) -> list[str]:
    """The model names of FABRIC's catalog (the built-in one and its own)."""
    try:
        return list(load_fabric(fabric).catalog.models)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
