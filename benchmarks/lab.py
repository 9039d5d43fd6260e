"""Lab scale run (by hand, as root): build a slice in network namespaces, wait for convergence,
verify with a drill, tear down; print the figures.

    python benchmarks/lab.py                       # meta-24k zone 1, 4 CTSW x 16 RTSW
    python benchmarks/lab.py inventory/small       # the whole small example
    python benchmarks/lab.py FABRIC --zone 1 --racks 8 --ctsw 8 --drill-mode cut
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.netns import NetnsBackend, prerequisites
from netgen.lab.plan import SliceRequest
from netgen.lab.verify import DRILL_MODES, routing_state, verify, wait_for
from netgen.topology import expand

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fabric", nargs="?", default=str(ROOT / "inventory" / "meta-24k"))
    parser.add_argument("--zone", type=int)
    parser.add_argument("--racks", type=int)
    parser.add_argument("--ctsw", type=int)
    parser.add_argument("--drill-mode", default="drain", choices=list(DRILL_MODES))
    args = parser.parse_args()
    if args.fabric.endswith("meta-24k") and args.zone is None:
        args.zone, args.racks, args.ctsw = 1, 16, 4
    missing = prerequisites()
    if missing:
        print("cannot run:", "; ".join(missing))
        return 2
    root = Path(os.environ.setdefault("NETGEN_LAB_ROOT", f"/run/netgen/bench-{os.getpid()}"))

    started = time.monotonic()
    loaded = load_fabric(args.fabric)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    plan = plan_lab("bench", ctx, SliceRequest(args.zone, args.racks, args.ctsw))
    planned = time.monotonic()
    backend = NetnsBackend("bench")
    try:
        build = backend.build(plan)
        built = time.monotonic()
        state, converge = wait_for(lambda: routing_state(backend, plan), 300)
        sessions_up = time.monotonic()
        memory = backend.memory()
        pss = sorted(memory.values())
        report = verify(backend, drill=True, drill_mode=args.drill_mode)
        verified = time.monotonic()
    finally:
        teardown_start = time.monotonic()
        backend.destroy()
        teardown = time.monotonic() - teardown_start
        with contextlib.suppress(OSError):
            root.rmdir()  # only if empty: never another lab's state

    routers = plan.routers()
    by_role = {role: sum(1 for n in routers if n.role == role) for role in ("rtsw", "ctsw", "atsw")}
    print(f"fabric {plan.fabric}: {plan.slice}")
    print(f"  routers {len(routers)} {by_role}, hosts {len(plan.hosts())}, links {len(plan.links)},"
          f" expected sessions {len(plan.sessions)} (+{plan.sessions_outside} configured towards devices outside)")
    print(f"  load + expand + render + plan   {planned - started:6.2f} s")
    print(f"  build (ns, links, FRR, config)  {built - planned:6.2f} s  {build.stages}")
    print(f"  converge after build            {converge:6.2f} s  ({'all' if all(r.ok for r in state) else 'NOT all'}"
          " sessions Established, full ECMP)")
    print(f"  up to converged                 {sessions_up - planned:6.2f} s")
    print(f"  verify + {args.drill_mode} drill              {verified - sessions_up:6.2f} s  ok={report['ok']}")
    for result in report["results"]:
        if result["check"] == "drill" and ("restored" in result["subject"] or "shrinks" in result["subject"]):
            print(f"    {result['subject']}: {result['detail']}")
    print(f"  teardown                        {teardown:6.2f} s")
    print(f"  PSS per router (zebra+bgpd+staticd+bfdd): mean {sum(pss) / len(pss) / 2**20:.1f} MB,"
          f" min {pss[0] / 2**20:.1f} MB, max {pss[-1] / 2**20:.1f} MB, total {sum(pss) / 2**20:.0f} MB")
    for role in ("rtsw", "ctsw", "atsw"):
        sizes = [memory[n.name] for n in routers if n.role == role]
        if sizes:
            print(f"    {role}: mean {sum(sizes) / len(sizes) / 2**20:.1f} MB over {len(sizes)} routers")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
