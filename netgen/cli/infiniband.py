"""`netgen infiniband`: the InfiniBand alternative of a fabric, from the same intent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_OK,
    cli,
    emit_json,
    err,
    escape,
    fabric_argument,
    fail,
    json_option,
    load_checked,
    out,
    output_dir_failure,
)
from netgen.infiniband.discovered import DiscoveredError, read_discovered
from netgen.infiniband.files import OPENSM_DIR, IbInputError, IbMismatch, build, summary
from netgen.output.inspection import OutputDirError
from netgen.output.staging import write_atomically


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(readable=False, path_type=Path), metavar="DIR",
              help="Write DIR/opensm/, DIR/hosts/nccl-ib.env, DIR/cabling/cables.csv and DIR/ibsim/net (replaced"
                   " whole, atomically). Without it, print the sizing and write nothing.")
@click.option("--opensm-dir", default=OPENSM_DIR, show_default=True, metavar="PATH",
              help="Where the OpenSM files will be installed: opensm.conf names its GUID and partition files there.")
@click.option("--discovered", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="The installed fabric as `ibnetdiscover` prints it: each planned node is found by its place, every"
                   " cable checked, and the files carry the hardware's GUIDs (exit 1, nothing written, if it is not"
                   " cabled as planned).")
@json_option
def infiniband(fabric: str, output: Path | None, opensm_dir: str, discovered: Path | None, as_json: bool) -> None:
    """The InfiniBand alternative of FABRIC (its `infiniband:` section): the same hosts on a rail-optimised
    fat tree (a leaf per rail and group of hosts, spine groups per zone, a core at the RoCE fabric's
    cross-zone ratio) and what an operator deploys for it: OpenSM's configuration for fat-tree routing
    (root and compute-node GUID files, partitions, SM priority), a node-name map, NCCL's settings for
    InfiniBand, the cabling plan, and the fabric as an ibsim net file. Design errors (NG8xx and every
    other check) stop it with exit 1."""
    _, ctx = load_checked(fabric, as_json, "no InfiniBand files written")
    try:
        installed = read_discovered(discovered) if discovered is not None else None
        files = build(ctx.fabric, ctx.infiniband, opensm_dir, installed)
    except (IbInputError, DiscoveredError) as exc:
        fail(str(exc), as_json)
    except IbMismatch as exc:
        _mismatch(exc, as_json)
    written = bytes_ = 0
    if output is not None:
        try:
            written, bytes_ = write_atomically(files.files, output)
        except OutputDirError as exc:
            output_dir_failure(str(exc), exc.path, as_json)
    ib = files.ib
    facts = summary(ib)
    checked = files.matched.cables_checked if files.matched is not None else None
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "output": str(output) if output else None,
                   "written": output is not None, "files": written, "bytes": bytes_, "infiniband": facts,
                   "guids": "installed" if checked is not None else "planned", "cables_checked": checked})
        sys.exit(EXIT_OK)
    tiers = facts["switches"]
    out.print(f"[bold]{escape(ib.fabric)}[/] InfiniBand: {tiers['leaf']} leaves, {tiers['spine']} spines,"
              f" {tiers['core']} cores ({escape(ib.switch_model)}, {ib.link_speed_gbps}G), {facts['hcas']} HCAs")
    for zone in ib.sizing:
        out.print(f"  zone {zone.zone}: {zone.hosts} hosts x {zone.rails} rails; {zone.hosts_per_leaf} hosts per leaf,"
                  f" {zone.leaves_per_rail} leaves per rail; {zone.groups} spine group(s) of {zone.rails_per_group}"
                  f" rails x {zone.spines_per_group} spines ({zone.spine_down} down, {zone.spine_up} up each)")
    if checked is not None:
        out.print(f"  installed fabric: every planned node found, {checked} cables as planned; files carry its GUIDs")
    where = f"written into {escape(str(output))} ({written} files)" if output else "nothing written (give -o DIR)"
    out.print(f"[bold green]infiniband[/] {where}")
    sys.exit(EXIT_OK)


def _mismatch(exc: IbMismatch, as_json: bool) -> NoReturn:
    problems = exc.matched.problems
    message = f"{exc}; nothing written"
    if as_json:
        emit_json({"ok": False, "exit_code": EXIT_DESIGN, "error": message, "problems": problems})
        sys.exit(EXIT_DESIGN)
    for problem in problems:
        err.print(f"[bold red]differs[/]: {escape(problem)}")
    fail(message, as_json, EXIT_DESIGN)
