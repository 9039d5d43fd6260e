"""`netgen report`: the fabric as one self-contained HTML page."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INPUT,
    EXIT_OK,
    cli,
    counts,
    emit_json,
    escape,
    fabric_argument,
    fail,
    input_failure,
    json_option,
    load,
    out,
    write_replacing,
)
from netgen.intent import NetgenInputError


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE", required=True,
              help="The HTML file to write (replaced whole).")
@json_option
def report(fabric: str, output: Path, as_json: bool) -> None:
    """One self-contained HTML page (no script, nothing fetched): the fabric's counts, a zone-level
    picture with the ATSW capacity per zone, oversubscription per tier, each zone's RTSW x CTSW link
    matrix, the buffer budget per model, the QoS chain from host to spine, placement and ECMP what-if
    panels, and the design findings. A fabric with design errors still gets its report (the
    findings are in it) and exits 1."""
    from netgen.report.build import render_report  # noqa: PLC0415

    try:
        _, ctx, findings = load(fabric)
    except NetgenInputError as exc:
        sys.exit(input_failure(exc, as_json))
    errors, warnings = counts(findings)
    page = render_report(ctx, findings)
    try:
        write_replacing(output, page)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}", as_json, EXIT_INPUT)
    code = EXIT_DESIGN if errors else EXIT_OK
    if as_json:
        emit_json({"ok": not errors, "exit_code": code, "output": str(output), "bytes": len(page.encode()),
                   "errors": errors, "warnings": warnings})
    else:
        out.print(f"[bold green]report[/] {escape(str(output))}: {len(page.encode()) / 1e6:.2f} MB,"
                  f" {errors} design error(s), {warnings} warning(s)")
    sys.exit(code)
