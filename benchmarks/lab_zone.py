"""A whole AI Zone in the lab (by hand, as root, on a quiet machine): meta-24k zone 1, 208 FRR routers
and 192 host namespaces, built, converged (every session Established, every RTSW's ECMP as planned,
LLDP heard on both ends of every cable), verified (with a CTSW drain drill: --drill), torn down; and the same for
the small slices: the small example whole (18 routers, 26 namespaces) and meta-24k's 4 CTSWs x 16
racks (20 routers). Median of the runs per slice.

    python benchmarks/lab_zone.py                  # every slice, 3 runs each
    python benchmarks/lab_zone.py --racks 48 --runs 1
    python benchmarks/lab_zone.py --only zone --drill

Printed per slice: build (namespaces, cables, FRR started and configured, LLDP, ports up), converge
after build, verify + drill, teardown; peak memory in use on the machine (MemTotal - MemAvailable,
sampled every 0.5 s, less what was in use before) and the FRR daemons' PSS per router; CPU seconds of
the whole machine from the build's start to converged; whether anything was left (namespace, veth,
process, mount, file).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.netns import NetnsBackend, existing_namespaces, prerequisites
from netgen.lab.plan import SliceRequest
from netgen.lab.verify import up_state, verify, wait_for
from netgen.topology import expand

ROOT = Path(__file__).resolve().parent.parent
META = ROOT / "inventory" / "meta-24k"
SMALL = ROOT / "inventory" / "small"
SLICES = {"small": (SMALL, SliceRequest()), "slice": (META, SliceRequest(zone=1, racks=16, ctsw=4)),
          "zone": (META, SliceRequest(zone=1))}


def used_bytes() -> int:
    info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()}
    return info["MemTotal"] - info["MemAvailable"]


def cpu_seconds() -> float:
    """CPU time of the whole machine so far (user, nice, system, irq, softirq), in seconds."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (0, 1, 2, 5, 6)) / ticks


class PeakMemory:
    """The most memory in use while it runs, sampled every 0.5 s."""

    def __init__(self) -> None:
        self.peak = used_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, used_bytes())

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Figures:
    routers: int
    hosts: int
    sessions: int
    build_s: float
    stages: dict[str, float]
    converge_s: float
    verify_s: float
    teardown_s: float
    peak_gb: float
    pss_mean_mb: float
    pss_max_mb: float
    cpu_s: float
    converged: bool
    verified: bool
    left: list[str]
    lab_only: list[str]


def leftovers(lab: str, root: Path) -> list[str]:
    left = [f"namespace {ns}" for ns in sorted(existing_namespaces()) if ns.startswith(f"{lab}-")]
    left += [f"directory {root / lab}"] if (root / lab).exists() else []
    marker = f"/{lab}/".encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (proc / "cmdline").read_bytes() and (proc / "stat").read_text().split()[2] != "Z":
                    left.append(f"process {proc.name}")
    mounts = Path("/proc/self/mounts").read_text()
    left += [f"mount {line.split()[1]}" for line in mounts.splitlines() if marker.decode() in line]
    return left


def one_run(ctx: DesignContext, request: SliceRequest, lab: str, root: Path, drill: bool) -> Figures:
    plan = plan_lab(lab, ctx, request)
    backend = NetnsBackend(lab)
    baseline = used_bytes()
    cpu_start = cpu_seconds()
    with PeakMemory() as peak:
        try:
            build = backend.build(plan)
            results, converge = wait_for(up_state(backend, plan), 600)
            cpu = cpu_seconds() - cpu_start
            pss = sorted(backend.memory().values())
            mark = time.monotonic()
            report = verify(backend, drill=drill, drill_mode="drain")
            verify_s = time.monotonic() - mark
        finally:
            mark = time.monotonic()
            backend.destroy()
            teardown = time.monotonic() - mark
    return Figures(routers=len(plan.routers()), hosts=len(plan.hosts()), sessions=len(plan.sessions),
                   build_s=build.seconds, stages=build.stages, converge_s=converge, verify_s=verify_s,
                   teardown_s=teardown, peak_gb=(peak.peak - baseline) / 2**30,
                   pss_mean_mb=sum(pss) / len(pss) / 2**20, pss_max_mb=pss[-1] / 2**20, cpu_s=cpu,
                   converged=all(r.ok for r in results), verified=bool(report["ok"]), left=leftovers(lab, root),
                   lab_only=build.lab_only)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--racks", type=int, help="the zone's first N racks (default: all 192)")
    parser.add_argument("--only", choices=sorted(SLICES))
    parser.add_argument("--drill", action="store_true", help="verify with a CTSW drain drill")
    args = parser.parse_args()
    missing = prerequisites()
    if missing:
        print("cannot run:", "; ".join(missing))
        return 2
    root = Path(os.environ.setdefault("NETGEN_LAB_ROOT", f"/run/netgen/bench-{os.getpid()}"))
    slices = {name: chosen for name, chosen in SLICES.items() if args.only in (None, name)}
    if args.racks and "zone" in slices:
        slices["zone"] = (META, SliceRequest(zone=1, racks=args.racks))
    status = 0
    for name, (fabric, request) in slices.items():
        loaded = load_fabric(fabric)
        ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
        runs = []
        for i in range(args.runs):
            runs.append(one_run(ctx, request, "bench", root, args.drill))
            r = runs[-1]
            print(f"  {name} run {i + 1}: build {r.build_s:.1f} s, converge {r.converge_s:.1f} s,"
                  f" verify {r.verify_s:.1f} s, teardown {r.teardown_s:.1f} s, peak {r.peak_gb:.2f} GB,"
                  f" PSS {r.pss_mean_mb:.1f} MB/router,"
                  f" CPU {r.cpu_s:.0f} s, converged {r.converged}, verified {r.verified}, left {r.left[:3]}",
                  flush=True)
        med = {field: statistics.median(getattr(r, field) for r in runs)
               for field in ("build_s", "converge_s", "verify_s", "teardown_s", "peak_gb", "pss_mean_mb",
                             "pss_max_mb", "cpu_s")}
        first = runs[0]
        print(f"{name}: {fabric.name} {request.describe()}: {first.routers} routers, {first.hosts} hosts,"
              f" {first.sessions} sessions (median of {len(runs)})")
        print(f"  build            {med['build_s']:7.1f} s   (first run: "
              + ", ".join(f"{k} {v:.1f}" for k, v in first.stages.items()) + ")")
        total = statistics.median(r.build_s + r.converge_s for r in runs)  # each run's, not the medians' sum
        print(f"  converge         {med['converge_s']:7.1f} s   up and converged {total:.1f} s"
              f" (runs: {', '.join(f'{r.build_s + r.converge_s:.1f}' for r in runs)})")
        print(f"  verify{' + drill' if args.drill else '        '}   {med['verify_s']:7.1f} s")
        print(f"  teardown         {med['teardown_s']:7.1f} s")
        print(f"  peak memory      {med['peak_gb']:7.2f} GB  PSS per router mean {med['pss_mean_mb']:.1f} MB,"
              f" max {med['pss_max_mb']:.1f} MB")
        print(f"  CPU to converged {med['cpu_s']:7.0f} s   (whole machine, both cores)")
        print(f"  runs: converged {[r.converged for r in runs]}, verified {[r.verified for r in runs]},"
              f" left {[r.left[:3] for r in runs]}")
        for line in first.lab_only:
            print(f"  lab only: {line}")
        if not all(r.converged and r.verified and not r.left for r in runs):
            status = 1
    with contextlib.suppress(OSError):
        root.rmdir()
    return status


if __name__ == "__main__":
    sys.exit(main())
