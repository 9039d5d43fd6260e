"""Kubernetes exports: node labels with a Kueue Topology, Volcano HyperNodes, and NVIDIA topograph's
model. Each is built as data and written once as YAML, for a release of its scheduler
(netgen/scheduler/versions.py has the releases and the sources for each difference).

* Kueue (config/components/crd/bases/kueue.x-k8s.io_topologies.yaml, _resourceflavors.yaml): a
  Topology whose levels are the zone, the rack switch and the host (kubernetes.io/hostname must be
  last), a ResourceFlavor that names it (topologyName needs at least one nodeLabel), and each Node
  with only those labels, for `kubectl apply` to merge into the nodes. kueue.x-k8s.io/v1beta1 for
  0.14 (the first to serve Topology as v1beta1; still served, deprecated, from 0.16), v1beta2 from
  0.15 (the storage version from 0.16).
* Volcano (topology.volcano.sh/v1alpha1 HyperNode; volcano-sh/apis hypernode_types.go): tier 1 a
  rack (its hosts by exactMatch), tier 2 a zone (its racks), tier 3 the ATSW layer (its zones);
  tier 1 is the closest to the nodes, and HyperNode members are matched by exactMatch only. Each
  tier's name (`tierName`) only from 1.14: 1.12 and 1.13 refuse the field.
* topograph (NVIDIA/topograph docs/modeling.md, pkg/models/model.go, 1.0 on): `switches` (child
  switches per switch) and `blocks` (each rack switch's nodes), the model its simulation providers
  load (`modelFileName`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from netgen.scheduler.hostlist import compress
from netgen.scheduler.model import SchedulerTopology
from netgen.scheduler.versions import KUEUE, KUEUE_V1BETA2, TOPOGRAPH, VOLCANO, VOLCANO_TIER_NAME, Release

LABEL_PREFIX = "netgen.io"
ZONE_LABEL = f"{LABEL_PREFIX}/aizone"
RACK_LABEL = f"{LABEL_PREFIX}/rtsw"
FABRIC_LABEL = f"{LABEL_PREFIX}/fabric"
HOSTNAME_LABEL = "kubernetes.io/hostname"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")  # Kubernetes label values, <= 63


# An object's metadata.name (Node, Topology, ResourceFlavor, HyperNode): a DNS subdomain name as
# RFC 1123 defines it, which the API server checks (Kubernetes docs, "Object Names and IDs"):
# <= 253 characters, lower-case letters, digits, '-' and '.', each dot-separated part starting and
# ending with a letter or digit.
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_OBJECT_NAME = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")


def object_name(value: str, what: str) -> str:
    """`value` as a Kubernetes object name, or ValueError saying which rule it breaks."""
    if len(value) > 253 or not _OBJECT_NAME.match(value):
        raise ValueError(f"{what} {value!r} is not a valid Kubernetes object name (a DNS subdomain name:"
                         " <= 253 characters, lower-case letters, digits, '-' and '.', each part between dots"
                         " starting and ending with a letter or digit)")
    return value


def fabric_object_name(fabric: str) -> str:
    """The name of the objects that stand for the whole fabric (Kueue's Topology and ResourceFlavor,
    and the fabric label's value): the fabric's name lower-cased with '_' as '-', since a fabric name
    may hold capitals and underscores and an object name may not."""
    return label_value(object_name(fabric.lower().replace("_", "-"), f"fabric name {fabric!r} as"))


def label_value(value: str) -> str:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        raise ValueError(f"{value!r} is not a valid Kubernetes label value (<= 63 characters: letters, digits,"
                         " '-', '_', '.', starting and ending with a letter or digit)")
    return value


def _dump(documents: list[dict[str, Any]], header: str) -> str:
    return header + yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False)


def kueue(topo: SchedulerTopology, release: Release = KUEUE.oldest) -> str:
    name = fabric_object_name(topo.fabric)
    api = "kueue.x-k8s.io/v1beta2" if release >= KUEUE_V1BETA2 else "kueue.x-k8s.io/v1beta1"
    docs: list[dict[str, Any]] = [
        {"apiVersion": api, "kind": "Topology", "metadata": {"name": name},
         "spec": {"levels": [{"nodeLabel": ZONE_LABEL}, {"nodeLabel": RACK_LABEL}, {"nodeLabel": HOSTNAME_LABEL}]}},
        {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": name},
         "spec": {"nodeLabels": {FABRIC_LABEL: name}, "topologyName": name}},
    ]
    for zone in topo.zones:
        for rack in zone.racks:
            for host in rack.hosts:
                labels = {FABRIC_LABEL: name, ZONE_LABEL: label_value(zone.switch),
                          RACK_LABEL: label_value(rack.switch)}
                docs.append({"apiVersion": "v1", "kind": "Node",
                             "metadata": {"name": object_name(host, "host"), "labels": labels}})
    return _dump(docs, f"# netgen: Kueue topology-aware scheduling for fabric {topo.fabric}, Kueue"
                       f" {KUEUE.show(release)} and later: the Topology,\n# a ResourceFlavor naming it, and the node"
                       " labels (kubectl apply merges them into the nodes)\n")


def _hypernode(name: str, tier: int, tier_name: str | None, kind: str, members: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"tier": tier} if tier_name is None else {"tier": tier, "tierName": tier_name}
    spec["members"] = [{"type": kind, "selector": {"exactMatch": {"name": object_name(m, kind)}}} for m in members]
    return {"apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode",
            "metadata": {"name": object_name(name, "HyperNode")}, "spec": spec}


def volcano(topo: SchedulerTopology, release: Release = VOLCANO.oldest) -> str:
    named = release >= VOLCANO_TIER_NAME

    def tier_name(name: str) -> str | None:
        return name if named else None

    docs = []
    for zone in topo.zones:
        docs += [_hypernode(rack.switch, 1, tier_name("rack"), "Node", list(rack.hosts)) for rack in zone.racks]
    docs += [_hypernode(zone.switch, 2, tier_name("zone"), "HyperNode", [r.switch for r in zone.racks])
             for zone in topo.zones]
    if topo.top is not None:
        docs.append(_hypernode(topo.top, 3, tier_name("aggregation"), "HyperNode", [z.switch for z in topo.zones]))
    return _dump(docs, f"# netgen: Volcano HyperNodes for fabric {topo.fabric} (tier 1 racks, 2 zones, 3 the ATSW"
                       f" layer), Volcano {VOLCANO.show(release)} and later\n")


def topograph(topo: SchedulerTopology, release: Release = TOPOGRAPH.oldest) -> str:
    switches: dict[str, Any] = {}
    if topo.top is not None:
        switches[topo.top] = {"switches": [z.switch for z in topo.zones]}
    for zone in topo.zones:
        switches[zone.switch] = {"switches": [r.switch for r in zone.racks]}
    blocks = [{"switch": rack.switch, "nodes": [compress(rack.hosts)]} for zone in topo.zones for rack in zone.racks]
    return (f"# netgen: NVIDIA topograph model of fabric {topo.fabric} (docs/modeling.md), topograph"
            f" {TOPOGRAPH.show(release)} and later: give it to a simulation provider as modelFileName\n"
            + yaml.safe_dump({"switches": switches, "blocks": blocks}, sort_keys=False, default_flow_style=False))
