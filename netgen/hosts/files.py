"""The files `netgen hosts` writes: per host class an NCCL env file, the NIC QoS scripts for its NIC
family and a JSON document of every setting; one inventory of every host and its rails. Values are
worked out here; the templates (templates/hosts/) hold only the shell and env syntax."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jinja2

from netgen.hosts.plan import PRIORITIES, HostClass, HostPlan, HostQos
from netgen.intent.fabric import Fabric
from netgen.platforms.base import RenderedFile, template_env

INVENTORY = "inventory"  # DIR/inventory/hosts.json; a class is never named so (class names end in "nic")

# Per NIC family, its scripts: (file written, template).
SCRIPTS: dict[str, tuple[tuple[str, str], ...]] = {
    "connectx": (("nic-qos.sh", "connectx-ofed.sh.j2"), ("nic-qos-inbox.sh", "connectx-inbox.sh.j2")),
    "thor2": (("nic-qos.sh", "thor2.sh.j2"),),
}


@cache
def _env() -> jinja2.Environment:
    return template_env("hosts")


def _ets(qos: HostQos, lossless_weight: int) -> tuple[list[str], list[int]]:
    """One TC per priority: the CTS TC strict, the lossless TC its weight, the rest to TC 0
    (best effort); strict TCs take 0 % and the ETS shares sum to 100 (mlnx_qos and dcb require it)."""
    tsa = ["strict" if p == qos.strict_priority else "ets" for p in range(PRIORITIES)]
    bw = [0] * PRIORITIES
    bw[qos.pfc_priority] = lossless_weight
    rest = 0 if qos.pfc_priority != 0 else 1
    while rest in (qos.strict_priority, qos.pfc_priority):
        rest += 1
    bw[rest] += 100 - lossless_weight
    return tsa, bw


def _view(fabric: Fabric, host_class: HostClass) -> dict[str, Any]:
    qos = host_class.qos
    lossless = fabric.qos.lossless
    tsa, bw = _ets(qos, lossless.weight)
    # Thor2: Broadcom's README puts RoCE on TC1 and CNP on TC2 (bnxt_setupcc.sh does the same).
    thor_tc = ["1" if p == qos.pfc_priority else "2" if p == qos.strict_priority else "0" for p in range(PRIORITIES)]
    return {
        "name": host_class.name, "fabric": fabric.name, "hosts": host_class.hosts, "hcas": list(host_class.hcas),
        "nccl": list(host_class.nccl), "trust": qos.trust, "dscp_priority": list(qos.dscp_priority),
        "dscp_prio_pairs": " ".join(f"{d}:{p}" for d, p in qos.dscp_priority),
        "pfc": ",".join(map(str, qos.pfc_flags)), "pfc_priority": qos.pfc_priority,
        "strict_priority": qos.strict_priority,
        "prio_tc": ",".join(str(p) for p in range(PRIORITIES)), "tsa": ",".join(tsa), "tcbw": ",".join(map(str, bw)),
        "dcb_prio_tc": " ".join(f"{p}:{p}" for p in range(PRIORITIES)),
        "dcb_tsa": " ".join(f"{p}:{t}" for p, t in enumerate(tsa)),
        "dcb_bw": " ".join(f"{p}:{b}" for p, b in enumerate(bw)),
        "thor_prio_tc": " ".join(f"{p}:{tc}" for p, tc in enumerate(thor_tc)),
        "thor_tsa": "0:ets 1:ets 2:strict",
        "thor_bw": f"0:{100 - lossless.weight} 1:{lossless.weight} 2:0",
        "traffic_class": qos.traffic_class, "mtu": qos.mtu, "dcqcn": qos.dcqcn,
        "dcqcn_word": "on" if qos.dcqcn else "off", "cc_flag": "0x1" if qos.dcqcn else "0x0",
        "ecn": [(p, int(qos.dcqcn and p == qos.pfc_priority)) for p in range(PRIORITIES)],
        "lossless_dscp": qos.traffic_class >> 2,
        # CNPs ride the strict CTS class: its last DSCP (48 by default, NVIDIA's and Broadcom's CNP DSCP)
        "cnp_dscp": fabric.qos.cts.dscp[-1],
        "summary": (f"trust {qos.trust}, DSCP {'/'.join(map(str, lossless.dscp))} lossless on priority"
                    f" {qos.pfc_priority} (PFC), CTS DSCP {'/'.join(map(str, fabric.qos.cts.dscp))} strict on"
                    f" priority {qos.strict_priority}, DCQCN {'on' if qos.dcqcn else 'off'}, MTU {qos.mtu}"),
    }


def class_document(fabric: Fabric, host_class: HostClass) -> dict[str, Any]:
    """Every setting of a host class as data (host.json)."""
    qos = host_class.qos
    return {
        "fabric": fabric.name, "class": host_class.name, "nic": host_class.nic, "hosts": host_class.hosts,
        "zones": list(host_class.zones), "rdma_devices": list(host_class.hcas),
        "qos": {"trust": qos.trust, "dscp_to_priority": {str(d): p for d, p in qos.dscp_priority},
                "pfc_priority": qos.pfc_priority, "pfc_enabled": list(qos.pfc_flags),
                "strict_priority": qos.strict_priority, "roce_tos": qos.traffic_class,
                "dcqcn": qos.dcqcn, "mtu": qos.mtu, "roce_mtu": qos.roce_mtu},
        "nccl": dict(host_class.nccl),
    }


def inventory_document(fabric: Fabric, plan: HostPlan) -> dict[str, Any]:
    return {"fabric": fabric.name, "classes": sorted(plan.classes),
            "hosts": [{"name": h.name, "zone": h.zone, "rack": h.rack, "rtsw": h.rtsw, "class": h.host_class,
                       "rails": [{"rail": r.index, "rdma_device": r.hca, "nic": r.nic, "rtsw_port": r.rtsw_port,
                                  "ipv4": r.ipv4, "gateway_ipv4": r.gateway_ipv4} for r in h.rails]}
                      for h in plan.hosts]}


def _json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def render_hosts(fabric: Fabric, plan: HostPlan) -> dict[str, list[RenderedFile]]:
    """DIR/<class>/{nccl.env, nic-qos*.sh, host.json} and DIR/inventory/hosts.json."""
    env = _env()
    out: dict[str, list[RenderedFile]] = {}
    for name, host_class in sorted(plan.classes.items()):
        view = _view(fabric, host_class)
        files = [RenderedFile("nccl.env", env.get_template("nccl.env.j2").render(view))]
        files += [RenderedFile(file, env.get_template(template).render(view))
                  for file, template in SCRIPTS[host_class.nic]]
        files.append(RenderedFile("host.json", _json(class_document(fabric, host_class))))
        out[name] = files
    out[INVENTORY] = [RenderedFile("hosts.json", _json(inventory_document(fabric, plan)))]
    return out
