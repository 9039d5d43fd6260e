"""Issue 16's table, measured as a user runs netgen (the CLI in a subprocess), median of N runs.

Run by hand:  python benchmarks/scale.py [--runs 3] [--skip-diff]

Prints, for inventory/meta-24k:
  cold render          `netgen render FABRIC -o NEW_DIR`
  warm, unchanged      the same render again into that DIR (every device's key unchanged)
  warm, one more rack  zone 1 with one rack more, into the DIR of the original render
  diff, one line       `netgen diff` of a one-line intent change (zone 1's CTSW cable length) in a
                       scratch git repository holding netgen, its templates and the fabric
and the peak RSS of the process that did the work. Each figure sits next to its goal.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
META = ROOT / "inventory" / "meta-24k"
NETGEN = [sys.executable, "-m", "netgen.cli"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.net", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.net"}


def run(*args: str, cwd: Path | None = None) -> float:
    """Wall seconds of one command (which must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(list(args), capture_output=True, text=True, cwd=cwd, check=False,
                          env={**os.environ, **GIT_ENV})
    if done.returncode not in (0, 1) or (done.returncode == 1 and args[3:4] != ("diff",)):
        sys.exit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return time.perf_counter() - start


def median(times: list[float]) -> float:
    return statistics.median(times)


def measure(label: str, goal: float, runs: int, setup: Callable[[int], list[str]], cwd: Path | None = None) -> float:
    times = []
    for n in range(runs):
        command = setup(n)
        times.append(run(*command, cwd=cwd))
    value = median(times)
    verdict = "met" if value <= goal else "not met"
    print(f"{label:22} {value:7.2f} s  (runs: {', '.join(f'{t:.2f}' for t in times)}; goal <= {goal:g} s: {verdict})",
          flush=True)
    return value


def copy_fabric(dest: Path, racks_delta: int = 0, cable_delta: int = 0) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for item in META.iterdir():
        if item.is_file():
            shutil.copy(item, dest / item.name)
    data = yaml.safe_load((META / "fabric.yaml").read_text())
    data["zones"][0]["racks"] += racks_delta
    if cable_delta:
        cables = data["zones"][0].setdefault("cable_length_m", {})
        cables["rtsw_ctsw_m"] = cables.get("rtsw_ctsw_m", 100) + cable_delta
    (dest / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest / "fabric.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-diff", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="netgen-bench-") as folder:
        work = Path(folder)
        fabric = copy_fabric(work / "fabric")
        more = copy_fabric(work / "more", racks_delta=1)
        print(f"netgen render {META.name}: {os.cpu_count()} CPUs; median of {args.runs}", flush=True)
        measure("cold render", 8, args.runs, lambda n: [*NETGEN, "render", str(fabric), "-o", str(work / f"cold{n}")])
        out = work / "cold0"
        measure("warm, unchanged", 1.5, args.runs, lambda n: [*NETGEN, "render", str(fabric), "-o", str(out)])

        def one_more_rack(n: int) -> list[str]:
            target = work / f"rack{n}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(out, target, copy_function=os.link)  # the original render, as DIR
            return [*NETGEN, "render", str(more), "-o", str(target)]

        measure("warm, one more rack", 1.5, args.runs, one_more_rack)
        if not args.skip_diff:
            repo = work / "repo"
            for part in ("netgen", "templates"):
                shutil.copytree(ROOT / part, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
            copy_fabric(repo / "inventory" / "meta-24k")
            for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
                subprocess.run(["git", "-C", str(repo), *command], check=True, env={**os.environ, **GIT_ENV})
            copy_fabric(repo / "inventory" / "meta-24k", cable_delta=10)  # one line, in the working tree
            measure("diff, one line", 10, args.runs,
                    lambda n: [*NETGEN, "diff", "inventory/meta-24k/fabric.yaml", "--repo", str(repo),
                               "--base", "HEAD", "--format", "json"], cwd=repo)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{'peak RSS':22} {peak:7.0f} MB (the largest single netgen process above)")


if __name__ == "__main__":
    main()
