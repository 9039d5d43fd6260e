"""Scheduler files written for a release (`--slurm-version`, `--kueue-version`, `--volcano-version`,
`--topograph-version`) are read by that release and every later one checked, as each reads them.

None of these releases runs here (Debian 12 ships Slurm 22.05, which has no topology/block; there is no
Kubernetes API server), so each is checked against its source instead:

* Slurm 24.05, 24.11, 25.05, 25.11, 26.05: the block plugin's topology.conf reader re-stated from
  src/plugins/topology/block/block_record.c at each release tag (_parse_block, _read_topo_file,
  block_record_validate), and its block alignment (block_record_validate's aggregation from 24.11;
  eval_nodes_block.c's base block i in block i / 2^k in 24.05).
* Kueue 0.14-0.19 and Volcano 1.12-1.15: the objects against the openAPIV3Schema of the CRDs those
  releases ship (data/crd_schemas.json, made by data/extract_crd_schemas.py from the release tags), as
  the API server's strict field validation applies it (unknown fields, types, required, patterns,
  lengths, enums; the CEL rules these objects meet, kubernetes.io/hostname as the last level and a
  nodeLabel beside topologyName, are asserted in test_exports.py).
* topograph 1.0: the model as pkg/models/model.go (NewModelFromData) reads it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from netgen.scheduler.hostlist import expand
from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.render
META = ROOT / "inventory" / "meta-24k"
CRDS = json.loads((Path(__file__).parent / "data" / "crd_schemas.json").read_text())

SLURM_RELEASES = [(24, 5), (24, 11), (25, 5), (25, 11), (26, 5)]
EMPTY_BLOCKS = (25, 5)  # 700ca4f85f "Support for topology/block with gaps", first in slurm-25-05-0-1


def _export(fabric: Path, fmt: str, *options: str) -> str:
    result = run_cli("scheduler", str(fabric), "--format", fmt, *options)
    assert result.exit_code == 0, result.output
    return result.stdout


def _release(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


# --- Slurm topology/block ----------------------------------------------------------------------------


def _slurm_block_file(text: str, release: tuple[int, int]) -> tuple[list[tuple[str, list[str]]], list[int], list[str]]:
    """(blocks in file order, BlockSizes in nodes, what `release`'s block plugin fatals on)."""
    blocks: list[tuple[str, list[str]]] = []
    sizes: list[int] = []
    fatal: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, rest = line.partition("=")
        if key == "BlockName":  # _parse_block: the name, then only Nodes=
            name, *attributes = rest.split()
            fields = dict(a.split("=", 1) for a in attributes)
            fatal += [f"unrecognized key: {k}" for k in fields if k != "Nodes"]
            if "Nodes" not in fields and release < EMPTY_BLOCKS:
                fatal.append(f"block {name} hasn't got nodes")
            blocks.append((name, expand(fields["Nodes"]) if "Nodes" in fields else []))
        elif key == "BlockSizes":  # _read_topo_file
            sizes = [int(s) for s in rest.split(",")]
        else:  # s_p_parse_file without PARSE_FLAGS_IGNORE_NEW: an unknown key fails the file
            fatal.append(f"unrecognized key: {key}")
    if fatal:  # s_p_parse_file failed: "something wrong with opening/reading", nothing further checked
        return blocks, sizes, fatal
    if sizes:
        base = sizes[0]  # bblock_node_cnt
        for size in sizes:
            ratio = size // base if base > 0 and size % base == 0 else 0
            if ratio < 1 or ratio & (ratio - 1) or ratio.bit_length() - 1 > 15:
                fatal.append(f"Invalid BlockSizes value: {size}")
        if release < EMPTY_BLOCKS:  # block_record_validate before 25.05
            fatal += [f"Block configuration ({name}) children count lower than bblock_node_cnt"
                      for name, nodes in blocks if len(nodes) < base]
    names = [name for name, _ in blocks]
    fatal += [f"Block ({name}) has already been defined" for name in {n for n in names if names.count(n) > 1}]
    if not any(nodes for _, nodes in blocks):
        fatal.append("blocks contain no nodes")
    return blocks, sizes, fatal


def _aggregated_blocks(count: int, sizes: list[int]) -> list[range]:
    """The higher-level blocks the plugin forms from `count` base blocks, as block_record_validate does
    from 24.11 (24.05's eval_nodes_block.c takes base block i into block i / 2^k: the same runs)."""
    levels = sorted({(size // sizes[0]).bit_length() - 1 for size in sizes})
    block_sizes: list[int] = []
    for level in levels:
        block_sizes.append(1 << level)
        if 1 << level >= count:
            break
    runs = []
    for j in range(1, len(block_sizes)):
        for start in range(0, count, block_sizes[j]):
            remaining = count - start
            if block_sizes[j] > remaining and block_sizes[j - 1] >= remaining:
                continue
            runs.append(range(start, min(start + block_sizes[j], count)))
    return runs


def _zone(host: str) -> str:
    return host.split("-", 1)[0]


def _uneven(small_data: dict[str, Any], write_fabric: Any, racks: tuple[int, int]) -> Path:
    small_data["aggregation"].pop("expected_oversubscription", None)
    for zone, count in zip(small_data["zones"], racks, strict=True):
        zone["racks"] = count
    return Path(write_fabric(small_data))


FABRICS = {"small": (4, 4), "meta-24k": (192,) * 8, "zones of 5 and 3 racks": (5, 3),
           "zones of 4 and 6 racks": (4, 6)}


@pytest.fixture
def fabric_of(small_data, write_fabric):
    def make(name: str) -> Path:
        if name == "small":
            return SMALL
        if name == "meta-24k":
            return META
        return _uneven(small_data, write_fabric, FABRICS[name])
    return make


@pytest.mark.parametrize("target", [f"{m}.{n:02d}" for m, n in SLURM_RELEASES])
@pytest.mark.parametrize("name", list(FABRICS))
def test_slurm_block_files_load_on_their_release_and_every_later_one(fabric_of, name, target):
    """Nothing a release from the target on fatals on, every host in exactly one base block, and no
    higher-level block holding hosts of two zones."""
    fabric = fabric_of(name)
    text = _export(fabric, "slurm-block", "--slurm-version", target)
    assert f"Slurm {target} and later" in text.splitlines()[0]
    for release in [r for r in SLURM_RELEASES if r >= _release(target)]:
        blocks, sizes, fatal = _slurm_block_file(text, release)
        assert fatal == [], (release, fatal[:5])
        hosts = [h for _, nodes in blocks for h in nodes]
        assert len(hosts) == len(set(hosts))
        for run in _aggregated_blocks(len(blocks), sizes):
            zones = {_zone(h) for i in run for h in blocks[i][1]}
            assert len(zones) <= 1, (release, [blocks[i][0] for i in run][:3], zones)


def test_the_default_slurm_block_target_is_24_05_with_no_empty_block():
    """meta-24k's zones of 192 racks: 24.05-24.11 refuse the 512 empty blocks padding them to 256
    would need, so the zone-level block is 64 racks, three to a zone, each inside its zone."""
    text = _export(META, "slurm-block")
    assert "Slurm 24.05 and later" in text.splitlines()[0]
    blocks, sizes, fatal = _slurm_block_file(text, (24, 5))
    assert fatal == []
    assert len(blocks) == 1536 and all(nodes for _, nodes in blocks)
    assert sizes == [2, 128]
    runs = _aggregated_blocks(len(blocks), sizes)
    assert len(runs) == 24 and {len(r) for r in runs} == {64}
    assert [len({_zone(h) for i in run for h in blocks[i][1]}) for run in runs] == [1] * 24


def test_from_25_05_every_zone_is_padded_to_one_zone_level_block():
    text = _export(META, "slurm-block", "--slurm-version", "25.05")
    blocks, sizes, fatal = _slurm_block_file(text, EMPTY_BLOCKS)
    assert fatal == [] and sizes == [2, 512]
    assert len([name for name, nodes in blocks if not nodes]) == 8 * (256 - 192)
    runs = _aggregated_blocks(len(blocks), sizes)
    assert [sorted({_zone(h) for i in run for h in blocks[i][1]}) for run in runs] == [
        [f"z{n:02d}"] for n in range(1, 9)]
    # the 25.05 file is what 24.11 refuses: 512 blocks without nodes
    assert len(_slurm_block_file(text, (24, 11))[2]) == 512


@pytest.mark.parametrize(("name", "sizes"), [("zones of 5 and 3 racks", [2]), ("zones of 4 and 6 racks", [2, 8]),
                                             ("small", [2, 8])])
def test_without_padding_the_zone_level_block_is_the_largest_power_of_two_on_every_boundary(fabric_of, name,
                                                                                          sizes):
    """A boundary after 5 racks: no power of two above 1 divides it, so racks are the only level; after
    4 racks: blocks of 4, the second zone's 6 racks a block of 4 and a short last one of 2."""
    blocks, found, _ = _slurm_block_file(_export(fabric_of(name), "slurm-block", "--slurm-version", "24.11"), (24, 11))
    assert found == sizes
    racks = FABRICS[name]
    expected = math.gcd(*racks[:-1]) & -math.gcd(*racks[:-1])
    assert (found[-1] // found[0] if len(found) > 1 else 1) == expected
    assert len(blocks) == sum(racks)


# --- Kueue and Volcano against their releases' CRD schemas -------------------------------------------


def _schema_errors(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    """What the API server's structural schema validation (strict field validation) says of `value`."""
    if schema.get("x-kubernetes-int-or-string"):
        return [] if isinstance(value, int | str) and not isinstance(value, bool) else [f"{where}: not int or string"]
    kind = schema.get("type")
    errors: list[str] = []
    if kind == "object":
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if properties is not None and key in properties:
                errors += _schema_errors(item, properties[key], f"{where}.{key}")
            elif isinstance(extra, dict):
                errors += _schema_errors(item, extra, f"{where}.{key}")
            elif properties is not None and not schema.get("x-kubernetes-preserve-unknown-fields"):
                errors.append(f'{where}: unknown field "{key}"')
        errors += [f"{where}.{key}: Required value" for key in schema.get("required", []) if key not in value]
    elif kind == "array":
        if not isinstance(value, list):
            return [f"{where}: not an array"]
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{where}: {len(value)} items")
        for index, item in enumerate(value):
            errors += _schema_errors(item, schema.get("items", {}), f"{where}[{index}]")
    elif kind == "string":
        if not isinstance(value, str):
            return [f"{where}: not a string"]
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            errors.append(f"{where}: length {len(value)}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{where}: does not match {schema['pattern']}")
        if "enum" in schema and value not in schema["enum"]:
            errors.append(f"{where}: not one of {schema['enum']}")
    elif kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{where}: not an integer"]
        if value < schema.get("minimum", value) or value > schema.get("maximum", value):
            errors.append(f"{where}: out of range")
    return errors


def _api_server_errors(docs: list[dict[str, Any]], scheduler: str, release: str) -> list[str]:
    served = CRDS["releases"][scheduler][release]
    errors: list[str] = []
    for doc in docs:
        if doc["kind"] == "Node":  # a core object: its labels are checked in test_exports.py
            continue
        key = f"{doc['apiVersion']} {doc['kind']}"
        if key not in served:
            errors.append(f"{doc['metadata']['name']}: {key} is not served by {scheduler} {release}")
            continue
        errors += _schema_errors(doc, CRDS["schemas"][served[key]], doc["metadata"]["name"])
    return errors


KUEUE_RELEASES = sorted(CRDS["releases"]["kueue"], key=_release)
VOLCANO_RELEASES = sorted(CRDS["releases"]["volcano"], key=_release)


@pytest.mark.parametrize(("scheduler", "target"), [("kueue", t) for t in KUEUE_RELEASES]
                         + [("volcano", t) for t in VOLCANO_RELEASES])
def test_kubernetes_objects_are_taken_by_their_release_and_every_later_one(scheduler, target):
    docs = list(yaml.safe_load_all(_export(SMALL, scheduler, f"--{scheduler}-version", target)))
    for release in [r for r in CRDS["releases"][scheduler] if _release(r) >= _release(target)]:
        assert _api_server_errors(docs, scheduler, release) == [], (target, release)


def test_volcano_tier_names_only_from_1_14():
    """meta-24k's 1,545 HyperNodes, each refused by 1.12 and 1.13 if it carries spec.tierName."""
    default = list(yaml.safe_load_all(_export(META, "volcano")))
    assert len(default) == 1545
    assert _api_server_errors(default, "volcano", "1.13") == []
    assert not any("tierName" in d["spec"] for d in default)
    named = list(yaml.safe_load_all(_export(SMALL, "volcano", "--volcano-version", "1.14")))
    assert {d["spec"]["tier"]: d["spec"]["tierName"] for d in named} == {1: "rack", 2: "zone", 3: "aggregation"}
    refused = _api_server_errors(named, "volcano", "1.13")
    assert len(refused) == len(named) and all('unknown field "tierName"' in e for e in refused)


def test_kueue_api_version_by_release():
    def api_versions(*options: str) -> set[str]:
        docs = yaml.safe_load_all(_export(SMALL, "kueue", *options))
        return {d["apiVersion"] for d in docs if d["kind"] != "Node"}

    assert api_versions() == {"kueue.x-k8s.io/v1beta1"}  # 0.14, the oldest supported
    assert api_versions("--kueue-version", "0.14.3") == {"kueue.x-k8s.io/v1beta1"}
    assert api_versions("--kueue-version", "0.15") == {"kueue.x-k8s.io/v1beta2"}
    assert api_versions("--kueue-version", "v0.19.2") == {"kueue.x-k8s.io/v1beta2"}
    docs = list(yaml.safe_load_all(_export(SMALL, "kueue", "--kueue-version", "0.15")))
    assert _api_server_errors(docs, "kueue", "0.14") == [
        f"small-lab: kueue.x-k8s.io/v1beta2 {kind} is not served by kueue 0.14" for kind in ("Topology",
                                                                                             "ResourceFlavor")]


# --- topograph 1.0 -------------------------------------------------------------------------------------


def test_topograph_model_loads_as_topograph_1_0_reads_it():
    """pkg/models/model.go at v1.0.0: UnmarshalYAML reads only `switches` and `blocks` (leaf switches
    created from their parents' lists), completeCapacityBlocks needs a node in every block and a block's
    switch to exist and a node in one block only, buildSwitchMaps one parent per switch; every node's
    network layers run from its rack switch to the top."""
    model = yaml.safe_load(_export(META, "topograph", "--topograph-version", "1.0"))
    assert set(model) == {"switches", "blocks"}
    switches = dict(model["switches"])
    for parent in list(switches.values()):
        for child in parent.get("switches", []):
            switches.setdefault(child, {})
    parents: dict[str, str] = {}
    for name, switch in switches.items():
        for child in switch.get("switches", []):
            assert child not in parents, f"switch {child} has two parents"
            parents[child] = name
    seen: set[str] = set()
    for block in model["blocks"]:
        nodes = [n for part in block["nodes"] for n in expand(part)]
        assert nodes and block["switch"] in switches
        assert seen.isdisjoint(nodes)
        seen.update(nodes)
        layers = [block["switch"]]
        while layers[-1] in parents:
            layers.append(parents[layers[-1]])
        assert len(layers) == 3 and layers[-1] == "atsw"
    assert len(seen) == 3072


# --- the command line -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "option", "release", "reason"), [
    ("slurm-block", "--slurm-version", "23.11", "BlockLevels"),
    ("kueue", "--kueue-version", "0.13", "v1alpha1"),
    ("volcano", "--volcano-version", "1.11", "HyperNodes from 1.12"),
    ("topograph", "--topograph-version", "0.5", "capacity_blocks"),
])
def test_a_release_older_than_the_oldest_supported_is_refused_with_exit_2(fmt, option, release, reason):
    result = run_cli("scheduler", str(SMALL), "--format", fmt, option, release, "--json")
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)["error"]
    assert "not supported" in error and reason in error


@pytest.mark.parametrize("options", [("--format", "slurm-block", "--slurm-version", "latest"),
                                     ("--format", "kueue", "--slurm-version", "24.05"),
                                     ("--format", "volcano", "--kueue-version", "0.15")])
def test_a_malformed_or_misplaced_release_is_a_usage_error(options):
    result = run_cli("scheduler", str(SMALL), *options, "--json")
    assert result.exit_code == 2, result.output
    assert json.loads(result.stdout)["ok"] is False


def test_the_tree_format_takes_any_slurm_release():
    """topology/tree's lines are the same in every release; Debian 12's 22.05 loads them (test_slurm.py)."""
    assert _export(SMALL, "slurm", "--slurm-version", "22.05") == _export(SMALL, "slurm")


def test_help_states_each_minimum():
    result = run_cli("scheduler", "--help")
    text = " ".join(result.output.split())
    for words in ("--slurm-version", "--kueue-version", "--volcano-version", "--topograph-version",
                  "Slurm 24.05", "Kueue 0.14", "Volcano 1.12", "topograph 1.0"):
        assert words in text, words


def test_json_names_the_release_written_for(tmp_path):
    result = run_cli("scheduler", str(SMALL), "--format", "kueue", "--kueue-version", "0.16.2", "--json")
    doc = json.loads(result.stdout)
    assert (doc["scheduler"], doc["version"]) == ("Kueue", "0.16")
