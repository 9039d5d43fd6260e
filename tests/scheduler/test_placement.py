"""`netgen place`: the fewest zones, whole racks, ranks zone by zone; the ATSW figures against the
ring all-reduce algebra (X crossings x 2(R-1)/R x S) and the topology-blind baseline's exact E[X]."""

from __future__ import annotations

import json
import random

import pytest

from netgen.intent import load_fabric
from netgen.scheduler.model import scheduler_topology
from netgen.scheduler.placement import place, random_order_traffic, ring_traffic
from netgen.topology import expand
from tests.conftest import ROOT, SMALL, record_drains, run_cli

pytestmark = pytest.mark.render
META = ROOT / "inventory" / "meta-24k"
GIB = 1 << 30


@pytest.fixture(scope="module")
def meta():
    loaded = load_fabric(META)
    return loaded.fabric, scheduler_topology(loaded.fabric, expand(loaded.fabric, loaded.catalog))


def test_512_hosts_in_meta_24k_cross_the_atsw_the_least_the_zone_sizes_allow(meta):
    """A zone holds 384 hosts: 512 need two zones, so X = 2 is the minimum; the topology-blind
    placement takes the same 384 + 128 hosts but with random ranks E[X] = (512^2 - 384^2 - 128^2)/511."""
    doc = json.loads(run_cli("place", str(META), "--hosts", "512", "--json").stdout)
    assert doc["zones"] == {"1": 384, "2": 128} and doc["fewest_zones_possible"] == 2
    assert doc["whole_racks"] == 256 and doc["partial_racks"] == 0
    assert doc["atsw"]["crossings"] == 2
    gpus = 512 * 8
    assert doc["atsw"]["bytes_per_allreduce"] == round(2 * 2 * (gpus - 1) / gpus * GIB)
    naive = doc["naive"]["atsw"]
    assert naive["crossings"] == pytest.approx((512**2 - 384**2 - 128**2) / 511, abs=1e-3)  # 192.376
    assert naive["gib_per_allreduce"] == pytest.approx(192.376 * 2 * (gpus - 1) / gpus, abs=0.01)
    # 8 rails x 400G = 3.2 Tb/s per crossing; a zone's ATSW side: 16 CTSWs x 28 uplinks x 400G
    assert doc["atsw"]["atsw_demand_tbps"] == {"1": 3.2, "2": 3.2}
    assert naive["max_atsw_load"] > 1 > 50 * doc["atsw"]["max_atsw_load"]
    order = doc["rank_order"]
    assert len(order) == len(set(order)) == 512
    assert order[:3] == ["z01-r001-h01", "z01-r001-h02", "z01-r002-h01"] and order[-1] == "z02-r064-h02"


def test_one_zone_when_one_zone_holds_the_job(meta):
    fabric, topo = meta
    result = place(fabric, topo, 300)
    assert list(result.zones) == [1] and result.traffic.crossings == 0 and result.traffic.bytes_per_allreduce == 0


def test_the_free_list_is_respected_and_the_fullest_fitting_zone_taken(meta, tmp_path):
    _, topo = meta
    zone1 = [h for r in topo.zones[0].racks for h in r.hosts]
    zone3 = [h for r in topo.zones[2].racks for h in r.hosts]
    free = tmp_path / "free"
    # zone 1 has 100 free hosts, zone 3 all 384: a 96-host job fits both; zone 1 (fullest) keeps zone 3 whole
    free.write_text("\n".join(zone1[:100]) + "\n# the rest of zone 3\nz03-r[001-192]-h[01-02]\n")
    doc = json.loads(run_cli("place", str(META), "--hosts", "96", "--free", str(free), "--json").stdout)
    assert doc["zones"] == {"1": 96}
    assert set(doc["rank_order"]) <= set(zone1[:100])
    # a 200-host job fits zone 3 only
    doc = json.loads(run_cli("place", str(META), "--hosts", "200", "--free", str(free), "--json").stdout)
    assert doc["zones"] == {"3": 200} and set(doc["rank_order"]) <= set(zone3)
    # the naive placement (first free by name) straddles: 100 from zone 1, 100 from zone 3
    assert doc["naive"]["zones"] == {"1": 100, "3": 100} and doc["naive"]["atsw"]["crossings"] > 99


def test_random_order_expectation_matches_a_simulation(meta):
    fabric, topo = meta
    zone_of = {h: z.id for z in topo.zones for r in z.racks for h in r.hosts}
    hosts = [h for z in topo.zones[:2] for r in z.racks for h in r.hosts][:512]
    rng = random.Random(7)
    runs = []
    for _ in range(2000):
        order = hosts[:]
        rng.shuffle(order)
        runs.append(ring_traffic(fabric, zone_of, order, GIB).crossings)
    exact = random_order_traffic(fabric, {1: 384, 2: 128}, GIB).crossings
    assert sum(runs) / len(runs) == pytest.approx(exact, rel=0.01)


def test_a_job_larger_than_the_free_hosts_is_exit_1(tmp_path):
    free = tmp_path / "free"
    free.write_text("z01-r001-h01 z01-r001-h02\n")
    result = run_cli("place", str(META), "--hosts", "3", "--free", str(free), "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["error"] == "3 hosts asked for, 2 free"


@pytest.mark.parametrize(("line", "says"), [("z99-r001-h01", "z99-r001-h01 is not a host of this fabric"),
                                           ("z01-r[001-", "'z01-r[001-' is not a host name or hostlist expression")])
def test_a_bad_free_list_is_exit_2_naming_line_and_host(tmp_path, line, says):
    free = tmp_path / "free"
    free.write_text(f"z01-r001-h01\n{line}\n")
    result = run_cli("place", str(META), "--hosts", "1", "--free", str(free))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{free}:2: {says}" in result.output


def test_switches_netgen_drained_lower_their_zones_atsw_capacity_and_free_no_host(state_dir):
    """While the fabric's shared drain state says z01-ctsw01 and z01-rtsw001 are drained: zone 1's ATSW
    capacity is 3 of its 4 CTSWs' uplinks (its load figures 4/3 of what they were) and the two hosts
    under z01-rtsw001 are not placed; --ignore-drains places as if nothing were drained."""
    def placed(*args: str) -> dict:
        result = run_cli("place", str(SMALL), "--hosts", "12", "--json", *args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    before = placed()
    record_drains(SMALL, ["z01-ctsw01", "z01-rtsw001"], undrained=("z02-ctsw01",))
    during = placed()
    assert during["drained"] == {"switches": ["z01-ctsw01", "z01-rtsw001"],
                                 "hosts_not_free": ["z01-r001-h01", "z01-r001-h02"]}
    assert not {"z01-r001-h01", "z01-r001-h02"} & set(during["rank_order"])
    zone1 = before["atsw"]["atsw_demand_tbps"]["1"] / during["atsw"]["atsw_demand_tbps"]["1"]
    ratio = during["atsw"]["atsw_load"]["1"] / before["atsw"]["atsw_load"]["1"] * zone1
    assert ratio == pytest.approx(4 / 3, rel=1e-3)  # the same demand over 3 of 4 CTSWs' uplinks
    assert placed("--ignore-drains") == {**before, "drained": {"switches": [], "hosts_not_free": []}}
