"""`netgen scheduler`, `netgen place` and `netgen whatif ecmp`: what the scheduler must know of the
fabric, where a job should go, and how evenly ECMP spreads it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from netgen import api
from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INPUT,
    EXIT_OK,
    STDIN,
    cli,
    emit_json,
    err,
    escape,
    fabric_argument,
    fail,
    json_option,
    load_checked,
    out,
    output_file_option,
    progress,
    read_text_input,
    shared_drains,
    write_output,
)
from netgen.scheduler.export import FORMATS, ExportTarget, export, export_target
from netgen.scheduler.hostlist import expand as expand_hostlist
from netgen.scheduler.model import SchedulerTopology, ib_scheduler_topology, scheduler_topology
from netgen.scheduler.versions import KUEUE, SLURM, TOPOGRAPH, VOLCANO, Scheduler
from netgen.whatif.ecmp import MAX_QPS, SEED, TARGET, TRIALS
from netgen.whatif.study import COMPARED_QPS, RULE, StageStudy

if TYPE_CHECKING:  # the placement loads with `netgen place`
    from netgen.context import DesignContext
    from netgen.scheduler.placement import OutOfService, Placement


def _version_option(scheduler: Scheduler, formats: str, changes: str) -> Callable[[Callable[..., Any]], Any]:
    oldest = scheduler.show(scheduler.oldest)
    return click.option(scheduler.option, metavar="MAJOR.MINOR",
                        help=f"{scheduler.name} release to write {formats} for: {oldest} (the default, the oldest"
                             f" supported) or later{changes}; output checked against releases up to"
                             f" {scheduler.show(scheduler.newest_checked)}.")


@cli.command()
@fabric_argument
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), required=True,
              help="slurm: topology.conf for topology/tree (any Slurm release); slurm-block: for topology/block"
                   " (Slurm 24.05+); kueue: Topology, ResourceFlavor and node labels (Kueue 0.14+); volcano:"
                   " HyperNodes (Volcano 1.12+); topograph: NVIDIA topograph's model (topograph 1.0+).")
@output_file_option("The scheduler's topology file (a symbolic link is refused).")
@_version_option(SLURM, "slurm-block", "; before 25.05 zones are not padded with empty blocks (refused there), so"
                 " zone-level blocks are the largest power of two of racks every zone boundary falls on; --format"
                 " slurm takes any release")
@_version_option(KUEUE, "kueue", "; 0.14 gets kueue.x-k8s.io/v1beta1, 0.15 and later v1beta2")
@_version_option(VOLCANO, "volcano", "; tierName from 1.14 (1.12 and 1.13 refuse it)")
@_version_option(TOPOGRAPH, "topograph", "")
@click.option("--network", type=click.Choice(["roce", "infiniband"]), default="roce", show_default=True,
              help="infiniband: the fabric's InfiniBand alternative (`infiniband:`): hosts under the leaves they share"
                   " on every rail, zones under the core.")
@json_option
def scheduler(fabric: str, fmt: str, output: Path | None, slurm_version: str | None, kueue_version: str | None,
              volcano_version: str | None, topograph_version: str | None, network: str, as_json: bool) -> None:
    """FABRIC's topology for a scheduler: hosts under their rack switch (RTSW), racks under their zone
    (its non-blocking CTSW plane as one switch), zones under the ATSW layer.

    Written for the oldest supported release of the scheduler unless its --X-version says otherwise,
    and read by that release and every later one: Slurm 24.05 (topology/block; the tree format suits
    any release), Kueue 0.14, Volcano 1.12, topograph 1.0."""
    given = {SLURM: slurm_version, KUEUE: kueue_version, VOLCANO: volcano_version, TOPOGRAPH: topograph_version}
    try:
        target = export_target(fmt, given)
    except ValueError as exc:
        fail(str(exc), as_json)
    _, ctx = load_checked(fabric, as_json, "not exported")
    if network == "infiniband":
        if ctx.infiniband is None:
            fail("--network infiniband: the fabric has no infiniband: section", as_json)
        topo = ib_scheduler_topology(ctx.fabric, ctx.infiniband)
    else:
        topo = scheduler_topology(ctx.fabric, ctx.topology)
    try:
        text = export(topo, target)
    except ValueError as exc:  # a name Kubernetes does not take as a label value
        fail(str(exc), as_json)
    if output is not None:
        write_output(output, text, as_json)
    summary = _export_summary(target, topo, output)
    if as_json:
        emit_json(summary if output else {**summary, "text": text})
    elif output is None:
        click.echo(text, nl=False)
    else:
        out.print(f"[bold green]exported[/] {summary['hosts']} host(s), {summary['racks']} rack(s),"
                  f" {summary['zones']} zone(s) as {fmt} for {target.scheduler.name} {summary['version']} into"
                  f" {escape(str(output))}")
    sys.exit(EXIT_OK)


def _export_summary(target: ExportTarget, topo: SchedulerTopology, output: Path | None) -> dict[str, Any]:
    return {"ok": True, "exit_code": EXIT_OK, "format": target.fmt, "scheduler": target.scheduler.name,
            "version": target.version, "output": str(output) if output else None,
            "zones": len(topo.zones), "racks": sum(len(z.racks) for z in topo.zones), "hosts": len(topo.hosts())}


def _read_free(path: str, known: set[str], as_json: bool) -> set[str]:
    """Free hosts: names or Slurm hostlist expressions, whitespace or comma separated, `#` comments;
    `-`: from standard input (e.g. `sinfo -h -t idle -o %N | netgen place ... --free -`)."""
    text, path = read_text_input(path, "--free", as_json)
    free: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        for item in line.split("#", 1)[0].split():
            word = item.strip(",")  # "a, b": the list's separator, not part of a name
            if word:
                free.update(_free_hosts(word, known, f"{path}:{number}", as_json))
    return free


def _free_hosts(word: str, known: set[str], where: str, as_json: bool) -> list[str]:
    """The hosts one word of --free names (a name or a hostlist expression), each a host of the fabric."""
    try:
        names = expand_hostlist(word)
    except ValueError:
        fail(f"--free {where}: '{word[:80]}' is not a host name or hostlist expression", as_json)
    unknown = [n for n in names if n not in known]
    if unknown:
        fail(f"--free {where}: {unknown[0][:80]} is not a host of this fabric"
             " (names as `netgen hosts` lists them, e.g. z01-r001-h01)", as_json)
    return names


@cli.command()
@fabric_argument
@click.option("--hosts", "count", type=click.IntRange(min=1), required=True, help="Hosts the job needs.")
@click.option("--free", "free_file", type=click.Path(dir_okay=False, allow_dash=True, path_type=str), metavar="FILE",
              help="Hosts free to use (names or hostlist expressions; `-`: standard input); default: every host.")
@click.option("--message-bytes", type=click.IntRange(min=1), default=1 << 30, show_default=True,
              help="All-reduce size S for the ATSW byte figures.")
@click.option("--ignore-drains", is_flag=True,
              help="Place as if no switch were drained (default: the switches the fabric's shared drain state"
                   " says netgen left drained lower their zone's ATSW capacity, and a drained RTSW's hosts are"
                   " not free).")
@json_option
def place(fabric: str, count: int, free_file: str | None, message_bytes: int, ignore_drains: bool,
          as_json: bool) -> None:
    """Place a job of N hosts with the fewest ATSW crossings: the fewest zones (one zone if one holds
    it), whole racks first, ranks zone by zone and rack by rack. Prints the rank order, the bytes a
    ring all-reduce sends across the ATSW layer and the ATSW load per zone, next to a topology-blind
    placement (first free hosts by name, ranks in random order)."""
    from netgen.scheduler.placement import PlacementError, min_zones  # noqa: PLC0415
    from netgen.scheduler.placement import place as place_job  # noqa: PLC0415

    if fabric == STDIN and free_file == STDIN:
        fail("FABRIC and --free cannot both be `-` (one standard input): give one of them as a file", as_json)
    loaded, ctx = load_checked(fabric, as_json, "not placed")
    topo = scheduler_topology(ctx.fabric, ctx.topology)
    free = _read_free(free_file, set(topo.hosts()), as_json) if free_file else None
    recorded = {} if ignore_drains else shared_drains(loaded, ctx, as_json)
    drained, out_of_service, under = _drained(ctx, topo, recorded)
    if under:
        free = (set(topo.hosts()) if free is None else free) - under
    try:
        result = place_job(ctx.fabric, topo, count, free, message_bytes, out_of_service)
    except PlacementError as exc:
        if as_json:
            emit_json({"ok": False, "exit_code": EXIT_DESIGN, "error": str(exc)})
        else:
            err.print(f"[bold red]not placed[/]: {escape(str(exc))}")
        sys.exit(EXIT_DESIGN)
    fewest = min_zones(topo, count, free)
    if as_json:
        emit_json({**_placement_doc(result, count, fewest, message_bytes),
                   "drained": {"switches": drained, "hosts_not_free": sorted(under)}})
        sys.exit(EXIT_OK)
    if drained:
        out.print(f"drained (the fabric's shared drain state): {escape(', '.join(drained))}; their zones' ATSW"
                  f" capacity is lowered, {len(under)} host(s) under drained RTSWs are not free"
                  " (--ignore-drains: as if none were)")
    out.print(_placement_table(result, count, message_bytes))
    out.print(f"zones used {len(result.zones)} (fewest possible {fewest}); whole racks {result.whole_racks},"
              f" partial {result.partial_racks}")
    out.print("rank order:")
    for rank, host in enumerate(result.hosts):
        out.print(f"{rank} {host}")
    sys.exit(EXIT_OK)


def _drained(ctx: DesignContext, topo: SchedulerTopology,
             recorded: dict[str, float]) -> tuple[list[str], OutOfService | None, set[str]]:
    """The switches the shared drain state says netgen left drained (`recorded`), the spines among
    them as OutOfService, and the hosts under the drained RTSWs."""
    from netgen.scheduler.placement import out_of_service  # noqa: PLC0415

    if not recorded:
        return [], None, set()
    drained = [name for name in ctx.topology.devices if name in recorded]
    racks = {rack.switch: rack.hosts for zone in topo.zones for rack in zone.racks}
    under = {host for name in drained for host in racks.get(name, ())}
    return drained, out_of_service(ctx.topology, drained), under


def _placement_doc(result: Placement, count: int, fewest: int, message_bytes: int) -> dict[str, Any]:
    return {"ok": True, "exit_code": EXIT_OK, "hosts": count, "zones": {str(z): n for z, n in result.zones.items()},
            "fewest_zones_possible": fewest, "whole_racks": result.whole_racks, "partial_racks": result.partial_racks,
            "message_bytes": message_bytes, "atsw": result.traffic.as_dict(), "rank_order": result.hosts,
            "naive": {"zones": {str(z): n for z, n in result.naive_zones.items()},
                      "atsw": result.naive_traffic.as_dict() if result.naive_traffic else None}}


def _placement_table(result: Placement, count: int, message_bytes: int) -> Table:
    table = Table(title=f"{count} hosts: ATSW layer per all-reduce of {message_bytes / (1 << 30):g} GiB")
    for column in ("placement", "zones (hosts)", "crossings", "GiB over ATSW", "max ATSW load"):
        table.add_column(column)
    for label, zones, traffic in (("netgen", result.zones, result.traffic),
                                  ("first free by name, random ranks", result.naive_zones, result.naive_traffic)):
        if traffic is None:
            continue
        figures = traffic.as_dict()
        table.add_row(label, ", ".join(f"z{z}: {n}" for z, n in zones.items()), f"{traffic.crossings:.1f}",
                      f"{figures['gib_per_allreduce']:.1f}", f"{figures['max_atsw_load']:.3f}")
    return table


@cli.group()
def whatif() -> None:
    """What-if studies on the fabric."""


def _qps_list(value: str) -> list[int]:
    try:
        qps = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise click.BadParameter("a comma-separated list of integers, e.g. 1,2,4,8,16") from None
    if not qps or qps[0] < 1 or qps[-1] > MAX_QPS:
        raise click.BadParameter("QP counts between 1 and 128 (NCCL_IB_QPS_PER_CONNECTION)")
    return qps


@whatif.command()
@fabric_argument
@click.option("--qps", default=",".join(map(str, COMPARED_QPS)), show_default=True,
              help="QPs per connection to compare.")
@click.option("--fail", "failed", metavar="DEVICE", help="The same with this switch failed (its links gone).")
@click.option("--seed", type=int, default=SEED, show_default=True, help="Random seed: equal seeds, equal figures.")
@click.option("--trials", type=click.IntRange(min=100, max=1_000_000), default=TRIALS, show_default=True,
              help="Monte Carlo draws for E[max/mean] and p99 (P(>=1.5x) and the recommendation are exact).")
@json_option
def ecmp(fabric: str, qps: str, failed: str | None, seed: int, trials: int, as_json: bool) -> None:
    """ECMP balance per tier by QPs per connection (balls into bins): P(a link carries 1.5x the mean),
    exact; expected and p99 max/mean link load and P(a link is asked for more than its line rate),
    from a seeded Monte Carlo; and the smallest QP count whose exact P(1.5x) is under 5% (every count
    1-128 computed: the same count `netgen report` and NG706 give); with --fail, also with DEVICE down."""
    try:
        counts = _qps_list(qps)
    except click.BadParameter as exc:
        fail(f"--qps: {exc.message}", as_json)
    _, ctx = load_checked(fabric, as_json, "not simulated")
    try:
        found = api.ecmp_study(ctx, failed=failed, qps=counts, trials=trials, seed=seed, progress=progress)
    except ValueError as exc:
        fail(f"--fail: {exc}", as_json, EXIT_INPUT)
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, **found.as_dict()})
        sys.exit(EXIT_OK)
    for entry in found.stages:
        out.print(_stage_table(entry))
        best = entry.recommended
        out.print(f"  smallest QP count with P(>=1.5x) < {TARGET:.0%}: "
                  + (f"{best.qps} (P = {best.p_hot_text})" if best else f"none up to {MAX_QPS}")
                  + f" (hosts configured: {found.configured_qps})")
    out.print(escape(f"E[max/mean] (+- its standard error) and p99: {trials:,} draws, seed {seed}; recommended:"
                     f" {RULE}."))
    sys.exit(EXIT_OK)


def _stage_table(entry: StageStudy) -> Table:
    table = Table(title=f"{entry.scenario}: {entry.stage.name} ({entry.stage.flows} flows over"
                        f" {entry.stage.links} links)")
    for column in ("QPs", escape("E[max/mean]"), "p99", "P(>=1.5x), exact"):
        table.add_column(column, justify="right")
    for row in entry.rows:
        sampled = row.sampled
        assert sampled is not None  # study(sampled=True)
        table.add_row(str(row.qps), f"{sampled.mean_ratio:.3f} +- {sampled.stderr:.3f}",
                      f"{sampled.p99_ratio:.2f}", row.p_hot_text)
    return table
