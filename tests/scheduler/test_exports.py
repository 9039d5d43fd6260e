"""The other scheduler exports, read back as their consumers would: Slurm blocks under the block
plugin's alignment rule, the Kueue and Volcano objects, topograph's model, and hostlist expressions."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.scheduler.hostlist import compress, expand
from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.render
META = ROOT / "inventory" / "meta-24k"


def _export(fabric, fmt: str, *options: str) -> str:
    result = run_cli("scheduler", str(fabric), "--format", fmt, *options)
    assert result.exit_code == 0, result.output
    return result.stdout


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["z01-r001-h", "z02-r010-h", "atsw", "x"]), st.integers(0, 300),
                          st.sampled_from([1, 2, 3])), min_size=1, max_size=30))
def test_hostlist_expands_to_exactly_the_names(parts):
    names = list(dict.fromkeys(f"{prefix}{n:0{width}d}" for prefix, n, width in parts))
    assert sorted(expand(compress(names))) == sorted(names)


def test_hostlist_ranges_keep_their_width():
    assert compress([f"z01-rtsw{i:03d}" for i in range(1, 193)]) == "z01-rtsw[001-192]"
    assert compress(["z01-r001-h01", "z01-r001-h02"]) == "z01-r001-h[01-02]"


def _blocks(text: str) -> tuple[list[tuple[str, list[str]]], list[int]]:
    blocks, sizes = [], []
    for line in text.splitlines():
        if line.startswith("BlockName="):
            fields = dict(f.split("=", 1) for f in line.split())
            blocks.append((fields["BlockName"], expand(fields["Nodes"]) if "Nodes" in fields else []))
        elif line.startswith("BlockSizes="):
            sizes = [int(s) for s in line.split("=", 1)[1].split(",")]
    return blocks, sizes


@pytest.mark.parametrize(("fabric", "racks", "padded"), [(SMALL, 4, 4), (META, 192, 256)])
def test_slurm_blocks_align_every_zone_to_a_zone_level_block(fabric, racks, padded):
    """Slurm forms a level-k block from base blocks [j*2^k, (j+1)*2^k) in file order; with every zone
    padded to the same power of two (empty blocks: Slurm 25.05 on), each zone-level block holds
    exactly one zone's hosts. Earlier releases: test_versions.py."""
    blocks, sizes = _blocks(_export(fabric, "slurm-block", "--slurm-version", "25.05"))
    base = sizes[0]
    assert sizes == [base, base * padded]
    for start in range(0, len(blocks), padded):
        group = blocks[start:start + padded]
        hosts = [h for _, nodes in group for h in nodes]
        assert len({h.split("-")[0] for h in hosts}) == 1  # one zone
        assert len([b for b in group if b[1]]) == racks
        assert all(len(nodes) >= base for _, nodes in group if nodes)


def test_a_smaller_zone_is_padded_to_the_largest_zones_power_of_two(small_data, write_fabric):
    small_data["zones"][1]["racks"] = 3
    small_data["aggregation"].pop("expected_oversubscription", None)
    small_data["zones"][0]["racks"] = 5
    blocks, sizes = _blocks(_export(write_fabric(small_data), "slurm-block", "--slurm-version", "25.05"))
    assert sizes == [2, 16]  # 5 racks -> 8 base blocks per zone
    assert [name for name, nodes in blocks[8:16] if not nodes] == [f"z02-pad{n:04d}" for n in range(4, 9)]


def test_kueue_topology_flavor_and_node_labels():
    docs = list(yaml.safe_load_all(_export(SMALL, "kueue", "--kueue-version", "0.15")))
    topology, flavor, *nodes = docs
    assert topology["apiVersion"] == "kueue.x-k8s.io/v1beta2" and topology["kind"] == "Topology"
    assert [lv["nodeLabel"] for lv in topology["spec"]["levels"]] == [
        "netgen.io/aizone", "netgen.io/rtsw", "kubernetes.io/hostname"]
    assert flavor["kind"] == "ResourceFlavor" and flavor["spec"]["topologyName"] == topology["metadata"]["name"]
    assert flavor["spec"]["nodeLabels"]
    assert len(nodes) == 16 and all(n["kind"] == "Node" for n in nodes)
    first = {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes}["z02-r003-h02"]
    assert first["netgen.io/aizone"] == "z02" and first["netgen.io/rtsw"] == "z02-rtsw003"


