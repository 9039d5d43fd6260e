"""The InfiniBand alternative's sizing and files (issue 35, items 1 and 2), figures worked by hand.

Small example: a zone is 4 racks x 2 hosts x 8 rails; 64-port NDR switches. Half the radix (32) is more
than the zone's 8 hosts, so a leaf per rail takes all 8 (8 down, 8 up). The RoCE CTSWs send 2 x 400G up
for 4 racks x 4 x 400G down: 1:8. Spine groups of all 8 rails with 2 spines: 4 links from each leaf to
each spine, 8 x 4 = 32 down, 32 / 8 = 4 up. Two groups (one a zone) of 2 x 4 = 8 core uplinks each;
a core takes 4 links of each group, so 2 cores. 16 + 4 + 2 = 22 switches, 128 + 128 + 16 = 272 cables,
and 8 x 400G = 3.2 Tb/s out of each zone: the RoCE zone's 4 CTSWs x 2 x 400G.

meta-24k: 192 racks x 2 hosts = 384 hosts a zone; 32 a leaf, 12 leaves a rail, 96 a zone. RoCE: 28 up for
192 down a CTSW. All 8 rails on one group would need spines of 8 x 12 x 32 / 32 = 96 down: too many. Four
rails: 32 spines of 48 down and 48 x 28 / 192 = 7 up (55 of 64 ports), two groups a zone, 64 spines a
zone. 16 groups of 224 uplinks; a core takes 4 of each group (16 x 4 = 64 ports): 56 cores. 768 + 512 +
56 = 1,336 switches; out of a zone 64 x 7 x 400G = 179.2 Tb/s, the RoCE zone's 16 x 28 x 400G.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from netgen.checks import load_and_check
from netgen.infiniband.files import build, ibsim_net, partitions_conf
from netgen.intent.infiniband import IbPartition
from netgen.topology.infiniband import IbCableTier, IbFabric, IbTier
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

META = SMALL.parent.parent / "meta-24k" / "fabric.yaml"


def plan(path: Path) -> IbFabric:
    _, ctx, _ = load_and_check(path)
    ib = ctx.infiniband
    assert ib is not None
    return ib


@pytest.fixture(scope="module")
def small() -> IbFabric:
    return plan(SMALL)


@pytest.fixture(scope="module")
def meta() -> IbFabric:
    return plan(META)


def tiers(ib: IbFabric) -> dict[str, int]:
    return dict(Counter(s.tier.value for s in ib.switches.values()))


def test_small_example_sizing(small: IbFabric) -> None:
    zone = small.sizing[0]
    assert (zone.hosts, zone.rails, zone.hosts_per_leaf, zone.leaves_per_rail) == (8, 8, 8, 1)
    assert (zone.rails_per_group, zone.spines_per_group, zone.links_leaf_spine) == (8, 2, 4)
    assert (zone.spine_down, zone.spine_up) == (32, 4)
    assert (small.cores, small.core_links_per_group) == (2, 4)
    assert tiers(small) == {"leaf": 16, "spine": 4, "core": 2}
    assert Counter(c.tier for c in small.cables) == {
        IbCableTier.HOST_LEAF: 128, IbCableTier.LEAF_SPINE: 128, IbCableTier.SPINE_CORE: 16}
    out_of_zone = zone.spines_per_group * zone.groups * zone.spine_up * small.link_speed_gbps
    assert out_of_zone == 4 * 2 * 400  # the RoCE zone's CTSW uplinks


def test_meta_sizing(meta: IbFabric) -> None:
    zone = meta.sizing[0]
    assert (zone.hosts_per_leaf, zone.leaves_per_rail, zone.leaves) == (32, 12, 96)
    assert (zone.rails_per_group, zone.groups, zone.spines_per_group, zone.links_leaf_spine) == (4, 2, 32, 1)
    assert (zone.spine_down, zone.spine_up) == (48, 7)
    assert (meta.cores, meta.core_links_per_group) == (56, 4)
    assert tiers(meta) == {"leaf": 768, "spine": 512, "core": 56}
    assert len(meta.hcas) == 24_576
    assert zone.spines * zone.spine_up * meta.link_speed_gbps == 16 * 28 * 400  # 179.2 Tb/s, as RoCE


@pytest.mark.parametrize("which", ["small", "meta"])
def test_every_port_once_and_within_the_radix(which: str, request: pytest.FixtureRequest) -> None:
    ib: IbFabric = request.getfixturevalue(which)
    ends = Counter((c.lower, c.lower_port) for c in ib.cables) + Counter((c.upper, c.upper_port) for c in ib.cables)
    assert max(ends.values()) == 1
    for (node, port) in ends:
        limit = ib.switches[node].ports if node in ib.switches else 1
        assert 1 <= port <= limit, (node, port)
    guids = [s.guid for s in ib.switches.values()] + [h.guid for h in ib.hcas] + [h.port_guid for h in ib.hcas]
    assert len(set(guids)) == len(guids)
    # a leaf's hosts all sit on its rail; every leaf has as many uplinks as host ports (non-blocking)
    per_leaf = Counter(c.upper for c in ib.cables if c.tier is IbCableTier.HOST_LEAF)
    up_leaf = Counter(c.lower for c in ib.cables if c.tier is IbCableTier.LEAF_SPINE)
    hosts_per_leaf = ib.sizing[0].hosts_per_leaf
    assert set(per_leaf.values()) == set(up_leaf.values()) == {hosts_per_leaf}
    rail_of = {h.node: h.nic for h in ib.hcas}
    for cable in ib.cables:
        if cable.tier is IbCableTier.HOST_LEAF:
            assert ib.switches[cable.upper].rails == (rail_of[cable.lower],)


def test_every_core_has_the_same_links_to_every_spine_group(meta: IbFabric) -> None:
    links: Counter[tuple[str, tuple[int | None, int | None]]] = Counter()
    for cable in meta.cables:
        if cable.tier is IbCableTier.SPINE_CORE:
            spine = meta.switches[cable.lower]
            links[(cable.upper, (spine.zone, spine.group))] += 1
    assert len(links) == 56 * 16 and set(links.values()) == {4}


def test_a_slice_keeps_the_whole_fabrics_ports(meta: IbFabric) -> None:
    part = meta.slice({1}, racks=16)
    assert len(part.hcas) == 16 * 2 * 8
    assert tiers(part) == {"leaf": 8, "spine": 64, "core": 56}  # 32 hosts: the first leaf of every rail
    whole = {(c.lower, c.lower_port, c.upper, c.upper_port) for c in meta.cables}
    assert {(c.lower, c.lower_port, c.upper, c.upper_port) for c in part.cables} <= whole


def test_ibsim_net_file(small: IbFabric) -> None:
    text = ibsim_net(small)
    records = [r for r in text.split("\n\n") if "Switch" in r or "Hca" in r]
    assert len(records) == 22 + 128
    first = records[0].splitlines()
    assert first[1] == 'Switch 64 "ibcore01"'  # the SM's port: the first root
    assert first[0] == f"switchguid=0x{small.switches['ibcore01'].guid:016x}"
    assert 'Hca 1 "z01-r001-h01 mlx5_0"' in text
    # both ends of every cable are listed
    assert text.count('"z01-g1-spine01"[1]') == 1 and '[1] "z01-r1-leaf01"[9]' in text


def test_partitions(small: IbFabric, tmp_path: Path) -> None:
    _, ctx, _ = load_and_check(SMALL)
    assert partitions_conf(ctx.fabric, small).splitlines()[1:] == ["Default=0x7fff, ipoib : ALL=full ;"]
    ib = ctx.fabric.infiniband
    assert ib is not None
    tenants = ctx.fabric.model_copy(update={"infiniband": ib.model_copy(update={"partitions": [
        IbPartition(name="tenant-a", pkey=0x10, zones=[1]), IbPartition(name="tenant-b", pkey=0x20, zones=[2])]})})
    lines = partitions_conf(tenants, small).splitlines()
    assert lines[1] == "Default=0x7fff, ipoib : ALL=limited, SELF=full ;"
    assert lines[2] == "tenant-a=0x0010 : SELF=full,"
    members = lines[3:3 + 64]
    assert all(line.strip().endswith(("=full,", "=full ;")) for line in members)
    assert members[-1].endswith(" ;") and lines[3 + 64] == "tenant-b=0x0020 : SELF=full,"


def test_cli_writes_the_files(tmp_path: Path) -> None:
    result = run_cli("infiniband", str(SMALL), "-o", str(tmp_path / "ib"), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["infiniband"]["switches"] == {"leaf": 16, "spine": 4, "core": 2}
    out = tmp_path / "ib"
    conf = (out / "opensm" / "opensm.conf").read_text().splitlines()
    assert "routing_engine ftree" in conf and "root_guid_file /etc/opensm/root_guids" in conf
    assert (out / "opensm" / "root_guids").read_text().split() == [
        f"0x{s.guid:016x}" for s in plan(SMALL).tier(IbTier.CORE)]
    assert len((out / "opensm" / "cn_guids").read_text().split()) == 128
    env = (out / "hosts" / "nccl-ib.env").read_text()
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1\n" in env
    assert "NCCL_IB_SL=0\n" in env and "NCCL_IB_TC" not in env.split("#")[-1]
    rows = list(csv.DictReader(io.StringIO((out / "cabling" / "cables.csv").read_text())))
    assert len(rows) == 272


def test_opensm_conf_keys_are_opensms(tmp_path: Path) -> None:
    """Every key netgen writes is one OpenSM's own template has (`opensm -c`), when OpenSM is here."""
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    if shutil.which("opensm") is None:
        pytest.skip("needs opensm (apt-get install opensm)")
    template = tmp_path / "template.conf"
    subprocess.run(["opensm", "-c", str(template)], capture_output=True, check=False, timeout=60)
    known = {line.split()[0] for line in template.read_text().splitlines() if line and not line.startswith("#")}
    _, ctx, _ = load_and_check(SMALL)
    files = build(ctx.fabric, ctx.infiniband)
    conf = next(f for f in files.files["opensm"] if f.name == "opensm.conf").content
    written = {line.split()[0] for line in conf.splitlines() if line and not line.startswith("#")}
    assert written and written <= known, written - known


