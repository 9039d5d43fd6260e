"""`netgen diff` of meta-24k as a pull request meets it, for one checkout or two taking turns.

Run by hand:  python benchmarks/pr_diff.py [--runs 3] [--case fabric-wide] [--case one-zone]
                                           [--root CHECKOUT [--root CHECKOUT]] [--base-cache]

Cases (each a one-line change of the fabric file, in the working tree of a scratch git repository
holding the checkout's netgen, its templates and meta-24k, diffed against its one commit):
  fabric-wide   the fabric's MTU, 9100 -> 9000: every port of every switch changes
  one-zone      zone 1's RTSW-CTSW cable length, 150 -> 160 m: zone 1's 192 RTSWs change
For each case and checkout: the median wall time of `netgen diff --format markdown`, its CPU time
(its own and its render processes', which a busy machine disturbs less than the wall time) and peak
RSS (the largest of netgen and the render processes it waited for), the comment's lines, and the
size of the same diff's `--json`. With two --root (e.g. a `git worktree` of main, then this
checkout), the runs take turns (A B A B): on a machine whose speed drifts, paired runs are what
compare code. benchmarks/scale.py measures the same cases for this checkout alone, against goals.
--base-cache: each diff keeps the base revision's render (`netgen diff --base-cache DIR`, one DIR per
checkout and case), filled by one diff that is not timed: what a CI job that keeps DIR between pull
requests against the same base pays (the first pull request against a new base pays the cold figure).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness import ENV, NETGEN, ROOT, Run, copy_fabric, median, run, settle

FABRIC = "inventory/meta-24k/fabric.yaml"


@dataclass(frozen=True)
class Case:
    name: str
    label: str  # as benchmarks/scale.py prints it
    goal: float  # seconds (issue 33)
    rss_goal: float | None  # MB
    change: dict[str, int]  # copy_fabric's arguments for the head


CASES = {case.name: case for case in (
    Case("one-zone", "diff, one zone", 10, None, {"cable_delta": 10}),
    Case("fabric-wide", "diff, fabric-wide", 15, 1024, {"mtu": 9000}),
)}


def diff_repo(root: Path, dest: Path, case: Case) -> Path:
    """A git repository in `dest` holding `root`'s netgen and templates and meta-24k (one commit),
    the case's change in its working tree."""
    for part in ("netgen", "templates"):
        shutil.copytree(root / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    copy_fabric(dest / "inventory" / "meta-24k")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(dest), *command], check=True, env=ENV)
    copy_fabric(dest / "inventory" / "meta-24k", **case.change)
    return dest


def diff_command(repo: Path, *options: str, base_cache: Path | None = None) -> list[str]:
    """`netgen diff` run in `repo` (its own netgen first on the path), markdown unless `options` say."""
    kept = ["--base-cache", str(base_cache)] if base_cache is not None else []
    return [*NETGEN, "diff", FABRIC, "--repo", str(repo), "--base", "HEAD", *kept,
            *(options or ("--format", "markdown"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    parser.add_argument("--root", type=Path, action="append", help="a checkout of netgen (default: this one)")
    parser.add_argument("--base-cache", action="store_true", help="keep the base's render between diffs")
    args = parser.parse_args()
    roots = [root.resolve() for root in args.root or [ROOT]]
    with tempfile.TemporaryDirectory(prefix="netgen-bench-diff-") as folder:
        work = Path(folder)
        for case in (CASES[name] for name in args.case or CASES):
            repos = [diff_repo(root, work / f"{case.name}-{i}", case) for i, root in enumerate(roots)]
            kept = [work / f"kept-{case.name}-{i}" if args.base_cache else None for i in range(len(roots))]
            for i, repo in enumerate(repos):
                if kept[i] is not None:  # filled once, not timed
                    run(*diff_command(repo, base_cache=kept[i]), cwd=repo, out=work / f"{case.name}-{i}.md")
            done: dict[int, list[Run]] = {i: [] for i in range(len(roots))}
            for _ in range(args.runs):
                for i, repo in enumerate(repos):
                    settle()
                    done[i].append(run(*diff_command(repo, base_cache=kept[i]), cwd=repo,
                                       out=work / f"{case.name}-{i}.md"))
            for i, repo in enumerate(repos):
                run(*diff_command(repo, "--json"), cwd=repo, out=work / f"{case.name}-{i}.json")
                times = [r.seconds for r in done[i]]
                lines = (work / f"{case.name}-{i}.md").read_bytes().count(b"\n")
                size = (work / f"{case.name}-{i}.json").stat().st_size
                cpu = median([r.cpu_s for r in done[i]])
                label = f"{case.label}, base kept" if args.base_cache else case.label
                print(f"{label:18} {median(times):6.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)};"
                      f" goal <= {case.goal:g} s); CPU {cpu:.1f} s; peak RSS {max(r.peak_mb for r in done[i]):.0f} MB;"
                      f" markdown {lines:,} lines; JSON {size / 1e6:.2f} MB  {roots[i]}", flush=True)


if __name__ == "__main__":
    main()
