"""The `netgen` command line.

Exit codes (stable, for scripts):
  0  success (warnings allowed)
  1  design errors, or a lab that failed verification
  2  usage or input errors: bad arguments, unreadable or invalid fabric/catalog files, a lab that
     cannot be built as asked (missing prerequisite, unknown lab, FRR rejected a config)
  3  internal error: a netgen bug (run with --debug for the traceback and report it)

One module per command family; each registers its commands on the shared group when a command of
it runs (COMMANDS), so `netgen --help` imports none of them. A command parses its options, calls one
function (netgen.api, or the stage that owns the step) and prints what comes back: what to do is
decided below the command line.
"""

from __future__ import annotations

import gc
import os
import sys

from netgen.cli import common
from netgen.cli.common import cli

# A fabric is built as a few hundred thousand small, acyclic objects (ports, links, addresses).
# CPython's default thresholds (700, 10, 10) then run a full collection over that growing heap again
# and again: a large share of `netgen validate meta-24k` (benchmarks/startup.py, scale.py;
# docs/developer/benchmarks.md). Young
# collections stay frequent enough for the cycles paramiko and Nornir's threads make during a deploy.
GC_THRESHOLDS = (10_000, 100, 100)

# command -> (the module that registers it, the one-line help `netgen --help` shows)
COMMANDS = {
    "ansible-collection": ("netgen.cli.deploy", "Build the netgen.fabric Ansible collection tarball."),
    "ansible-inventory": ("netgen.cli.deploy", "Print the Ansible inventory (JSON) generated from the fabric."),
    "cabling": ("netgen.cli.cabling", "The cabling plan: one row per cable, in the order a technician walks the hall."),
    "check": ("netgen.cli.deploy", "Run the device checks read-only (model, BGP, PFC, ECMP, LLDP cabling)."),
    "compare": ("netgen.cli.compare", "RoCE and its InfiniBand alternative side by side: switches, bandwidth, cost."),
    "deploy": ("netgen.cli.deploy", "Push the rendered configs: pre-checks, diff, commit-confirm, post-checks."),
    "diff": ("netgen.cli.diff", "Diff the rendered configs of FABRIC between two git revisions."),
    "drain": ("netgen.cli.day2", "Drain switches gracefully: capacity guard, Slurm first, read back."),
    "grow": ("netgen.cli.day2", "Rollout plan of a growing fabric: new switches first; never a session removed."),
    "headroom": ("netgen.cli.fabric", "PFC headroom per port: netgen's figures and the vendor's."),
    "hosts": ("netgen.cli.hosts", "The GPU hosts' NIC QoS and NCCL settings, consistent with the switches."),
    "infiniband": ("netgen.cli.infiniband", "The InfiniBand alternative: fat tree, OpenSM files, NCCL, cabling."),
    "lock": ("netgen.cli.lock", "The change lock: who holds which zone; break a lease whose holder is gone."),
    "lab": ("netgen.cli.lab", "Run a slice of the fabric in real FRR routers in network namespaces."),
    "place": ("netgen.cli.scheduler", "Place a job of N hosts with the fewest ATSW crossings; print its rank order."),
    "recover": ("netgen.cli.deploy", "Finish what an interrupted `netgen deploy` left on the devices."),
    "replace": ("netgen.cli.day2", "Replace a switch (RMA): day-0 files (it boots drained), then its join."),
    "report": ("netgen.cli.report", "One self-contained HTML page: zones, links, QoS chain, what-if, findings."),
    "render": ("netgen.cli.fabric", "Render device configs (SONiC config_db.json + frr.conf, EOS)."),
    "rollout": ("netgen.cli.deploy", "Run the rollout playbook with ansible-runner, batch by batch."),
    "scheduler": ("netgen.cli.scheduler", "The fabric's topology for Slurm, Kueue, Volcano or topograph."),
    "schema": ("netgen.cli.fabric", "Print the JSON Schema of fabric files (or catalog files)."),
    "sot": ("netgen.cli.sot", "Keep a source of truth (Nautobot) in step with the fabric."),
    "show": ("netgen.cli.fabric", "Summarise FABRIC: devices, links, GPUs, oversubscription, buffers."),
    "undrain": ("netgen.cli.day2", "Put drained switches back in service, read back; resume their hosts."),
    "validate": ("netgen.cli.fabric", "Load, expand and check FABRIC; print the findings."),
    "whatif": ("netgen.cli.scheduler", "What-if studies: ECMP balance by QPs per connection, with failures."),
}
cli.lazy.update(COMMANDS)

__all__ = ["COMMANDS", "cli", "main"]


def main() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        cli(prog_name="netgen")
    except SystemExit as exc:
        if not common.NOTHING_TO_TEAR_DOWN or not (exc.code is None or isinstance(exc.code, int)):
            raise
        _end_now(exc.code or 0)


def _end_now(code: int) -> None:
    """End the process as it would end, less the interpreter's teardown: a command that set
    common.NOTHING_TO_TEAR_DOWN has written and closed its files and joined its workers, and what
    remains is a fabric of a million objects that teardown frees one by one just
    before the OS drops the process whole. atexit's handlers still run; output is flushed."""
    import atexit  # noqa: PLC0415

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: as the interpreter's exit, nothing more to say
            code = code or 1
    os._exit(code)
