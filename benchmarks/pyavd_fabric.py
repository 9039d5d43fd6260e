"""The pyavd side of benchmarks/scale.py's ratio: an Arista layer-3 leaf-spine built and rendered
from AVD inputs the way pyavd's own pipeline does it (validate_inputs per device, get_avd_facts,
get_device_structured_config and get_device_config per device), timed in CPU seconds.

Run by hand, with an interpreter that has pyavd (it pins its own Jinja2 and friends, so a venv of
its own is the easy way):  /path/to/venv/bin/python benchmarks/pyavd_fabric.py [--leaves 64]
Prints one JSON object: devices, lines of EOS configuration, CPU seconds, peak RSS in MB.

The fabric is the closest AVD design to a netgen zone: 4 spines (7800R3) and N leaves (7060X6),
each leaf with 4 x 400G uplinks to every spine over /31s, an eBGP underlay with one ASN per leaf,
and AVD's default EVPN overlay (AVD has no design without one). Nothing here needs a device.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any

SPINES = 4
LINKS_PER_SPINE = 4


def design(leaves: int) -> dict[str, Any]:
    """The group variables every device shares (what an AVD inventory's FABRIC group holds)."""
    uplinks = SPINES * LINKS_PER_SPINE
    return {
        "fabric_name": "BENCH",
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "ebgp",
        "spine": {
            "defaults": {"platform": "7800R3", "loopback_ipv4_pool": "10.0.0.0/20", "bgp_as": "65000"},
            "nodes": [{"name": f"spine{i}", "id": i, "mgmt_ip": f"192.168.0.{i}/24"} for i in range(1, SPINES + 1)],
        },
        "l3leaf": {
            "defaults": {
                "platform": "7060X6", "loopback_ipv4_pool": "10.0.16.0/20", "vtep_loopback_ipv4_pool": "10.0.32.0/20",
                "uplink_ipv4_pool": "10.1.0.0/16", "bgp_as": "65100-65999",
                # uplink k of every leaf lands on spine (k mod 4), in the top cages
                "uplink_interfaces": [f"Ethernet{49 + k}/1" for k in range(uplinks)],
                "uplink_switches": [f"spine{1 + k % SPINES}" for k in range(uplinks)],
            },
            "node_groups": [
                {"group": f"rack{n}", "nodes": [{
                    "name": f"leaf{n}", "id": n, "mgmt_ip": f"192.168.{1 + n // 250}.{1 + n % 250}/16",
                    "uplink_switch_interfaces": [f"Ethernet{(n - 1) * LINKS_PER_SPINE + 1 + k // SPINES}/1"
                                                 for k in range(uplinks)],
                }]}
                for n in range(1, leaves + 1)
            ],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--leaves", type=int, default=64)
    args = parser.parse_args()
    try:
        import pyavd  # noqa: PLC0415  (only this interpreter needs it)
    except ImportError:
        sys.exit("pyavd is not installed in this interpreter: pip install pyavd (in a venv of its own)")
    hosts = {f"spine{i}": "spine" for i in range(1, SPINES + 1)}
    hosts.update({f"leaf{n}": "l3leaf" for n in range(1, args.leaves + 1)})
    start = time.process_time()
    inputs = {}
    for host, node_type in hosts.items():
        validated = pyavd.validate_inputs({**design(args.leaves), "type": node_type})
        if validated.validation_result.violations:
            sys.exit(f"{host}: AVD refused the inputs: {validated.validation_result.violations[:3]}")
        inputs[host] = validated.validated_data
    facts = pyavd.get_avd_facts(inputs)
    lines = 0
    for host in hosts:
        structured = pyavd.get_device_structured_config(host, inputs[host], facts)
        lines += pyavd.get_device_config(structured).count("\n")
    cpu = time.process_time() - start
    print(json.dumps({"pyavd": pyavd.__version__, "devices": len(hosts), "lines": lines, "cpu_s": round(cpu, 3),
                      "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


if __name__ == "__main__":
    main()
