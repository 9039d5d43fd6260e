"""Deploy benchmark (by hand): 20 emulated EOS switches of meta-24k (16 CTSWs, 2 per zone, and 4
ATSWs) deployed from scratch with `netgen deploy` (or `netgen rollout`: the same pipeline run by
ansible-playbook through ansible-runner, one module process per switch), for several worker
counts; prints the wall time and where each device's time went (mean seconds per pipeline stage).

    python benchmarks/deploy.py [--workers 1 5 20] [--via deploy rollout]

The switches are the in-repo EOS emulator (tests/support/eos_emulator.py) on 127.0.0.1: network
latency is ~0, so the figures show netgen's and netmiko's own cost, not a WAN's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the emulator is a test double: it lives in the checkout's tests/, not in netgen

from netgen.cli import cli  # noqa: E402
from netgen.intent import load_fabric  # noqa: E402
from netgen.topology import expand  # noqa: E402
from tests.support.eos_emulator import EosDeviceSpec, EosFleet  # noqa: E402

MODELS = {"arista-7804r3a-36p-eos": "DCS-7804R3A", "arista-7808r3a-36p-eos": "DCS-7808R3A",
          "arista-7060x6-64pe-eos": "DCS-7060X6-64PE"}


def run(workers: int, via: str) -> dict[str, float]:
    source = ROOT / "inventory" / "meta-24k"
    loaded = load_fabric(source)
    topology = expand(loaded.fabric, loaded.catalog)
    names = [n for n, d in topology.devices.items() if d.role.value == "ctsw" and d.number <= 2]
    names += ["atsw01", "atsw02", "atsw03", "atsw04"]
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder)
        for item in source.glob("*.yaml"):
            shutil.copy(item, site / item.name)
        fleet = EosFleet.start({n: EosDeviceSpec(n, model=MODELS[topology.devices[n].model],
                                                 config=f"hostname {n}\n") for n in names})
        try:
            deploy = {"management": {"devices": {n: {"host": fleet.endpoint(n)[0], "port": fleet.endpoint(n)[1]}
                                                 for n in names}},
                      "ssh": {"known_hosts": str(fleet.known_hosts_path)},
                      "rollout": {"workers": workers}}
            (site / "deploy.yaml").write_text(yaml.safe_dump(deploy))
            os.environ["NETGEN_USERNAME"], os.environ["NETGEN_PASSWORD"] = fleet.username, fleet.password
            started = time.monotonic()
            result = CliRunner().invoke(cli, [via, str(site / "fabric.yaml"), "--limit", ",".join(names),
                                              "--workers", str(workers), "--json"])
            wall = time.monotonic() - started
        finally:
            fleet.stop()
    report = json.loads(result.stdout)
    stages: dict[str, list[float]] = {}
    for outcome in report["devices"].values():
        for stage, seconds in outcome["stage_seconds"].items():
            stages.setdefault(stage, []).append(seconds)
    print(f"{via:8s} workers {workers:3d}: {wall:6.1f} s for {len(names)} switches in {len(report['batches'])} batches,"
          f" {report['counts']}")
    print("   mean s/device: " + ", ".join(f"{k} {statistics.mean(v):.2f}" for k, v in stages.items()))
    return {"wall": wall}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--via", nargs="+", choices=["deploy", "rollout"], default=["deploy"])
    args = parser.parse_args()
    for via in args.via:
        for workers in args.workers:
            run(workers, via)
    return 0


if __name__ == "__main__":
    sys.exit(main())
