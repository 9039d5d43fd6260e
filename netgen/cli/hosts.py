"""`netgen hosts`: the GPU hosts' NIC QoS and NCCL settings, from the fabric's own intent."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from netgen.cli.common import (
    EXIT_OK,
    cli,
    emit_json,
    escape,
    fabric_argument,
    json_option,
    load_checked,
    out,
    output_dir_failure,
)
from netgen.hosts.files import render_hosts
from netgen.hosts.plan import plan_hosts
from netgen.output.inspection import OutputDirError
from netgen.output.staging import write_atomically


@cli.command()
@fabric_argument
@click.option("-o", "--output", type=click.Path(readable=False, path_type=Path), metavar="DIR",
              help="Write DIR/<class>/{nccl.env, nccl.conf, nic-qos.sh, host.json} and DIR/inventory/hosts.json"
                   " (replaced whole, atomically). Without it, print the settings and write nothing.")
@json_option
def hosts(fabric: str, output: Path | None, as_json: bool) -> None:
    """The GPU hosts' side of FABRIC, consistent with the switches by construction: per host class
    (identical NIC and NCCL settings) the NCCL environment (NCCL_IB_HCA in rail order, NCCL_IB_TC on
    the lossless class, NCCL_IB_FIFO_TC on the strict CTS class, QPs per connection from the hashing
    intent) and the NIC QoS script for its NIC family (trust DSCP, PFC priority, DSCP to priority,
    strict CTS, RoCE ToS, DCQCN on or off with the switches' ECN, MTU); per host its rails. Design
    errors (NG7xx: the hosts against the switches, and every other check) stop it with exit 1."""
    _, ctx = load_checked(fabric, as_json, "no host settings written")
    plan = plan_hosts(ctx.fabric, ctx.topology)
    rendered = render_hosts(ctx.fabric, plan)
    files = bytes_ = 0
    if output is not None:
        try:
            files, bytes_ = write_atomically(rendered, output)
        except OutputDirError as exc:
            output_dir_failure(str(exc), exc.path, as_json)
    classes = {name: {"nic": c.nic, "hosts": c.hosts, "zones": list(c.zones), "rdma_devices": list(c.hcas),
                      "nccl": dict(c.nccl)} for name, c in sorted(plan.classes.items())}
    if as_json:
        emit_json({"ok": True, "exit_code": EXIT_OK, "output": str(output) if output else None,
                   "written": output is not None, "files": files, "bytes": bytes_,
                   "hosts": len(plan.hosts), "classes": classes})
        sys.exit(EXIT_OK)
    for name, host_class in sorted(plan.classes.items()):
        zones = ", ".join(str(z) for z in host_class.zones)
        out.print(f"[bold]{escape(name)}[/]: {host_class.hosts} host(s) in zone(s) {zones}")
        for key, value in host_class.nccl:
            out.print(f"  {key}={escape(value)}")
    where = f"written into {escape(str(output))} ({files} files)" if output else "nothing written (give -o DIR)"
    out.print(f"[bold green]hosts[/] {len(plan.hosts)} host(s) in {len(classes)} class(es); {where}")
    sys.exit(EXIT_OK)
