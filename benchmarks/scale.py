"""Issue 16's table, measured as a user runs netgen (the CLI in a subprocess), median of N runs.

Run by hand:  python benchmarks/scale.py [--runs 3] [--skip-diff] [--skip-x4] [--skip-pyavd]
                                         [--pyavd-python PYTHON]

Prints, for inventory/meta-24k:
  cold render          `netgen render FABRIC -o NEW_DIR`
  warm, unchanged      the same render again into that DIR (the fabric unchanged)
  one more rack        zone 1 with one rack more, into the DIR of the original render (a copy
                       of it made with hard links), DIR's file pages dropped from the page cache
                       first (drop_pages), as this VM's small page cache has dropped them by the
                       time a user adds a rack
  one more, cached     the same with DIR's pages in the page cache (every file read first)
  one more, --verify   the first with `--verify` (every file of DIR read and hashed, as before the
                       first look trusted what the manifest recorded of each file)
  diff, one zone       `netgen diff --format markdown` of a one-line intent change (zone 1's
                       RTSW-CTSW cable length: zone 1's RTSWs change) in a scratch git repository
                       holding netgen, its templates and the fabric (benchmarks/pr_diff.py)
  diff, fabric-wide    the same of the fabric's MTU, 9100 -> 9000 (every port of every switch)
  fabric-wide, kept    the same with the base revision's render kept (`netgen diff --base-cache`,
                       filled by one diff first, not timed): a CI job that keeps it per base commit
  4 x meta-24k cold    a generated fabric four times meta-24k (32 zones, 6,684 switches)
  netgen --help        the command line's start
with each command's peak RSS (its largest process: the parent or a render worker). Each figure
sits next to its goal. Then the pyavd ratio, measured in the same run: lines of configuration per
CPU-second of a cold netgen render of meta-24k (every file, and its EOS switches alone) against
pyavd rendering a 68-device Arista leaf-spine (benchmarks/pyavd_fabric.py), where a pyavd is
installed: in this interpreter, or the one --pyavd-python names (pyavd pins its own Jinja2 and
friends, so a venv of its own: python -m venv /var/tmp/pyavd && /var/tmp/pyavd/bin/pip install pyavd).

Before each measured command the file system is flushed and left a second to settle (settle()).
drop_pages drops a folder's file pages with posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) on every
file after a sync (pages still dirty would stay): any user who can read the files may, root is not
needed (the figures in docs/developer/benchmarks.md were taken as root). The netgen code, the fabric
and Python stay cached, as they do for a user.

The commands use the user's cache directory as a user's commands do: the ECMP what-if results NG706
needs (netgen/whatif/ecmp.py) are drawn by the first command that meets a fabric shape and read by
the rest, so a median of 3 is a warm cache's figure (a cold one adds 0.1 to 0.2 s: numpy's import
and the draws).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml
from harness import META, NETGEN, ROOT, Run, copy_fabric, drop_pages, measure, median, run
from pr_diff import CASES, diff_command, diff_repo

PYAVD_FABRIC = ROOT / "benchmarks" / "pyavd_fabric.py"


def lines_in_file(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def lines_in(folder: Path, suffix: str = "") -> int:
    return sum(path.read_bytes().count(b"\n") for path in folder.rglob(f"*{suffix}")
               if path.is_file() and not path.name.startswith("."))


def pyavd_python(given: str | None) -> str | None:
    """The interpreter to run pyavd with: --pyavd-python, else this one if it has pyavd."""
    if given:
        return given
    found = subprocess.run([sys.executable, "-c", "import pyavd"], capture_output=True, check=False)
    return sys.executable if found.returncode == 0 else None


def pyavd_ratio(python: str | None, fabric: Path, cold: Path, cold_runs: list[Run], runs: int) -> None:
    """Lines of configuration per CPU-second, netgen against pyavd, both measured now. netgen's CPU
    includes starting Python and loading, expanding and checking the fabric; pyavd's counts its
    pipeline only, from validating the inputs to the last config (not its imports)."""
    if python is None:
        print("pyavd ratio           not measured: no pyavd here (pip install pyavd into a venv of its own, then"
              " --pyavd-python VENV/bin/python)", flush=True)
        return
    done = subprocess.run([python, str(PYAVD_FABRIC), "--leaves", "64"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{PYAVD_FABRIC.name} failed: {done.stderr[-2000:]}")
    avd = json.loads(done.stdout)
    avd_rate = avd["lines"] / avd["cpu_s"]
    print(f"pyavd {avd['pyavd']:15} {avd['devices']} EOS devices (layer-3 leaf-spine, eBGP + EVPN): {avd['lines']:,}"
          f" lines in {avd['cpu_s']:.2f} CPU-s = {avd_rate:,.0f} lines/CPU-s; peak RSS {avd['peak_mb']} MB", flush=True)
    cpu = median([r.cpu_s for r in cold_runs])
    lines = lines_in(cold)
    print(f"netgen, every file     {lines:,} lines in {cpu:.2f} CPU-s (cold render, median) = {lines / cpu:,.0f}"
          f" lines/CPU-s: {lines / cpu / avd_rate:.1f}x pyavd's; peak RSS {max(r.peak_mb for r in cold_runs):.0f} MB",
          flush=True)
    eos = sorted(d.name for d in cold.iterdir() if (d / f"{d.name}.cfg").is_file())
    selection = [arg for name in eos for arg in ("--device", name)]
    checked = [run(*NETGEN, "render", str(fabric), "--check", *selection) for _ in range(runs)]
    cpu = median([r.cpu_s for r in checked])
    lines = lines_in(cold, ".cfg")
    print(f"netgen, EOS only       {len(eos)} EOS switches of meta-24k (render --check): {lines:,} lines in {cpu:.2f}"
          f" CPU-s = {lines / cpu:,.0f} lines/CPU-s: {lines / cpu / avd_rate:.1f}x pyavd's; peak RSS"
          f" {max(r.peak_mb for r in checked):.0f} MB", flush=True)


def four_times(dest: Path) -> Path:
    """meta-24k four times over: 32 zones of 192 racks (6,656 RTSW and CTSW) and 28 ATSWs. No
    Arista chassis in the catalog takes 512 CTSW links, so the ATSW is a benchmark-only model: a
    7816R3 (16 x 7800R3A-36P, 576 x 400G) made by extending the 7808R3 entry."""
    dest.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((META / "fabric.yaml").read_text())
    catalog = yaml.safe_load((META / "catalog.yaml").read_text())
    data["name"] = "meta-24k-x4"
    data["addressing"] = {"loopback_ipv4": "10.0.0.0/14", "p2p_ipv4": "10.64.0.0/12", "host_ipv4": "10.128.0.0/12",
                          "max_zones": 32}
    data["zones"] = [{**data["zones"][0], "id": n} for n in range(1, 33)]
    data["aggregation"]["atsw_model"] = "bench-7816r3-36p-eos"
    catalog["models"]["bench-7816r3-36p-eos"] = {
        "extends": "arista-7808r3a-36p-eos", "port_count": 576,
        "description": "benchmark only: a 7816R3 chassis with 16 x 7800R3A-36P (576 x 400G)"}
    (dest / "catalog.yaml").write_text(yaml.safe_dump(catalog, sort_keys=False))
    (dest / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest / "fabric.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-diff", action="store_true")
    parser.add_argument("--skip-x4", action="store_true")
    parser.add_argument("--skip-pyavd", action="store_true")
    parser.add_argument("--pyavd-python", metavar="PYTHON",
                        help="an interpreter that has pyavd (default: this one, if it has it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="netgen-bench-") as folder:
        work = Path(folder)
        fabric = copy_fabric(work / "fabric")
        more = copy_fabric(work / "more", racks_delta=1)
        print(f"netgen render {META.name}: {os.cpu_count()} CPUs; median of {args.runs}", flush=True)
        measure("netgen --help", 0.3, args.runs, lambda n: [*NETGEN, "--help"])
        cold = measure("cold render", 8, args.runs,
                       lambda n: [*NETGEN, "render", str(fabric), "-o", str(work / f"cold{n}")])
        out = work / "cold0"
        if not args.skip_pyavd:
            pyavd_ratio(pyavd_python(args.pyavd_python), fabric, out, cold, args.runs)
        measure("warm, unchanged", 1.5, args.runs, lambda n: [*NETGEN, "render", str(fabric), "-o", str(out)])

        def one_more_rack(*extra: str, cached: bool = False) -> Callable[[int], list[str]]:
            def setup(n: int) -> list[str]:
                target = work / f"rack{n}"
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(out, target, copy_function=os.link)  # the original render, as DIR
                if cached:  # read once: the copy's files are the original's, whose pages an earlier row dropped
                    for path in target.rglob("*"):
                        if path.is_file():
                            path.read_bytes()
                else:
                    drop_pages(target)
                return [*NETGEN, "render", str(more), "-o", str(target), *extra]
            return setup

        measure("one more rack", 1.5, args.runs, one_more_rack())
        measure("one more, cached", 1.5, args.runs, one_more_rack(cached=True))
        measure("one more, --verify", None, args.runs, one_more_rack("--verify"))
        if not args.skip_diff:

            for case in CASES.values():
                repo = diff_repo(ROOT, work / f"diff-{case.name}", case)
                measure(case.label, case.goal, args.runs, lambda n, repo=repo: diff_command(repo), cwd=repo,
                        rss_goal=case.rss_goal, out=work / f"diff-{case.name}.md")
                print(f"{'':22} markdown {lines_in_file(work / f'diff-{case.name}.md'):,} lines", flush=True)
                if case.name == "fabric-wide":
                    kept = work / "kept-base"
                    run(*diff_command(repo, base_cache=kept), cwd=repo, out=work / "diff-kept.md")  # fills it
                    measure("fabric-wide, kept", case.goal, args.runs,
                            lambda n, repo=repo, kept=kept: diff_command(repo, base_cache=kept), cwd=repo,
                            rss_goal=case.rss_goal, out=work / "diff-kept.md")
        if not args.skip_x4:
            big = four_times(work / "x4")
            measure("4 x meta-24k cold", 30, args.runs,
                    lambda n: [*NETGEN, "render", str(big), "-o", str(work / f"x4-{n}")], rss_goal=1024)
            for n in range(args.runs):
                shutil.rmtree(work / f"x4-{n}", ignore_errors=True)


if __name__ == "__main__":
    main()
