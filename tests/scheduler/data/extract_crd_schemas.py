"""Rebuild crd_schemas.json: the openAPIV3Schema of every served version of the CRDs netgen's Kueue and
Volcano exports are applied against, at each release tag, from git mirrors of the upstream repositories
(descriptions dropped, identical schemas stored once). Not run by the tests; run it by hand when a
release is added:

    cd tests/scheduler/data && python extract_crd_schemas.py KUEUE_GIT_DIR VOLCANO_GIT_DIR > crd_schemas.json
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from typing import Any

import yaml

KUEUE_TAGS = ["v0.14.0", "v0.15.0", "v0.16.0", "v0.17.0", "v0.18.0", "v0.19.2"]
KUEUE_CRDS = [f"config/components/crd/bases/kueue.x-k8s.io_{kind}.yaml" for kind in ("topologies", "resourceflavors")]
VOLCANO_TAGS = ["v1.12.0", "v1.13.0", "v1.14.0", "v1.15.0"]
VOLCANO_CRDS = ["config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml"]


def _without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def main(kueue: str, volcano: str) -> None:
    schemas: dict[str, Any] = {}
    releases: dict[str, dict[str, dict[str, str]]] = {"kueue": {}, "volcano": {}}
    for scheduler, repo, tags, paths in (("kueue", kueue, KUEUE_TAGS, KUEUE_CRDS),
                                         ("volcano", volcano, VOLCANO_TAGS, VOLCANO_CRDS)):
        for tag in tags:
            served: dict[str, str] = {}
            for path in paths:
                text = subprocess.run(["git", "-C", repo, "show", f"{tag}:{path}"], capture_output=True, text=True,
                                      check=True).stdout
                crd = yaml.safe_load(text)
                for version in crd["spec"]["versions"]:
                    if not version.get("served"):
                        continue
                    schema = _without_descriptions(version["schema"]["openAPIV3Schema"])
                    key = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:12]
                    schemas[key] = schema
                    served[f"{crd['spec']['group']}/{version['name']} {crd['spec']['names']['kind']}"] = key
            releases[scheduler][tag.removeprefix("v").rsplit(".", 1)[0]] = served
    sources = {"kueue": f"kubernetes-sigs/kueue {', '.join(KUEUE_CRDS)} at {', '.join(KUEUE_TAGS)}",
               "volcano": f"volcano-sh/volcano {', '.join(VOLCANO_CRDS)} at {', '.join(VOLCANO_TAGS)}"}
    json.dump({"sources": sources, "releases": releases, "schemas": schemas}, sys.stdout, sort_keys=True, indent=None,
              separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
