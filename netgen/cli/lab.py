"""`netgen lab`: run a slice of the fabric in real FRR routers, verify it, drill it, tear it down."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.table import Table

from netgen.cli.common import (
    EXIT_DESIGN,
    EXIT_INTERNAL,
    EXIT_OK,
    ProgressBars,
    cli,
    emit_json,
    err,
    escape,
    fabric_argument,
    fail,
    json_option,
    load_checked,
    out,
)
from netgen.context import DesignContext
from netgen.infiniband.files import render_infiniband
from netgen.intent.loader import load_fabric, resolve_fabric_path
from netgen.intent.secrets import SecretError, fill_files
from netgen.lab import containerlab, netns
from netgen.lab.adapters import lab_inputs
from netgen.lab.backend import BuildReport, LabBackend, LabError, check_lab_name
from netgen.lab.backends import BACKENDS
from netgen.lab.grow import grow_lab
from netgen.lab.ibsim import IbSimError, failure_targets, missing_tools, prove
from netgen.lab.plan import LabPlan, LabSliceError, SliceRequest
from netgen.lab.site import write_site
from netgen.lab.traffic import DEFAULT_FLOWS, DEFAULT_RATE, TrafficSpec
from netgen.lab.verify import (
    DRILL_MODES,
    NOT_EXERCISED,
    LabResult,
    up_state,
    verify,
    wait_for,
)
from netgen.rendered import RenderError

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_LAB = "ng"
_IMAGES = containerlab.ClabImages()
name_option = click.option("--name", default=DEFAULT_LAB, show_default=True,
                           help="Lab name (1-12 lowercase letters/digits); namespaces are <name>-<device>.")



def slice_options(command: F) -> F:
    """--zone / --racks / --ctsw / --configs / --accept-edited-configs: which part of the fabric,
    from which files."""
    for option in reversed([
        click.option("--zone", type=int, help="One zone (its CTSWs and RTSWs, no ATSW layer). Default: every zone."),
        click.option("--racks", type=int, help="Only the first N racks (RTSWs) of each zone."),
        click.option("--ctsw", type=int, help="Only the first N CTSWs of each zone."),
        click.option("--configs", type=click.Path(file_okay=False, exists=True, path_type=Path),
                     help="Use the files of this `netgen render` output directory instead of rendering now."),
        click.option("--accept-edited-configs", "accept_edited", is_flag=True,
                     help="With --configs: use files netgen cannot vouch for (changed since `netgen render` wrote"
                          " them, e.g. a broken config to see the lab fail); the output names each one."),
    ]):
        command = option(command)
    return command


@cli.group()
def lab() -> None:
    """Run a slice of the fabric in real FRR routers in network namespaces (no images needed).

    Each switch is a namespace running FRR with its rendered frr.conf (SONiC) or an FRR stand-in
    from its BGP plan (EOS: its EOS CLI is not what runs). PFC, ECN, buffers and QP hashing are
    ASIC features the lab cannot exercise.
    """


def _attach(name: str) -> LabBackend:
    check_lab_name(name)
    for factory in BACKENDS.values():
        backend = factory(name)
        if backend.exists():
            return backend
    raise LabError(f"no lab named {name!r}; `netgen lab list` shows the labs, `netgen lab up` builds one")


@contextlib.contextmanager
def _stages(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """One progress bar per build stage (the lab's progress callback shape)."""
    with ProgressBars(enabled) as bars:
        yield lambda stage, done, total: bars.update(stage, total=total, done=done)


def _session_tick(update: Callable[[str, int, int], None], plan: LabPlan) -> Callable[[list[LabResult]], None]:
    def tick(results: list[LabResult]) -> None:
        sessions = [r for r in results if r.check == "bgp-session"]
        ecmp = [r for r in results if r.check == "ecmp"]
        update("BGP sessions Established", sum(r.ok for r in sessions), len(plan.sessions))
        update("RTSWs with full ECMP", sum(r.ok for r in ecmp), len(ecmp))
    return tick


@lab.command(fabric_stdin=False)  # --ssh copies the files beside the fabric file into the lab's site folder
@fabric_argument
@name_option
@slice_options
@click.option("--backend", "backend_kind", type=click.Choice(sorted(BACKENDS)), default="netns",
              show_default=True, help="Where the nodes run.")
@click.option("--timeout", type=float, default=180.0, show_default=True,
              help="Seconds to wait for every session and every RTSW's full ECMP.")
@click.option("--ssh", is_flag=True,
              help="Also give the routers whose NOS has a CLI stand-in (SONiC: config/show) SSH management (sshd"
                   " + the stand-in) and write a deploy.yaml for `netgen deploy` into the lab directory (netns"
                   " backend).")
@json_option
def up(fabric: str, name: str, zone: int | None, racks: int | None, ctsw: int | None, configs: Path | None,
       accept_edited: bool, backend_kind: str, timeout: float, ssh: bool, as_json: bool) -> None:
    """Build a lab from FABRIC (or a slice of it) and wait until it converges."""
    plan, files, edited = _fabric_slice(fabric, name, zone, racks, ctsw, configs, accept_edited, as_json)
    backend = BACKENDS[backend_kind](name)
    report, results, seconds = _build(backend, plan, files, timeout, name, as_json)
    access = _start_ssh(backend, plan, files, Path(fabric), as_json) if ssh else None
    payload = _up_payload(name, backend, plan, report, results, seconds, access, edited)
    if as_json:
        emit_json(payload)
    else:
        _print_up(payload, plan, report, seconds, [r for r in results if not r.ok], Path(fabric))
    sys.exit(payload["exit_code"])


@lab.command(fabric_stdin=False)
@fabric_argument
@name_option
@click.option("--racks", type=int, help="Widen the slice to the first N racks of each zone (default: as built).")
@click.option("--ctsw", type=int, help="Widen the slice to the first N CTSWs of each zone (default: as built).")
@click.option("--configs", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Use the files of this `netgen render` output directory instead of rendering now.")
@click.option("--timeout", type=float, default=180.0, show_default=True,
              help="Seconds to wait for every session and every RTSW's full ECMP after the growth.")
@json_option
def grow(fabric: str, name: str, racks: int | None, ctsw: int | None, configs: Path | None, timeout: float,
         as_json: bool) -> None:
    """Grow a running lab to FABRIC (racks, CTSWs added) keeping its sessions up."""
    _, ctx = load_checked(fabric, as_json, "the fabric must not be rendered")
    try:
        backend = _attach(name)
        old = backend.plan()
    except LabError as exc:
        fail(str(exc), as_json)
    if not isinstance(backend, netns.NetnsBackend):
        fail(f"lab {name!r} runs on the {backend.kind} backend; `lab grow` grows netns labs", as_json)
    if old.request is None:
        fail(f"lab {name!r} was built by a netgen that did not record its slice; build it again", as_json)
    request = SliceRequest(old.request.zone, old.request.racks if racks is None else racks,
                           old.request.ctsw if ctsw is None else ctsw)
    plan, _, _ = _fabric_slice(fabric, name, request.zone, request.racks, request.ctsw, configs, False, as_json,
                               ctx)
    with _stages(not as_json) as update:
        try:
            report = grow_lab(backend, plan, timeout, update, _session_tick(update, plan))
        except LabError as exc:
            fail(str(exc), as_json)
    payload = {**report.as_dict(), "exit_code": EXIT_OK if report.ok else EXIT_DESIGN}
    if as_json:
        emit_json(payload)
    else:
        _print_grow(payload, report.failed)
    sys.exit(payload["exit_code"])


def _print_grow(payload: dict[str, Any], failed: list[LabResult]) -> None:
    name = escape(payload["lab"])
    if payload["refused"]:
        out.print(f"[bold red]refused[/]: growing lab {name} to {escape(payload['fabric'])} would take away or"
                  " change what runs; nothing was changed:")
        for refusal in payload["refusals"][:20]:
            out.print(f"  {escape(refusal)}")
        if len(payload["refusals"]) > 20:
            out.print(f"  ... and {len(payload['refusals']) - 20} more (use --json for all)")
        return
    out.print(f"lab {name}: {escape(payload['slice_before'])} -> {escape(payload['slice'])}")
    for step in payload["steps"]:
        out.print(f"  {escape(step)}")
    kept = payload["existing_sessions"]
    verdict = "[bold green]converged[/]" if payload["converged"] else "[bold red]NOT converged[/]"
    out.print(f"{verdict} after {payload['converge_seconds']} s: {payload['sessions_established']}/"
              f"{payload['sessions_expected']} sessions Established; existing sessions kept up (FRR's connection"
              f" counters unchanged): {kept['kept_up']}, reset: {len(kept['reset'])}")
    for line in kept["reset"][:20]:
        out.print(f"[bold red]RESET[/] {escape(line)}")
    _print_failures(failed)


def _build(backend: LabBackend, plan: LabPlan, files: dict[str, dict[str, str]], timeout: float, name: str,
           as_json: bool) -> tuple[BuildReport, list[LabResult], float]:
    """The lab built, then every check of convergence until all pass or `timeout` runs out."""
    with _stages(not as_json) as update:
        try:
            report = backend.build(plan, update, files)
        except LabError as exc:
            fail(f"{exc} (nothing of lab {name!r} was left behind)", as_json)
        # converged: every session up, the ECMP widths planned, and LLDP heard on both ends of every cable
        results, seconds = wait_for(up_state(backend, plan), timeout,
                                    _session_tick(update, plan))
    return report, results, seconds


def _up_payload(name: str, backend: LabBackend, plan: LabPlan, report: BuildReport, results: list[LabResult],
                seconds: float, access: dict[str, Any] | None, edited: dict[str, str]) -> dict[str, Any]:
    failed = [r for r in results if not r.ok]
    return {
        "ok": not failed, "exit_code": EXIT_DESIGN if failed else EXIT_OK, "lab": name, "fabric": plan.fabric,
        "slice": plan.slice, "build": report.as_dict(), "converged": not failed,
        "converge_seconds": round(seconds, 2), "total_seconds": round(report.seconds + seconds, 2),
        "sessions_expected": len(plan.sessions),
        "sessions_established": sum(1 for r in results if r.check == "bgp-session" and r.ok),
        "sessions_outside_slice": plan.sessions_outside,
        "memory_pss_mb_per_router": _memory(backend),
        "failures": [r.as_dict() for r in failed[:50]],
        "ssh": access,
        "frr_sources": sorted({f"{n.nos}: {n.frr_source}" for n in plan.routers()}),
        "not_exercised": NOT_EXERCISED,
        "accepted_edited_configs": edited,
    }


def _memory(backend: LabBackend) -> dict[str, float] | None:
    """The PSS of a router's FRR daemons in MB, mean and max over the routers (netns only)."""
    per_router = sorted(backend.memory().values()) if isinstance(backend, netns.NetnsBackend) else []
    if not per_router:
        return None
    return {"mean": round(sum(per_router) / len(per_router) / 2**20, 1), "max": round(per_router[-1] / 2**20, 1)}


def _print_up(payload: dict[str, Any], plan: LabPlan, report: BuildReport, seconds: float, failed: list[LabResult],
              fabric: Path) -> None:
    name = payload["lab"]
    verdict = "[bold green]converged[/]" if payload["converged"] else "[bold red]NOT converged[/]"
    out.print(f"lab {escape(name)} ({escape(plan.slice)}): {report.routers} routers, {len(plan.hosts())} hosts,"
              f" {report.links} links built in {report.seconds:.1f} s; {verdict} after {seconds:.1f} s:"
              f" {payload['sessions_established']}/{len(plan.sessions)} sessions Established")
    memory = payload["memory_pss_mb_per_router"]
    if memory:
        out.print(f"memory (PSS of FRR daemons) per router: mean {memory['mean']} MB, max {memory['max']} MB")
    for source in payload["frr_sources"]:
        out.print(f"  FRR config of {escape(source)}")
    for setting in payload["build"]["lab_only"]:
        out.print(f"  lab only: {escape(setting)}")
    _print_failures(failed)
    access = payload["ssh"]
    if access:
        out.print(f"SSH on {len(access['endpoints'])} router(s) with a CLI stand-in; deploy with: NETGEN_USERNAME="
                  f"{access['username']} NETGEN_SSH_KEY={access['key_file']} netgen deploy"
                  f" {escape(access['fabric_dir'])}/{resolve_fabric_path(fabric).name}"
                  f" --limit {','.join(access['endpoints'])}")
    out.print(f"next: `netgen lab verify --name {name}` (add --drill), then `netgen lab down --name {name}`")


def _start_ssh(backend: LabBackend, plan: LabPlan, files: dict[str, dict[str, str]], fabric: Path,
               as_json: bool) -> dict[str, Any]:
    """SSH management for the lab's routers whose NOS has a CLI stand-in (SONiC's), and a site folder
    (the fabric plus a deploy.yaml pointing at the endpoints) that `netgen deploy` can use as is."""
    from netgen.lab import endpoints  # noqa: PLC0415  (only with --ssh)

    if not isinstance(backend, netns.NetnsBackend):
        fail("--ssh needs the netns backend", as_json)
    shimmed = [n.name for n in plan.routers() if n.nos and endpoints.lab_shim(n.nos) is not None]
    if not shimmed:
        fail("--ssh: the slice has no router whose NOS has a CLI stand-in (SONiC)", as_json)
    loaded = load_fabric(resolve_fabric_path(fabric))
    try:  # the routers start as a deploy leaves them: with their secrets, so a deploy finds nothing to do
        seeded = fill_files(files, loaded.fabric.shared_secrets())
    except SecretError as exc:
        fail(f"--ssh: the routers start configured as a deploy leaves them, secrets included: {exc}", as_json)
    try:
        eps = endpoints.start_management(backend, shimmed, files=seeded)
    except LabError as exc:
        fail(f"--ssh: {exc}", as_json)
    return write_site(backend.dir / "site", loaded, eps, shimmed[0])


def _print_failures(failed: list[LabResult], limit: int = 20) -> None:
    for r in failed[:limit]:
        out.print(f"[bold red]FAIL[/] {r.check} {escape(r.node)}: {escape(r.subject)}: {escape(r.detail)}")
    if len(failed) > limit:
        out.print(f"... and {len(failed) - limit} more (use --json for all)")


@lab.command(name="verify")
@name_option
@click.option("--drill", is_flag=True, help="Also take one CTSW out, check ECMP shrinks and traffic flows, restore.")
@click.option("--drill-device", metavar="CTSW", help="The CTSW to take out (default: the first of the lab).")
@click.option("--drill-mode", type=click.Choice(DRILL_MODES), default="drain", show_default=True,
              help="drain: the graceful drain (an AS-path prepend; sessions stay up); shutdown: shut its BGP"
                   " sessions; cut: take all its links down.")
@click.option("--traffic", is_flag=True,
              help="With --drill: UDP flows between every pair of the lab's hosts, their loss counted per phase.")
@click.option("--traffic-flows", type=click.IntRange(min=1), default=DEFAULT_FLOWS, show_default=True,
              help="Flows in all, spread over every ordered pair of hosts (each its own UDP source port).")
@click.option("--traffic-rate", type=click.FloatRange(min=1, max=1000), default=DEFAULT_RATE, show_default=True,
              help="Datagrams per second on each flow.")
@click.option("--wait", type=float, default=0.0, show_default=True,
              help="Seconds to wait for convergence before judging (0: judge now).")
@json_option
def verify_command(name: str, drill: bool, drill_device: str | None, drill_mode: str, traffic: bool,
                   traffic_flows: int, traffic_rate: float, wait: float, as_json: bool) -> None:
    """Check a running lab: sessions, ECMP width per RTSW, loopback and host pings; optional drill."""
    if traffic and not drill:
        fail("--traffic runs during a drill: add --drill", as_json)
    spec = TrafficSpec(flows=traffic_flows, rate=traffic_rate) if traffic else None
    try:
        backend = _attach(name)
        report = verify(backend, drill=drill, drill_device=drill_device, drill_mode=drill_mode, wait=wait,
                        traffic=spec)
    except LabError as exc:
        fail(str(exc), as_json)
    report["exit_code"] = EXIT_OK if report["ok"] else EXIT_DESIGN
    if as_json:
        emit_json(report)
        sys.exit(report["exit_code"])
    out.print(_verify_table(name, report))
    failures = [LabResult(**r) for r in report["results"] if not r["ok"]]
    _print_failures(failures)
    for r in report["results"]:
        if r["check"] == "drill" and r["ok"]:
            out.print(f"[green]ok[/] {escape(r['subject'])}: {escape(r['detail'])}")
    for setting in report["lab_only"]:
        out.print(f"lab only: {escape(setting)}")
    out.print(f"not exercised: {escape(NOT_EXERCISED)}")
    verdict = "[bold green]OK[/]" if report["ok"] else "[bold red]FAIL[/]"
    out.print(f"{verdict} {report['sessions_established']}/{report['sessions_expected']} sessions Established,"
              f" {report['failed']} of {report['checks']} checks failed")
    sys.exit(report["exit_code"])


def _verify_table(name: str, report: dict[str, Any]) -> Table:
    """Passed and failed checks per kind of check."""
    table = Table(title=f"lab {name}: {report['slice']}")
    for column in ("check", "passed", "failed"):
        table.add_column(column)
    kinds: dict[str, list[int]] = {}
    for r in report["results"]:
        kinds.setdefault(r["check"], [0, 0])[0 if r["ok"] else 1] += 1
    for kind, (passed, failed) in kinds.items():
        table.add_row(kind, str(passed), str(failed))
    return table


@lab.command()
@name_option
@json_option
def down(name: str, as_json: bool) -> None:
    """Remove everything `lab up` created: processes, namespaces (and their links), files."""
    started = time.monotonic()
    try:
        report = _attach(name).destroy()
    except LabError as exc:
        fail(str(exc), as_json)
    payload = {"ok": True, "exit_code": EXIT_OK, **report.as_dict(), "seconds": round(time.monotonic() - started, 2)}
    if as_json:
        emit_json(payload)
    else:
        out.print(f"lab {escape(name)} removed: {len(report.namespaces)} namespaces, {len(report.processes)}"
                  f" processes ({len(report.killed)} needed SIGKILL) in {payload['seconds']} s")
    sys.exit(EXIT_OK)


@lab.command(name="list")
@json_option
def list_command(as_json: bool) -> None:
    """The labs that are up (from their state files)."""
    labs = netns.list_labs() + containerlab.list_clab_labs()
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "labs": labs})
        sys.exit(EXIT_OK)
    if not labs:
        out.print("no labs")
    for entry in labs:
        out.print(f"{escape(str(entry['lab']))}: {entry['status']}, {escape(str(entry['fabric']))}"
                  f" ({escape(str(entry['slice']))}), {entry['nodes']} nodes, backend {entry['backend']}")
    sys.exit(EXIT_OK)


