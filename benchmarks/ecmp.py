"""The ECMP what-if's cost as a user meets it, cold and warm (issue 31, 5): `netgen validate
inventory/meta-24k` (whose NG706 asks for the recommended QP count), `netgen whatif ecmp
inventory/meta-24k --fail z01-ctsw01` and `netgen report inventory/meta-24k` (whose panel is the same
study), median of N runs each.

Run by hand:  python benchmarks/ecmp.py [--runs 3] [--root CHECKOUT [--root CHECKOUT]]

Cold: each run with XDG_CACHE_HOME at a new empty folder (no ECMP result, no compiled template).
Warm: each run with XDG_CACHE_HOME at a folder the same command filled once before, unmeasured.
--root measures another checkout of netgen with this interpreter (e.g. a `git worktree` of main, for
a before-and-after: give --root twice and the two take turns): the command runs as
`python -m netgen.cli` from that folder, which puts its netgen first on sys.path. Before each
measured command the file system is flushed and left a second to settle (as in benchmarks/scale.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commands(scratch: Path) -> dict[str, tuple[str, ...]]:
    return {"validate meta-24k": ("validate", "inventory/meta-24k"),
            "whatif ecmp --fail": ("whatif", "ecmp", "inventory/meta-24k", "--fail", "z01-ctsw01"),
            "report meta-24k": ("report", "inventory/meta-24k", "-o", str(scratch / "report.html"))}


def settle() -> None:
    """What the previous command left to the kernel (its writes) is not billed to the next one."""
    os.sync()
    time.sleep(1)


def run_seconds(root: Path, args: tuple[str, ...], cache: Path) -> float:
    """One command in `root` with its cache at `cache`; it must succeed (validate: exit 0 or 1)."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "XDG_CACHE_HOME": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "netgen.cli", *args], cwd=root, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:].decode()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, action="append",
                        help="a netgen checkout to measure (default: this one); given twice, the two take turns run"
                             " by run, so a load that comes and goes on the machine falls on both alike")
    options = parser.parse_args()
    roots = [root.resolve() for root in options.root or [ROOT]]
    with tempfile.TemporaryDirectory(prefix="netgen-ecmp-bench-") as scratch:
        for label, args in commands(Path(scratch)).items():
            cold: dict[Path, list[float]] = {root: [] for root in roots}
            warm: dict[Path, list[float]] = {root: [] for root in roots}
            for n in range(options.runs):
                for i, root in enumerate(roots):
                    settle()
                    cold[root].append(run_seconds(root, args, Path(scratch) / f"{label}-{i}-cold-{n}"))
            for i, root in enumerate(roots):
                run_seconds(root, args, Path(scratch) / f"{label}-{i}-warm")
            for _ in range(options.runs):
                for i, root in enumerate(roots):
                    settle()
                    warm[root].append(run_seconds(root, args, Path(scratch) / f"{label}-{i}-warm"))
            for root in roots:
                for kind, times in (("cold", cold[root]), ("warm", warm[root])):
                    each = ", ".join(f"{t:.2f}" for t in times)
                    print(f"{label:20} {kind}  {statistics.median(times):6.2f} s  (runs: {each})  {root}", flush=True)


if __name__ == "__main__":
    main()
