"""`netgen compare`: the RoCE fabric and its InfiniBand alternative, side by side."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

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
    out,
)
from netgen.infiniband.compare import PriceTable, compare, comparison_lines, load_prices
from netgen.intent.errors import NetgenInputError


@cli.command(name="compare")
@fabric_argument
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="A price table (YAML: currency, switches by model, cables by medium, optics by speed,"
                   " host_adapters roce/infiniband); without it no cost is shown. netgen invents no price.")
@json_option
def compare_command(fabric: str, prices: Path | None, as_json: bool) -> None:
    """FABRIC's RoCE fabric and its InfiniBand alternative (the `infiniband:` section) for the same GPUs:
    switches and ports per tier, cables and optics, bandwidth in a zone, out of a zone and across the
    fabric's bisection, oversubscription, how each spreads traffic, what one switch failing takes away,
    and the cost from a price table you give."""
    _, ctx = load_checked(fabric, as_json, "nothing compared")
    ib = ctx.infiniband
    if ib is None:
        fail("the fabric has no infiniband: section (docs: Build the InfiniBand alternative)", as_json)
    table: PriceTable | None = None
    if prices is not None:
        try:
            table = load_prices(prices)
        except NetgenInputError as exc:
            sys.exit(input_failure(exc, as_json))
    result = compare(ctx.fabric, ctx.catalog, ctx.topology, ib, table)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, **result.as_dict()})
        sys.exit(EXIT_OK)
    grid = Table(title=f"{escape(result.fabric)}: {result.gpus:,} GPUs on {result.hosts:,} hosts")
    for column in ("", "RoCE", "InfiniBand"):
        grid.add_column(column, overflow="fold")
    for what, roce, infiniband in comparison_lines(result):
        grid.add_row(escape(what), escape(roce), escape(infiniband))
    out.print(grid)
    sys.exit(EXIT_OK)