def test_without_a_section_or_with_a_bad_directory(tmp_path: Path) -> None:
    result = run_cli("infiniband", str(SMALL), "--opensm-dir", "etc/opensm\nrouting_engine minhop")
    assert result.exit_code == 2 and "--opensm-dir must be an absolute path" in result.output
    import yaml  # noqa: PLC0415

    data = yaml.safe_load(SMALL.read_text())
    del data["infiniband"]
    (tmp_path / "fabric.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    for item in SMALL.parent.iterdir():
        if item.name != "fabric.yaml" and not (tmp_path / item.name).exists():
            (tmp_path / item.name).symlink_to(item)
    result = run_cli("infiniband", str(tmp_path / "fabric.yaml"), "--json")
    assert result.exit_code == 2
    assert "no infiniband: section" in json.loads(result.stdout)["error"]


def test_scheduler_topology_of_the_infiniband_alternative() -> None:
    """Hosts under the leaves they share on every rail: the small example's 8 hosts a zone are one leaf
    group; meta-24k's 384 a zone are 12 groups of 32 (16 racks each). Every exporter takes it."""
    result = run_cli("scheduler", str(SMALL), "--format", "slurm", "--network", "infiniband")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    hosts = ",".join(f"z01-r00{rack}-h[01-02]" for rack in range(1, 5))
    assert f"SwitchName=z01-leaves01 Nodes={hosts}" in lines
    assert lines[-1] == "SwitchName=ibcore Switches=z[01-02]" and "InfiniBand" in lines[1]
    for fmt in ("slurm-block", "kueue", "volcano", "topograph"):
        payload = json.loads(run_cli("scheduler", str(SMALL), "--format", fmt, "--network", "infiniband",
                                     "--json").stdout)
        assert (payload["ok"], payload["racks"], payload["hosts"]) == (True, 2, 16)
    payload = json.loads(run_cli("scheduler", str(META), "--format", "slurm", "--network", "infiniband",
                                 "--json").stdout)
    assert (payload["zones"], payload["racks"], payload["hosts"]) == (8, 96, 3072)


def test_one_rail_a_group_keeps_every_rail_on_its_own_spines() -> None:
    """rails_per_group 1 on the small example: 8 groups a zone, each 1 leaf (8 down, 8 up) with 2 spines of
    4 down and 1 up (1:8 would be 0.5: rounded up to a whole link, so 1:4); 32 spines, 16 groups of 2 uplinks:
    a core takes 1 link of each group (16 ports), 2 cores."""
    _, ctx, _ = load_and_check(SMALL)
    ib = ctx.fabric.infiniband
    assert ib is not None
    from netgen.topology.infiniband import plan_infiniband  # noqa: PLC0415

    fabric = ctx.fabric.model_copy(update={"infiniband": ib.model_copy(update={"rails_per_group": 1})})
    plan_ = plan_infiniband(fabric, ctx.catalog)
    zone = plan_.sizing[0]
    assert (zone.rails_per_group, zone.groups, zone.spines_per_group, zone.spine_down, zone.spine_up) == (1, 8, 2, 4, 1)
    assert tiers(plan_) == {"leaf": 16, "spine": 32, "core": 2}
    assert (plan_.cores, plan_.core_links_per_group) == (2, 1)
    for spine in plan_.tier(IbTier.SPINE):
        assert len(spine.rails) == 1


def test_hosts_with_other_rail_counts_get_their_own_nccl_settings() -> None:
    """Zone 2's hosts with 4 NICs: one NCCL file per rail count, each naming exactly its devices."""
    _, ctx, _ = load_and_check(SMALL)
    zones = [ctx.fabric.zones[0], ctx.fabric.zones[1].model_copy(update={"nics_per_host": 4})]
    from netgen.infiniband.files import nccl_envs  # noqa: PLC0415

    files = {f.name: f.content for f in nccl_envs(ctx.fabric.model_copy(update={"zones": zones}))}
    assert sorted(files) == ["nccl-ib-4rails.env", "nccl-ib-8rails.env"]
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1\n" in files["nccl-ib-4rails.env"]
