"""How big netgen's HTML report is and how long Chromium takes to load it, for both bundled fabrics.

Run by hand:  python benchmarks/report.py [--runs 3] [--screenshot-dir DIR]

For each fabric: the time `netgen report` takes, the page's size, and the wall time of headless
Chromium loading it and dumping its DOM (median of N), next to the same for an empty page (the
browser's own start), so the difference is the report's load. With --screenshot-dir, a screenshot
of each report (1400 x 2400) is written there.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FABRICS = {"small": ROOT / "inventory" / "small", "meta-24k": ROOT / "inventory" / "meta-24k"}


def _timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--screenshot-dir", type=Path)
    options = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no Chromium here (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    browser = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    with tempfile.TemporaryDirectory() as folder:
        blank = Path(folder) / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>")
        start = statistics.median(_timed([*browser, "--dump-dom", blank.as_uri()]) for _ in range(options.runs))
        print(f"Chromium, empty page: {start:.2f} s (median of {options.runs})")
        for name, fabric in FABRICS.items():
            page = Path(folder) / f"{name}.html"
            build = statistics.median(_timed([sys.executable, "-m", "netgen.cli", "report", str(fabric), "-o",
                                              str(page)]) for _ in range(options.runs))
            load = statistics.median(_timed([*browser, "--dump-dom", page.as_uri()]) for _ in range(options.runs))
            size = page.stat().st_size
            print(f"{name:9} netgen report {build:.2f} s; {size / 1e6:.2f} MB (goal < 5 MB); Chromium load"
                  f" {load:.2f} s, {load - start:.2f} s more than an empty page (goal < 3 s)")
            if options.screenshot_dir:
                options.screenshot_dir.mkdir(parents=True, exist_ok=True)
                shot = options.screenshot_dir / f"{name}.png"
                subprocess.run([*browser, "--hide-scrollbars", "--window-size=1400,2400", f"--screenshot={shot}",
                                page.as_uri()], check=True, capture_output=True)
                print(f"          screenshot {shot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
