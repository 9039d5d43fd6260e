"""`netgen report`: the fabric as one self-contained HTML page."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_OK,
    cli,
    counts,
    emit_json,
    err,
    escape,
    fabric_argument,
    json_option,
    load_or_exit,
    out,
    output_file_option,
    shared_drains,
    write_output,
)


@cli.command()
@fabric_argument
@output_file_option("The HTML page.")
@click.option("--ignore-drains", is_flag=True,
              help="Leave out the switches the fabric's shared drain state says netgen left drained (default:"
                   " a maintenance panel, and the placement panel against the capacity they leave).")
@json_option
def report(fabric: str, output: Path | None, ignore_drains: bool, as_json: bool) -> None:
    """One self-contained HTML page (nothing fetched; one inline script, the device search): the
    fabric's counts, a zone-level picture with the ATSW capacity per zone, oversubscription per
    tier, every switch in a searchable table, each zone's RTSW x CTSW link matrix, the buffer budget
    per model, the QoS chain from host to spine, placement and ECMP what-if panels, and the design
    findings, readable from 390 px wide. A fabric with design errors still gets its report (the
    findings are in it) and exits 1."""
    from netgen.report.build import render_report  # noqa: PLC0415

    loaded, ctx, findings = load_or_exit(fabric, as_json)
    errors, warnings = counts(findings)
    page = render_report(ctx, findings, None if ignore_drains else shared_drains(loaded, ctx, as_json))
    if output is not None:
        write_output(output, page, as_json)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({"ok": not errors, "exit_code": code, "output": None if output is None else str(output),
                   "bytes": len(page.encode()), "errors": errors, "warnings": warnings,
                   **({} if output else {"html": page})})
    elif output is None:
        _print_page(page, errors)
    else:
        out.print(f"[bold green]report[/] {escape(str(output))}: {len(page.encode()) / 1e6:.2f} MB,"
                  f" {errors} design error(s), {warnings} warning(s)")
    sys.exit(code)


def _print_page(page: str, errors: int) -> None:
    """The page on standard output; design errors said on stderr (they are in the page's findings)."""
    click.echo(page, nl=not page.endswith("\n"))
    if errors:
        err.print(f"[red]{errors} design error(s): they are in the report's findings[/]")
