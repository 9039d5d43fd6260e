"""The InfiniBand alternative routed by the real subnet manager (issue 35, item 3): the fabric netgen
writes as an ibsim net file, OpenSM 3.3.23 run against it with netgen's own opensm.conf, root and
compute-node GUID files, and everything read back from the simulated switches with infiniband-diags
(ibnetdiscover, dump_lfts, ibtracert), never taken from the plan:

(a) the discovered topology is netgen's cabling plan, cable for cable and port for port;
(b) every HCA reaches every other: walking each switch's own forwarding table over the discovered cables
    ends at the destination HCA, for every switch and every HCA LID; ibtracert agrees on samples;
(c) fat-tree routing ran (OpenSM's log, not only reachability: it falls back to min-hop silently) and is
    balanced: on every leaf the remote HCAs spread over its uplinks within one of each other;
(d) after a leaf-spine cable and then a whole spine are taken down in ibsim, OpenSM routes again and (b)
    still holds on what is left, and nothing is routed over what is gone.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from netgen.infiniband.discovered import DiscoveredFabric, parse_ibnetdiscover
from netgen.lab.ibsim import (
    ForwardingTables,
    IbSim,
    cable_ends,
    leaf_balance,
    missing_tools,
    planned_cables,
    sim_limits,
    walk_tables,
)
from netgen.topology.infiniband import IbCableTier, IbFabric, IbTier
from tests.conftest import SMALL, run_cli

pytestmark = [pytest.mark.ib, pytest.mark.skipif(bool(missing_tools()),
                                                  reason=f"needs {', '.join(missing_tools())}: apt-get install"
                                                         " opensm ibsim-utils infiniband-diags")]


def plan_of(fabric: Path) -> IbFabric:
    from netgen.checks import load_and_check  # noqa: PLC0415

    _, ctx, _ = load_and_check(fabric)
    ib = ctx.infiniband
    assert ib is not None
    return ib


def render(fabric: Path, out: Path) -> None:
    result = run_cli("infiniband", str(fabric), "-o", str(out), "--opensm-dir", str(out / "opensm"))
    assert result.exit_code == 0, result.output


class Routed:
    """One OpenSM sweep over the simulator and what the diagnostics read back after it."""

    def __init__(self, sim: IbSim, out: Path, name: str) -> None:
        self.sm = sim.opensm(out / "opensm" / "opensm.conf", out / f"{name}.log")
        assert self.sm.read_problems == [], self.sm.read_problems  # OpenSM read every file netgen wrote
        self.discovered: DiscoveredFabric = sim.discover()
        self.tables: ForwardingTables = sim.forwarding_tables()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[IbFabric, Path]:
    out = tmp_path_factory.mktemp("ib-small")
    render(SMALL, out)
    return plan_of(SMALL), out


@pytest.fixture(scope="module")
def routed(small: tuple[IbFabric, Path]) -> tuple[IbFabric, Path, Routed, list[list[str]]]:
    ib, out = small
    with IbSim(out / "ibsim" / "net", out, **sim_limits(ib)) as sim:
        routed = Routed(sim, out, "opensm")
        lids = sorted(routed.tables.hca_lids.items())
        samples = [lids[0], lids[len(lids) // 2], lids[-1]]
        traces = [sim.trace(a[1], b[1]) for a in samples for b in samples if a != b]
    return ib, out, routed, traces


def test_a_discovered_topology_is_the_cabling_plan(routed: tuple[IbFabric, Path, Routed, list[list[str]]]) -> None:
    ib, out, result, _ = routed
    with (out / "cabling" / "cables.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    from_csv = {frozenset({(r["a_node"], int(r["a_port"])), (r["b_node"], int(r["b_port"]))}) for r in rows}
    assert len(rows) == len(from_csv) == 272  # 128 HCAs, 16 leaves x 8 up, 4 spines x 4 up
    assert result.discovered.cables == from_csv == planned_cables(ib)
    assert result.discovered.switches == set(ib.switches)
    assert result.discovered.hcas == {h.node for h in ib.hcas}


def test_b_every_hca_reaches_every_other(routed: tuple[IbFabric, Path, Routed, list[list[str]]]) -> None:
    ib, _, result, traces = routed
    assert len(result.tables.hca_lids) == len(ib.hcas) == 128
    assert len(result.tables.lft) == len(ib.switches) == 22
    walk = walk_tables(result.discovered, result.tables)
    assert walk.failures == []
    assert walk.pairs == 22 * 128
    # ibtracert (the switches' tables read hop by hop by another tool) ends where it should, through
    # leaf -> spine [-> core -> spine] -> leaf: 3 switches inside a zone, 5 across zones
    nodes = {h.node for h in ib.hcas}
    for path in traces:
        assert path[0] in nodes and path[-1] in nodes and path[0] != path[-1]
        assert len(path) - 2 in (1, 3, 5), path
        crossing = path[0].split("-")[0] != path[-1].split("-")[0]
        assert any(ib.switches[n].tier is IbTier.CORE for n in path[1:-1]) is crossing, path


def test_c_fat_tree_routing_ran_and_is_balanced(routed: tuple[IbFabric, Path, Routed, list[list[str]]]) -> None:
    ib, _, result, _ = routed
    assert result.sm.engine == "ftree", result.sm.log.read_text()[-2000:]
    balance = leaf_balance(ib, result.discovered, result.tables)
    assert len(balance) == 16
    for leaf in balance:
        assert len(leaf.per_uplink) == 8, leaf  # 8 hosts down, 8 uplinks (4 to each of 2 spines)
        assert leaf.spread <= 1, leaf
        assert sum(leaf.per_uplink.values()) == 128 - 8  # every HCA not on this leaf, once


def test_d_opensm_reroutes_around_a_cable_and_a_spine(small: tuple[IbFabric, Path]) -> None:
    ib, out = small
    cable = next(c for c in ib.cables if c.tier is IbCableTier.LEAF_SPINE)
    spine = next(s for s in ib.tier(IbTier.SPINE) if s.name != cable.upper)
    with IbSim(out / "ibsim" / "net", out, **sim_limits(ib)) as sim:
        Routed(sim, out, "before")
        sim.console(f'Unlink "{cable.lower}"[{cable.lower_port}]')
        after_cable = Routed(sim, out, "after-cable")
        sim.console(f'Unlink "{spine.name}"')
        after_spine = Routed(sim, out, "after-spine")
    planned = planned_cables(ib)
    assert after_cable.discovered.cables == planned - {cable_ends(cable)}
    walk = walk_tables(after_cable.discovered, after_cable.tables)
    assert walk.failures == [] and walk.pairs == 22 * 128
    assert after_cable.tables.lft[cable.lower] and cable.lower_port not in after_cable.tables.lft[cable.lower].values()

    gone = {cable_ends(c) for c in ib.cables if spine.name in (c.lower, c.upper)}
    assert len(gone) == 8 * 4 + 4  # its 32 leaf links and 4 core links
    assert after_spine.discovered.cables == planned - {cable_ends(cable)} - gone
    assert spine.name not in after_spine.discovered.switches
    walk = walk_tables(after_spine.discovered, after_spine.tables)
    assert walk.failures == [] and walk.pairs == 21 * 128
    assert after_spine.sm.engine, "OpenSM configured no routing after the spine went down"


# --- meta-24k: one whole zone ----------------------------------------------------------------------
# The whole of zone 1 of meta-24k's InfiniBand alternative (384 hosts x 8 rails = 3,072 HCAs on 96 leaves,
# 64 spines in two groups of four rails, and the 56 cores), with the whole fabric's ports and GUIDs.
# Larger slices and the whole fabric: docs/developer/benchmarks.md (what ibsim holds here).
META = SMALL.parent.parent / "meta-24k" / "fabric.yaml"


def test_meta_zone_routed_by_fat_tree_and_read_back(tmp_path: Path) -> None:
    from netgen.checks import load_and_check  # noqa: PLC0415
    from netgen.infiniband.files import render_infiniband  # noqa: PLC0415

    _, ctx, _ = load_and_check(META)
    assert ctx.infiniband is not None
    ib = ctx.infiniband.slice({1})
    assert (len(ib.switches), len(ib.hcas)) == (96 + 64 + 56, 3072)
    files = render_infiniband(ctx.fabric, ib, str(tmp_path / "opensm"))
    for folder, items in files.files.items():
        (tmp_path / folder).mkdir()
        for item in items:
            (tmp_path / folder / item.name).write_text(item.content)
    cable = next(c for c in ib.cables if c.tier is IbCableTier.SPINE_CORE)
    with IbSim(tmp_path / "ibsim" / "net", tmp_path, **sim_limits(ib)) as sim:
        routed = Routed(sim, tmp_path, "opensm")
        lids = routed.tables.hca_lids
        first, last = lids["z01-r001-h01 mlx5_0"], lids["z01-r192-h02 mlx5_7"]
        path = sim.trace(first, last)
        sim.console(f'Unlink "{cable.lower}"[{cable.lower_port}]')
        after = Routed(sim, tmp_path, "after-cable")
    assert routed.sm.engine == "ftree", routed.sm.log.read_text()[-2000:]
    assert routed.discovered.cables == planned_cables(ib)  # (a)
    walk = walk_tables(routed.discovered, routed.tables)  # (b)
    assert walk.failures == [] and walk.pairs == 216 * 3072
    # rails 1 and 8 are in different spine groups: leaf, spine, core, spine, leaf
    assert [ib.switches[n].tier for n in path[1:-1]] == [IbTier.LEAF, IbTier.SPINE, IbTier.CORE, IbTier.SPINE,
                                                         IbTier.LEAF]
    balance = leaf_balance(ib, routed.discovered, routed.tables)  # (c)
    assert len(balance) == 96 and all(len(b.per_uplink) == 32 and b.spread <= 1 for b in balance)
    assert after.discovered.cables == planned_cables(ib) - {cable_ends(cable)}  # (d)
    walk = walk_tables(after.discovered, after.tables)
    assert walk.failures == [] and walk.pairs == 216 * 3072


def test_e_partitions_are_what_opensm_programs_into_each_port(tmp_path: Path) -> None:
    """Tenants: zone 1 in 0x0010, zone 2 in 0x0020. OpenSM reads netgen's partitions.conf and programs each
    HCA port's P_Key table (read back with smpquery): its tenant's key as a full member (0x8000 set), the
    default partition as a limited member (0x7fff, bit clear), and no other tenant's key."""
    from tests.support.fabrics import edited_small  # noqa: PLC0415

    def tenants(data: dict[str, Any]) -> None:
        data["infiniband"]["partitions"] = [{"name": "tenant-a", "pkey": 0x10, "zones": [1]},
                                            {"name": "tenant-b", "pkey": 0x20, "zones": [2], "ipoib": True}]

    fabric = edited_small(tmp_path / "fabric", tenants)
    out = tmp_path / "ib"
    render(fabric, out)
    ib = plan_of(fabric)
    with IbSim(out / "ibsim" / "net", out, **sim_limits(ib)) as sim:
        routed = Routed(sim, out, "opensm")
        lids = routed.tables.hca_lids
        zone1 = sim.pkeys(lids["z01-r002-h01 mlx5_3"])
        zone2 = sim.pkeys(lids["z02-r004-h02 mlx5_7"])
    assert routed.sm.read_problems == []
    assert zone1 == {0x7FFF, 0x8010}
    assert zone2 == {0x7FFF, 0x8020}