def test_volcano_hypernodes_nest_racks_zones_and_the_atsw_layer():
    docs = list(yaml.safe_load_all(_export(SMALL, "volcano")))
    assert {d["apiVersion"] for d in docs} == {"topology.volcano.sh/v1alpha1"}
    by_tier: dict[int, list[dict]] = {}
    for doc in docs:
        by_tier.setdefault(doc["spec"]["tier"], []).append(doc)
    assert sorted(by_tier) == [1, 2, 3] and len(by_tier[1]) == 8 and len(by_tier[2]) == 2 and len(by_tier[3]) == 1
    names = {d["metadata"]["name"] for d in docs}
    for doc in docs:
        kinds = {m["type"] for m in doc["spec"]["members"]}
        assert kinds == ({"Node"} if doc["spec"]["tier"] == 1 else {"HyperNode"})
        for member in doc["spec"]["members"]:
            assert set(member["selector"]) == {"exactMatch"}
            if member["type"] == "HyperNode":
                assert member["selector"]["exactMatch"]["name"] in names


def test_topograph_model_has_switches_and_blocks_only():
    model = yaml.safe_load(_export(SMALL, "topograph"))
    assert set(model) == {"switches", "blocks"}
    assert model["switches"]["atsw"]["switches"] == ["z01", "z02"]
    assert model["switches"]["z01"]["switches"] == [f"z01-rtsw00{n}" for n in range(1, 5)]
    assert model["blocks"][0] == {"switch": "z01-rtsw001", "nodes": ["z01-r001-h[01-02]"]}
    leaves = {b["switch"] for b in model["blocks"]}
    assert leaves == {s for parent in model["switches"].values() for s in parent["switches"] if "-rtsw" in s}


def test_scheduler_json_and_file_output(tmp_path):
    target = tmp_path / "topology.conf"
    result = run_cli("scheduler", str(SMALL), "--format", "slurm", "-o", str(target), "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc == {"ok": True, "exit_code": 0, "format": "slurm", "scheduler": "Slurm", "version": "24.05",
                   "output": str(target), "zones": 2, "racks": 8, "hosts": 16}
    assert target.read_text().count("SwitchName=") == 11
    assert [p.name for p in tmp_path.iterdir()] == ["topology.conf"]  # no temporary file left


_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")  # RFC 1123 subdomain


@pytest.mark.parametrize("fmt", ["kueue", "volcano"])
def test_object_names_are_ones_the_api_server_takes(small_data, write_fabric, fmt):
    """A fabric name may hold capitals and underscores; a Kubernetes object name may not (kubectl
    apply refuses `metadata.name: Small_Lab`). The objects standing for the fabric take its name
    lower-cased with '-' for '_', and the fabric label the same value, so the flavor still selects."""
    small_data["name"] = "Small_Lab.A"
    docs = list(yaml.safe_load_all(_export(write_fabric(small_data), fmt)))
    for doc in docs:
        assert _OBJECT_NAME.match(doc["metadata"]["name"]), doc["metadata"]["name"]
        assert len(doc["metadata"]["name"]) <= 253
    if fmt == "kueue":
        topology, flavor, *nodes = docs
        assert topology["metadata"]["name"] == flavor["metadata"]["name"] == "small-lab.a"
        assert flavor["spec"]["nodeLabels"] == {"netgen.io/fabric": "small-lab.a"}
        assert {n["metadata"]["labels"]["netgen.io/fabric"] for n in nodes} == {"small-lab.a"}


def test_a_fabric_name_no_object_can_take_is_refused_with_exit_2(small_data, write_fabric):
    small_data["name"] = "lab..a"  # an empty part between dots: no lower-casing makes it a name
    result = run_cli("scheduler", str(write_fabric(small_data)), "--format", "kueue", "--json")
    assert result.exit_code == 2, result.output
    assert "not a valid Kubernetes object name" in json.loads(result.stdout)["error"]