def _fabric_slice(fabric: str, name: str, zone: int | None, racks: int | None, ctsw: int | None,
                  configs: Path | None, accept_edited: bool, as_json: bool,
                  ctx: DesignContext | None = None) -> tuple[LabPlan, dict[str, dict[str, str]], dict[str, str]]:
    """The plan, its files, and the files of --configs used though edited ("device/file" -> why)."""
    try:
        check_lab_name(name)
    except LabError as exc:
        fail(str(exc), as_json)
    if accept_edited and configs is None:
        fail("--accept-edited-configs is about the files of --configs DIR: give --configs DIR too", as_json)
    if ctx is None:
        _, ctx = load_checked(fabric, as_json, "the fabric must not be rendered")
    edited: dict[str, str] = {}
    try:
        plan, files = lab_inputs(name, ctx, SliceRequest(zone, racks, ctsw), configs, accept_edited, edited)
    except LabSliceError as exc:
        fail(str(exc), as_json)
    except RenderError as exc:
        fail(f"render error (a netgen bug): {exc}", as_json, EXIT_INTERNAL)
    if not as_json:
        for path, why in edited.items():
            err.print(f"[yellow]edited[/] {escape(path)} used as it is in {escape(str(configs))}"
                      f" (--accept-edited-configs): {escape(why)}")
    return plan, files, edited


