"""The InfiniBand alternative on ibsim (by hand; needs opensm, ibsim-utils, infiniband-diags): how long
the simulator takes to come up, OpenSM to route it by fat tree, and the diagnostics to read it back, and
how much memory each holds; medians of --runs runs.

    python benchmarks/infiniband_sim.py                       # small whole, meta-24k zone 1 (3 runs each)
    python benchmarks/infiniband_sim.py --zones 1,2,4 --runs 1
    python benchmarks/infiniband_sim.py --whole --runs 1      # meta-24k whole: route and ibnetdiscover only

Figures: docs/developer/benchmarks.md (InfiniBand).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from netgen.checks import load_and_check
from netgen.infiniband.files import render_infiniband
from netgen.lab.ibsim import IbSim, leaf_balance, missing_tools, planned_cables, sim_limits, walk_tables
from netgen.topology.infiniband import IbFabric

ROOT = Path(__file__).resolve().parent.parent


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(item for item in status.splitlines() if item.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def one_run(fabric_file: Path, ib: IbFabric, full_readback: bool) -> dict[str, float]:
    _, ctx, _ = load_and_check(fabric_file)
    with tempfile.TemporaryDirectory(prefix="ib-bench-") as folder:
        out = Path(folder)
        for name, items in render_infiniband(ctx.fabric, ib, str(out / "opensm")).files.items():
            (out / name).mkdir()
            for item in items:
                (out / name / item.name).write_text(item.content)
        figures: dict[str, float] = {}
        start = time.perf_counter()
        with IbSim(out / "ibsim" / "net", out, timeout_s=3600, **sim_limits(ib)) as sim:
            figures["up_s"] = time.perf_counter() - start
            mark = time.perf_counter()
            run = sim.opensm(out / "opensm" / "opensm.conf", out / "opensm.log")
            if run.engine != "ftree" or run.read_problems:
                raise SystemExit(f"OpenSM routed with {run.engine!r}, problems {run.read_problems[:3]}")
            figures["route_s"] = time.perf_counter() - mark
            mark = time.perf_counter()
            found = sim.discover()
            if found.cables != planned_cables(ib):
                raise SystemExit("the discovered topology is not the plan")
            figures["discover_s"] = time.perf_counter() - mark
            if full_readback:
                mark = time.perf_counter()
                tables = sim.forwarding_tables()
                walk = walk_tables(found, tables)
                spread = max((b.spread for b in leaf_balance(ib, found, tables)), default=0)
                if walk.failures or spread > 1:
                    raise SystemExit(f"read back: {walk.failures[:3]}, spread {spread}")
                figures["tables_and_walk_s"] = time.perf_counter() - mark
            assert sim.proc is not None
            figures["ibsim_rss_mb"] = _rss_mb(sim.proc.pid)
    figures["checker_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


def measure(label: str, fabric_file: Path, ib: IbFabric, runs: int, full: bool) -> None:
    results = [one_run(fabric_file, ib, full) for _ in range(runs)]
    medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
    shown = ", ".join(f"{key} {value:.1f}" for key, value in medians.items())
    print(f"{label}: {len(ib.switches)} switches, {len(ib.hcas)} HCAs, {len(ib.cables)} cables: {shown}"
          f" (median of {runs})", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zones", default="1", help="meta-24k slices: comma-separated zone counts")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="meta-24k whole, routed and discovered only")
    args = parser.parse_args()
    missing = missing_tools()
    if missing:
        print("cannot run: needs", ", ".join(missing))
        return 2
    small = ROOT / "inventory" / "small" / "fabric.yaml"
    meta = ROOT / "inventory" / "meta-24k" / "fabric.yaml"
    if not args.whole:
        _, ctx, _ = load_and_check(small)
        assert ctx.infiniband is not None
        measure("small, whole", small, ctx.infiniband, args.runs, True)
    _, ctx, _ = load_and_check(meta)
    assert ctx.infiniband is not None
    if args.whole:
        measure("meta-24k, whole", meta, ctx.infiniband, args.runs, False)
        return 0
    for count in (int(z) for z in args.zones.split(",")):
        measure(f"meta-24k, {count} zone(s)", meta, ctx.infiniband.slice(set(range(1, count + 1))), args.runs, True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