def test_a_file_opensm_cannot_read_is_seen(small: tuple[IbFabric, Path], tmp_path: Path) -> None:
    """OpenSM skips a line it cannot read and routes on: the log is the only witness, and it is read."""
    ib, out = small
    conf = tmp_path / "opensm.conf"
    broken = tmp_path / "partitions.conf"
    broken.write_text("Default=0x7fff : ALL=full ;\ntenant=0x10 full, everything ;\n")
    conf.write_text((out / "opensm" / "opensm.conf").read_text().replace(
        str(out / "opensm" / "partitions.conf"), str(broken)))
    with IbSim(out / "ibsim" / "net", out, **sim_limits(ib)) as sim:
        run = sim.opensm(conf, tmp_path / "opensm.log")
    assert run.engine == "ftree"
    assert len(run.read_problems) == 1 and "PARSE ERROR: line 2" in run.read_problems[0]


def _without_guids(net: str) -> str:
    """The net file as an installed fabric: every GUID the hardware's own (ibsim's defaults), not netgen's."""
    return "".join(line for line in net.splitlines(keepends=True) if not line.startswith(("switchguid=", "caguid=")))


def test_f_the_installed_fabrics_guids_from_ibnetdiscover(small: tuple[IbFabric, Path], tmp_path: Path) -> None:
    """`netgen infiniband --discovered`: the installed fabric's ibnetdiscover output gives every planned
    node its hardware GUID, found by place (its switches describe themselves as sw-1, sw-2, ...: only
    their place says which is which); OpenSM then routes the installed fabric by fat tree with the root
    and compute-node files netgen wrote from it, and ibnetdiscover names the switches by netgen's map."""
    ib, out = small
    net = _without_guids((out / "ibsim" / "net").read_text())
    for number, name in enumerate(sorted(ib.switches), 1):
        net = net.replace(f'"{name}"', f'"sw-{number}"')
    installed = tmp_path / "installed.net"
    installed.write_text(net)
    with IbSim(installed, tmp_path, **sim_limits(ib)) as sim:
        discovered = tmp_path / "ibnetdiscover.txt"
        discovered.write_text(sim.run("ibnetdiscover"))
        files = tmp_path / "files"
        result = run_cli("infiniband", str(SMALL), "-o", str(files), "--opensm-dir", str(files / "opensm"),
                         "--discovered", str(discovered), "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["cables_checked"] == 272
        roots = (files / "opensm" / "root_guids").read_text().split()
        assert roots and not any(g.startswith("0x024e47") for g in roots)  # the hardware's, not netgen's plan
        run = sim.opensm(files / "opensm" / "opensm.conf", tmp_path / "opensm.log")
        assert run.engine == "ftree" and run.read_problems == []
        tables = sim.forwarding_tables()
        assert walk_tables(sim.discover(), tables).failures == []
        name_map = files / "opensm" / "node-name-map"
        named = parse_ibnetdiscover(sim.run("ibnetdiscover", "--node-name-map", str(name_map)))
    assert named.switches == set(ib.switches) and named.cables == planned_cables(ib)


def test_g_a_miscabled_installed_fabric_writes_nothing(small: tuple[IbFabric, Path], tmp_path: Path) -> None:
    """Two uplinks of z01-r1-leaf01 swapped on spine01 (ports 1 and 2): both named, exit 1, no file."""
    ib, out = small
    net = _without_guids((out / "ibsim" / "net").read_text())
    net = (net.replace('[9] "z01-g1-spine01"[1]', '[9] "z01-g1-spine01"[@]')
              .replace('[10] "z01-g1-spine01"[2]', '[10] "z01-g1-spine01"[1]')
              .replace('[9] "z01-g1-spine01"[@]', '[9] "z01-g1-spine01"[2]')
              .replace('[1] "z01-r1-leaf01"[9]', '[1] "z01-r1-leaf01"[@]')
              .replace('[2] "z01-r1-leaf01"[10]', '[2] "z01-r1-leaf01"[9]')
              .replace('[1] "z01-r1-leaf01"[@]', '[1] "z01-r1-leaf01"[10]'))
    installed = tmp_path / "installed.net"
    installed.write_text(net)
    with IbSim(installed, tmp_path, **sim_limits(ib)) as sim:
        discovered = tmp_path / "ibnetdiscover.txt"
        discovered.write_text(sim.run("ibnetdiscover"))
    result = run_cli("infiniband", str(SMALL), "-o", str(tmp_path / "files"), "--discovered", str(discovered),
                     "--json")
    assert result.exit_code == 1, result.output
    problems = json.loads(result.stdout)["problems"]
    assert problems == ["z01-r1-leaf01 port 9: on z01-g1-spine01 port 2, planned port 1",
                        "z01-r1-leaf01 port 10: on z01-g1-spine01 port 1, planned port 2"]
    assert not (tmp_path / "files").exists()


def test_h_netgen_lab_ib_runs_the_proof_for_a_user() -> None:
    result = run_cli("lab", "ib", str(SMALL), "--zones", "2", "--fail", "z02-g1-spine02", "--fail",
                     "z02-r3-leaf01[9]", "--json")
    assert result.exit_code == 0, result.output
    proof = json.loads(result.stdout)
    assert (proof["switches"], proof["hcas"]) == (8 + 2 + 2, 64)  # zone 2's leaves and spines, the core
    labels = [s["label"] for s in proof["sweeps"]]
    assert labels == ["as planned", "z02-g1-spine02 down", "z02-r3-leaf01[9] down"]
    assert all(s["engine"] == "ftree" and not s["unreachable"] and not s["missing_cables"] for s in proof["sweeps"])
    assert proof["sweeps"][0]["max_spread"] <= 1
