"""The `netgen` command line.

Exit codes (stable, for scripts):
  0  success (warnings allowed)
  1  design errors: the fabric loads but must not be rendered
  2  usage or input errors: bad arguments, unreadable or invalid fabric/catalog files
  3  internal error: a netgen bug (run with --debug for the traceback and report it)
"""

from __future__ import annotations

import contextlib
import difflib
import json
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from netgen import __version__
from netgen.checks import DesignContext, Finding, Severity, run_checks
from netgen.checks.summary import summarize
from netgen.intent import LoadedFabric, NetgenInputError, load_fabric
from netgen.intent.schema import catalog_schema, fabric_schema
from netgen.platforms.base import RenderError
from netgen.platforms.render import OutputDirError, render_fabric
from netgen.topology import expand

EXIT_OK, EXIT_DESIGN, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

# No highlighting and no :emoji: codes: user text is printed as given (and markup-escaped).
out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

F = TypeVar("F", bound=Callable[..., Any])


def _emit_json(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=False))


def _input_failure(exc: NetgenInputError, as_json: bool) -> int:
    if as_json:
        _emit_json({"ok": False, "exit_code": EXIT_INPUT, "input_errors": [p.as_dict() for p in exc.problems]})
    else:
        for problem in exc.problems:
            err.print(f"[bold red]error[/]: {escape(problem.render())}")
        err.print(f"[red]{len(exc.problems)} input error(s); nothing was checked[/]")
    return EXIT_INPUT


def _load(path: str) -> tuple[LoadedFabric, DesignContext, list[Finding]]:
    spinner = err.status("expanding fabric and running design checks", spinner="dots") if err.is_terminal else None
    if spinner:
        spinner.start()
    try:
        loaded = load_fabric(path)
        topology = expand(loaded.fabric, loaded.catalog)
        ctx = DesignContext(loaded.fabric, loaded.catalog, topology)
        findings = run_checks(ctx)
    finally:
        if spinner:
            spinner.stop()
    return loaded, ctx, findings


def _print_findings(findings: list[Finding]) -> None:
    # One finding per line (plus its fix): readable at any width and easy to grep in CI logs.
    for f in findings:
        style = "bold red" if f.severity is Severity.ERROR else "bold yellow"
        out.print(f"[{style}]{f.severity.value}[/] {f.code} {escape(f.subject)}: {escape(f.message)}")
        out.print(f"    fix: {escape(f.fix)}")


def _counts(findings: list[Finding]) -> tuple[int, int]:
    errors = sum(1 for f in findings if f.severity is Severity.ERROR)
    return errors, len(findings) - errors


class NetgenGroup(click.Group):
    """Turns every failure into an exit code and a one-line message; tracebacks only with --debug."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            err.print("[red]interrupted[/]")
            sys.exit(130)
        except Exception as exc:  # a bug: say so plainly, keep the traceback behind --debug
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            err.print(f"[bold red]internal error[/]: {escape(type(exc).__name__)}: {escape(str(exc))}")
            err.print("this is a netgen bug; run with --debug for the traceback and report it")
            sys.exit(EXIT_INTERNAL)


@click.group(cls=NetgenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="netgen")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Generate, check and roll out configs for RoCE AI-training backend fabrics.

    Exit codes: 0 ok, 1 design errors, 2 usage or input errors, 3 internal error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


fabric_argument = click.argument("fabric", type=click.Path(dir_okay=True, file_okay=True, path_type=str))
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON on stdout.")


@cli.command()
@fabric_argument
@json_option
def validate(fabric: str, as_json: bool) -> None:
    """Load FABRIC (a fabric.yaml or its directory), expand it and run every design check."""
    try:
        loaded, _, findings = _load(fabric)
    except NetgenInputError as exc:
        sys.exit(_input_failure(exc, as_json))
    errors, warnings = _counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        _emit_json({
            "ok": not errors,
            "exit_code": code,
            "fabric": loaded.fabric.name,
            "source": str(loaded.source),
            "errors": errors,
            "warnings": warnings,
            "findings": [f.as_dict() for f in findings],
        })
    else:
        _print_findings(findings)
        verdict = "[bold red]FAIL[/]" if errors else "[bold green]OK[/]"
        out.print(f"{verdict} {escape(loaded.fabric.name)}: {errors} error(s), {warnings} warning(s)")
    sys.exit(code)


@cli.command()
@fabric_argument
@json_option
def show(fabric: str, as_json: bool) -> None:
    """Summarise FABRIC: devices per tier, links, GPUs, oversubscription, buffer budget, pools."""
    try:
        _, ctx, findings = _load(fabric)
    except NetgenInputError as exc:
        sys.exit(_input_failure(exc, as_json))
    summary = summarize(ctx)
    errors, warnings = _counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        summary.update({"exit_code": code, "errors": errors, "warnings": warnings,
                        "findings": [f.as_dict() for f in findings]})
        _emit_json(summary)
        sys.exit(code)
    _print_summary(summary)
    _print_findings(findings)
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
        _, ctx, findings = _load(fabric)
    except NetgenInputError as exc:
        sys.exit(_input_failure(exc, as_json))
    errors, warnings = _counts(findings)
    if errors:
        if as_json:
            _emit_json({"ok": False, "exit_code": EXIT_DESIGN, "errors": errors, "warnings": warnings,
                        "findings": [f.as_dict() for f in findings], "written": False})
        else:
            _print_findings(findings)
            err.print(f"[bold red]not rendered[/]: {errors} design error(s); nothing was written")
        sys.exit(EXIT_DESIGN)
    _require_devices(ctx, devices)
    selected = list(devices) or list(ctx.topology.devices)
    try:
        with _progress(len(selected), "rendering") as advance:
            result = render_fabric(ctx, None if check else output, list(devices) or None,
                                   progress=lambda _device: advance())
    except OutputDirError as exc:
        raise click.UsageError(str(exc)) from None
    except RenderError as exc:
        if as_json:
            _emit_json({"ok": False, "exit_code": EXIT_INTERNAL, "render_error": str(exc), "written": False})
        else:
            err.print(f"[bold red]render error[/] (a netgen bug; nothing was written): {escape(str(exc))}")
        sys.exit(EXIT_INTERNAL)
    payload = {"ok": True, "exit_code": EXIT_OK, "output": None if check else str(result.output),
               "checked_only": check, "devices": len(result.devices),
               "files": result.files, "bytes": result.bytes, "warnings": warnings,
               "skipped": {nos: len(names) for nos, names in result.skipped.items()}}
    if as_json:
        _emit_json(payload)
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
        _, ctx, findings = _load(fabric)
    except NetgenInputError as exc:
        sys.exit(_input_failure(exc, as_json))
    _require_devices(ctx, devices)
    names = list(devices) or _one_per_model(ctx)
    report = [_headroom_report(ctx, name) for name in names]
    errors, _ = _counts(findings)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        _emit_json({"exit_code": code, "devices": report})
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


def _require_devices(ctx: DesignContext, devices: tuple[str, ...]) -> None:
    """Usage error (exit 2) for a --device that is not in the fabric, with a close match."""
    unknown = [name for name in devices if name not in ctx.topology.devices]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(ctx.topology.devices), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise click.BadParameter(f"unknown device {unknown[0]!r}{hint}", param_hint="--device")


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


@contextlib.contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr for interactive use; silent when stderr is not a terminal."""
    if not err.is_terminal:
        yield lambda: None
        return
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as progress:
        task = progress.add_task(label, total=total)
        yield lambda: progress.advance(task)


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


def main() -> None:
    cli(prog_name="netgen")


if __name__ == "__main__":
    main()
