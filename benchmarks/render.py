"""Render a whole fabric (default: inventory/meta-24k) and print what it costs.

Run by hand:  python benchmarks/render.py [FABRIC]
Prints devices rendered (per NOS with a renderer), bytes written, wall time, per-device ms and
peak RSS. Target for meta-24k on the 2-core CI machine: under 30 s, peak RSS under 1.5 GB.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from netgen.checks import DesignContext, run_checks  # noqa: E402
from netgen.intent import load_fabric  # noqa: E402
from netgen.platforms.render import render_fabric  # noqa: E402
from netgen.topology import expand  # noqa: E402
from netgen.topology.model import Device  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("fabric", nargs="?", default=str(ROOT / "inventory" / "meta-24k"))
    args = parser.parse_args()

    start = time.perf_counter()
    loaded = load_fabric(args.fabric)
    topology = expand(loaded.fabric, loaded.catalog)
    ctx = DesignContext(loaded.fabric, loaded.catalog, topology)
    errors = [f for f in run_checks(ctx) if f.severity.value == "error"]
    checked = time.perf_counter()
    # Per-NOS cost: time each device's render + check through the progress hook.
    per_nos: dict[str, list[float]] = {}
    last = [time.perf_counter()]

    def tick(device: Device) -> None:
        now = time.perf_counter()
        per_nos.setdefault(device.nos, []).append(now - last[0])
        last[0] = now

    with tempfile.TemporaryDirectory() as tmp:
        last[0] = time.perf_counter()
        result = render_fabric(ctx, Path(tmp) / "out", progress=tick)
    done = time.perf_counter()

    rendered = len(result.devices)
    by_nos = Counter(topology.devices[name].nos for name in result.devices)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"fabric            {loaded.fabric.name} ({len(topology.devices)} devices, {len(errors)} design errors)")
    print(f"rendered          {rendered} devices {dict(by_nos)}")
    print(f"files / bytes     {result.files} files, {result.bytes / 1e6:.1f} MB")
    print(f"load+expand+check {(checked - start):8.2f} s")
    print(f"render+write      {(done - checked):8.2f} s   ({(done - checked) / max(rendered, 1) * 1000:.1f} ms/device)")
    for nos, times in sorted(per_nos.items()):
        print(f"  {nos:<15} {len(times):5d} devices, {sum(times) / len(times) * 1000:6.1f} ms/device"
              f" (render + check, max {max(times) * 1000:.1f} ms)")
    print(f"total             {(done - start):8.2f} s   (target < 30 s)")
    print(f"peak RSS          {peak_mb:8.1f} MB  (target < 1500 MB)")


if __name__ == "__main__":
    main()
