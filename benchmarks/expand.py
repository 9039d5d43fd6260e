"""Expansion + design-check time and peak RSS for a fabric (default: inventory/meta-24k).

Run by hand:  python benchmarks/expand.py [FABRIC] [--repeat N]
Prints one line per stage (best of N runs) and the process's peak RSS. Target for meta-24k on the
2-core CI machine: expansion + checks under 2 s, peak RSS under 500 MB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from netgen.checks import DesignContext, run_checks  # noqa: E402
from netgen.intent import load_fabric  # noqa: E402
from netgen.topology import expand  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fabric", nargs="?", default=str(ROOT / "inventory" / "meta-24k"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    best = {"load": float("inf"), "expand": float("inf"), "checks": float("inf")}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        loaded = load_fabric(args.fabric)
        t1 = time.perf_counter()
        topology = expand(loaded.fabric, loaded.catalog)
        t2 = time.perf_counter()
        ctx = DesignContext(loaded.fabric, loaded.catalog, topology)
        findings = run_checks(ctx)
        t3 = time.perf_counter()
        best["load"] = min(best["load"], t1 - t0)
        best["expand"] = min(best["expand"], t2 - t1)
        best["checks"] = min(best["checks"], t3 - t2)
        del ctx, topology

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"fabric           {loaded.fabric.name}")
    print(f"devices          {len(expand(loaded.fabric, loaded.catalog).devices)}")
    print(f"findings         {len(findings)}")
    print(f"load+validate    {best['load'] * 1000:8.1f} ms")
    print(f"expand           {best['expand'] * 1000:8.1f} ms")
    print(f"design checks    {best['checks'] * 1000:8.1f} ms  (incl. buffer plans)")
    total = best["expand"] + best["checks"]
    print(f"expand + checks  {total * 1000:8.1f} ms  (target < 2000 ms)")
    print(f"peak RSS         {peak_mb:8.1f} MB  (target < 500 MB)")


if __name__ == "__main__":
    main()