@lab.command()
@fabric_argument
@click.option("-o", "--containerlab", "directory", required=True, type=click.Path(file_okay=False, path_type=Path),
              metavar="DIR", help="Write the containerlab topology, the rendered files and interface-map.json into"
                                  " DIR (new files only).")
@name_option
@slice_options
@click.option("--ceos-image", default=_IMAGES.ceos, show_default=True)
@click.option("--sonic-image", default=_IMAGES.sonic_vs, show_default=True)
@click.option("--linux-image", default=_IMAGES.linux, show_default=True)
@json_option
def export(fabric: str, directory: Path, name: str, zone: int | None, racks: int | None, ctsw: int | None,
           configs: Path | None, accept_edited: bool, ceos_image: str, sonic_image: str, linux_image: str,
           as_json: bool) -> None:
    """Export the lab (or a slice) as a containerlab topology: cEOS runs the rendered EOS CLI,
    sonic-vs the rendered config_db.json and frr.conf, Linux containers stand in for hosts."""
    plan, files, edited = _fabric_slice(fabric, name, zone, racks, ctsw, configs, accept_edited, as_json)
    images = containerlab.ClabImages(ceos=ceos_image, sonic_vs=sonic_image, linux=linux_image)
    try:
        result = containerlab.export_containerlab(plan, files, directory, images)
    except LabError as exc:
        fail(str(exc), as_json)
    payload = {"ok": True, "exit_code": EXIT_OK, "lab": name, "slice": plan.slice, **result.as_dict(),
               "accepted_edited_configs": edited}
    if as_json:
        emit_json(payload)
    else:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(result.kinds.items()))
        out.print(f"exported {result.nodes} nodes ({escape(kinds)}) and {result.links} links to"
                  f" {escape(str(result.topology))}; interface names per kind in {escape(str(result.interface_map))}")
        for warning in result.warnings:
            out.print(f"[yellow]warning[/]: {escape(warning)}")
        out.print(f"deploy where Docker, containerlab and the images exist: `containerlab deploy -t"
                  f" {escape(str(result.topology))}`, or `netgen lab up ... --backend containerlab`")
    sys.exit(EXIT_OK)


