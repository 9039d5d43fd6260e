"""What `netgen --help` and a light command cost before they do anything: the command line loads
each command family lazily (netgen/cli/__init__.py COMMANDS).

Run by hand:  python benchmarks/startup.py [--runs N]
Prints the median wall time of `netgen --help`, `netgen schema` (one family) and the same help with
every command family imported first (what every start cost before lazy loading), and the ratio.
Target (issue 15): `netgen --help` well under 0.3 s on the 2-core CI machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

HELP = "from netgen.cli import main; import sys; sys.argv = ['netgen', '--help']; main()"
SCHEMA = "from netgen.cli import main; import sys; sys.argv = ['netgen', 'schema']; main()"
EAGER = ("import netgen.cli.deploy, netgen.cli.diff, netgen.cli.fabric, netgen.cli.lab; " + HELP)


def median_seconds(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    interpreter = median_seconds("pass", runs)
    lazy, schema, eager = (median_seconds(code, runs) for code in (HELP, SCHEMA, EAGER))
    print(f"python -c pass            {interpreter:6.3f} s")
    print(f"netgen --help (lazy)      {lazy:6.3f} s")
    print(f"netgen schema             {schema:6.3f} s")
    print(f"netgen --help (eager)     {eager:6.3f} s   ratio eager/lazy {eager / lazy:4.1f}x")


if __name__ == "__main__":
    main()
