"""The files `netgen hosts` writes: per host class the NCCL settings twice (nccl.env for a shell to
source, nccl.conf for NCCL's own config-file reader), the NIC QoS scripts for its NIC family and a JSON
document of every setting; one inventory of every host and its rails. Values are worked out here; the
templates (templates/hosts/) hold only the shell and config-file syntax."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from functools import cache
from typing import Any

import jinja2

from netgen.hosts.plan import NCCL_CONF_MAX_FIELD, PRIORITIES, HostClass, HostPlan, HostQos
from netgen.intent.fabric import Fabric
from netgen.rendered import RenderedFile
from netgen.templating import template_env

INVENTORY = "inventory"  # DIR/inventory/hosts.json; a class is never named so (class names end in "nic")

# Per line of a script: the mapping options (--dscp2prio set,D,P) and the `dcb app` pairs (D:P).
DSCP2PRIO_PER_LINE = 4
DCB_PAIRS_PER_LINE = 16

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


def _chunks(pairs: Sequence[tuple[int, int]], size: int) -> list[list[tuple[int, int]]]:
    return [list(pairs[i:i + size]) for i in range(0, len(pairs), size)]


def nccl_conf_lines(nccl: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The NCCL settings as NCCL's config file holds them: KEY=VALUE, the value verbatim. The reader
    (NVIDIA/nccl src/misc/param.cc, setEnvFile) splits a line at its first '=', keeps every other byte
    (no quotes, no trimming), ends a line at its newline and cuts names and values at 1023 bytes; a
    value it could not read back whole is refused here (NG705 stops such an intent first)."""
    for key, value in nccl:
        if len(key) > NCCL_CONF_MAX_FIELD or len(value) > NCCL_CONF_MAX_FIELD or any(c in value for c in "\n\r\0"):
            raise ValueError(f"{key}: NCCL's config-file reader cannot read this value back whole")
    return list(nccl)


def thor2_dscp_order(qos: HostQos) -> list[tuple[int, int]]:
    """The DSCP map in the order Thor2 needs it: the CNP DSCP's entry last (Broadcom bnxt_re README.TXT,
    "DCB Settings": the DSCP App TLV for CNP is programmed after every other App TLV)."""
    pairs = [pair for pair in qos.dscp_priority if pair[0] != qos.cnp_dscp]
    return pairs + [pair for pair in qos.dscp_priority if pair[0] == qos.cnp_dscp]


def bnxt_re_configfs_value(value: int) -> str:
    """A number as Broadcom's bnxt_re configfs reads it: hex with its 0x. Its cc store functions parse
    hex: sscanf(buf, "%x") in bnxt_re 233.2.77.9 and in the copy openEuler bundles (configfs.c,
    roce_dscp_store / cnp_dscp_store / roce_prio_store / cnp_prio_store; the kernel's sscanf %x
    skips a leading 0x: lib/kstrtox.c _parse_integer_fixup_radix), kstrtouint(buf, 0) in another
    release, which reads "0x1a" as 26 as well. A bare "26" is 0x26 = 38 to the former, and "48" is
    refused (0x48 > 0x3F), stopping a `set -e` script. Broadcom's bnxt_setupcc.sh writes them the
    same way (printf "0x%x")."""
    return f"{value:#x}"


def _view(fabric: Fabric, host_class: HostClass) -> dict[str, Any]:
    qos = host_class.qos
    lossless = fabric.qos.lossless
    tsa, bw = _ets(qos, lossless.weight)
    # Thor2: Broadcom's README puts RoCE on TC1 and CNP on TC2 (bnxt_setupcc.sh does the same).
    thor_tc = ["1" if p == qos.pfc_priority else "2" if p == qos.strict_priority else "0" for p in range(PRIORITIES)]
    return {
        "name": host_class.name, "fabric": fabric.name, "hosts": host_class.hosts, "hcas": list(host_class.hcas),
        # sh reads `export KEY=VALUE`; shlex.quote leaves a value of safe characters (=mlx5_0:1,...) as is
        "nccl_exports": [(key, shlex.quote(value)) for key, value in host_class.nccl],
        "nccl_conf": nccl_conf_lines(host_class.nccl),
        "trust": qos.trust,
        "dscp2prio_lines": _chunks(qos.dscp_priority, DSCP2PRIO_PER_LINE),
        "dcb_dscp_lines": _chunks(qos.dscp_priority, DCB_PAIRS_PER_LINE),
        "thor_dcb_dscp_lines": _chunks(thor2_dscp_order(qos), DCB_PAIRS_PER_LINE),
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
        "bnxt_roce_dscp": bnxt_re_configfs_value(qos.roce_dscp),
        "bnxt_roce_prio": bnxt_re_configfs_value(qos.pfc_priority),
        "bnxt_cnp_dscp": bnxt_re_configfs_value(qos.cnp_dscp),
        "bnxt_cnp_prio": bnxt_re_configfs_value(qos.strict_priority),
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
    """DIR/<class>/{nccl.env, nccl.conf, nic-qos*.sh, host.json} and DIR/inventory/hosts.json."""
    env = _env()
    out: dict[str, list[RenderedFile]] = {}
    for name, host_class in sorted(plan.classes.items()):
        view = _view(fabric, host_class)
        files = [RenderedFile(file, env.get_template(f"{file}.j2").render(view)) for file in ("nccl.env", "nccl.conf")]
        files += [RenderedFile(file, env.get_template(template).render(view))
                  for file, template in SCRIPTS[host_class.nic]]
        files.append(RenderedFile("host.json", _json(class_document(fabric, host_class))))
        out[name] = files
    out[INVENTORY] = [RenderedFile("hosts.json", _json(inventory_document(fabric, plan)))]
    return out