@lab.command(name="ib")
@fabric_argument
@click.option("--zones", metavar="N[,N...]", help="Zones to run (default: all); their spines and the whole core come"
                                                  " with them.")
@click.option("--racks", type=click.IntRange(min=1), help="Only each zone's first N racks' hosts (and their leaves).")
@click.option("--fail", "failures", multiple=True, metavar="SWITCH|NODE[PORT]",
              help="After the fabric as planned, take this down (a switch whole, or one cable by an end) and route"
                   " again; repeat for more, each on top of the last.")
@click.option("--timeout", type=click.FloatRange(min=10, max=7200), default=900, show_default=True,
              help="Seconds any one tool (the simulator, OpenSM, a diagnostic) may take.")
@json_option
def ib(fabric: str, zones: str | None, racks: int | None, failures: tuple[str, ...], timeout: float,
       as_json: bool) -> None:
    """The InfiniBand alternative on ibsim, routed by the real OpenSM with the files `netgen infiniband`
    writes and read back with infiniband-diags: the topology is the cabling plan, every HCA reaches every
    other through the switches' own tables, the routing engine is ftree and balances each leaf's uplinks
    within one; after each --fail, OpenSM routes again and every HCA still reaches every other. Needs
    opensm, ibsim-utils and infiniband-diags; no root."""
    missing = missing_tools()
    if missing:
        fail(f"needs {', '.join(missing)}: apt-get install opensm ibsim-utils infiniband-diags", as_json)
    _, ctx = load_checked(fabric, as_json, "nothing run")
    plan = ctx.infiniband
    if plan is None or ctx.fabric.infiniband is None:
        fail("the fabric has no infiniband: section", as_json)
    try:
        chosen = {int(z) for z in zones.split(",")} if zones else {z.id for z in ctx.fabric.zones}
    except ValueError:
        fail(f"--zones {(zones or '')[:80]!r}: zone numbers separated by commas", as_json)
    if not chosen <= {z.id for z in ctx.fabric.zones}:
        fail(f"--zones: the fabric has no zone {min(chosen - {z.id for z in ctx.fabric.zones})}", as_json)
    part = plan.slice(chosen, racks)
    try:
        targets = failure_targets(part, list(failures))
    except ValueError as exc:
        fail(str(exc), as_json)
    with tempfile.TemporaryDirectory(prefix="netgen-ib-") as folder:
        workdir = Path(folder)
        files = render_infiniband(ctx.fabric, part, str(workdir / "opensm"))
        texts = {name: {item.name: item.content for item in items} for name, items in files.files.items()}
        try:
            proof = prove(part, texts, workdir, ctx.fabric.infiniband.subnet_manager.routing_engine, targets, timeout)
        except IbSimError as exc:  # a tool that failed or stalled: named, like a lab prerequisite
            fail(str(exc), as_json)
    code = EXIT_OK if proof.ok else EXIT_DESIGN
    if as_json:
        emit_json({"ok": proof.ok, "exit_code": code, **dataclasses.asdict(proof)})
        sys.exit(code)
    out.print(f"ibsim: {proof.switches} switches, {proof.hcas} HCAs, {proof.cables} cables")
    for sweep in proof.sweeps:
        mark = "[green]ok[/]" if sweep.ok else "[bold red]FAIL[/]"
        spread = f", leaf uplinks within {sweep.max_spread}" if sweep.max_spread is not None else ""
        out.print(f"{mark} {escape(sweep.label)}: routed by {escape(sweep.engine or 'nothing')}, {sweep.pairs}"
                  f" switch-to-HCA routes walked, {len(sweep.unreachable)} unreachable{spread}")
        for line in [*sweep.read_problems, *sweep.missing_cables, *sweep.extra_cables, *sweep.unreachable][:20]:
            out.print(f"    {escape(line)}")
    sys.exit(code)
