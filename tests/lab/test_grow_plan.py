"""What `netgen lab grow` would do, pure (no root, no FRR): the growth between two lab plans of zone 1
of the small example, its order, and what it refuses. The running lab is tests/lab/test_lab_grow.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from netgen.checks import DesignContext
from netgen.day2.grow import PHASES
from netgen.intent import load_fabric
from netgen.lab.adapters import plan_lab
from netgen.lab.grow import RELOAD_ORDER, compare_plans
from netgen.lab.plan import LabPlan, SliceRequest
from netgen.topology import expand
from tests.conftest import SMALL
from tests.support.fabrics import edited_small, one_more_rack

pytestmark = pytest.mark.render
ZONE1_TWO_SPINES = SliceRequest(zone=1, ctsw=2)


def _plan(path: Path, request: SliceRequest = ZONE1_TWO_SPINES) -> LabPlan:
    loaded = load_fabric(path)
    return plan_lab("t", DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog)), request)


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> tuple[LabPlan, LabPlan]:
    return _plan(SMALL), _plan(edited_small(tmp_path_factory.mktemp("g") / "grown", one_more_rack))


def test_the_lab_reloads_in_netgen_grows_order():
    assert tuple(role.value for _, role in PHASES if role is not None) == RELOAD_ORDER


def test_a_rack_more_adds_its_switch_host_and_cables_and_reloads_only_the_spines(plans):
    old, new = plans
    growth = compare_plans(old, new)
    assert growth.refusals == []
    assert growth.new_nodes == ["z01-rtsw005", "z01-r005-h01"]
    # 4 uplinks to each of the 2 CTSWs in the slice, and the host's NIC
    assert len(growth.new_links) == 9 and {link.a for link in growth.new_links} == {"z01-rtsw005", "z01-r005-h01"}
    assert {name: [p.rendered for p in ports] for name, ports in growth.new_ports.items()} == {
        ctsw: ["Ethernet3/17/1", "Ethernet3/18/1", "Ethernet3/19/1", "Ethernet3/20/1"]
        for ctsw in ("z01-ctsw01", "z01-ctsw02")}
    # the new ports come with their addresses, the spines' end of each /31
    assert all(len(p.addresses) == 2 for ports in growth.new_ports.values() for p in ports)
    assert growth.reloaded == ["z01-ctsw01", "z01-ctsw02"]


def test_the_same_plan_is_no_growth(plans):
    old, _ = plans
    assert compare_plans(old, old).empty and compare_plans(old, old).refusals == []


def test_a_wider_slice_gives_old_rtsws_ports_and_reloads_none(plans):
    _, new = plans
    wider = _plan(SMALL.parent, SliceRequest(zone=1, ctsw=3))
    growth = compare_plans(_plan(SMALL), wider)
    assert growth.new_nodes == ["z01-ctsw03"] and growth.reloaded == [] and growth.refusals == []
    assert sorted(growth.new_ports) == [f"z01-rtsw00{r}" for r in range(1, 5)]
    assert new.request == ZONE1_TWO_SPINES  # the slice travels with the plan (the lab keeps it)


def test_removals_and_changes_are_refused_each_named(plans):
    old, new = plans
    shrink = compare_plans(new, old)
    assert "node z01-rtsw005 would go" in shrink.refusals and "node z01-r005-h01 would go" in shrink.refusals
    assert any(r.startswith("cable z01-rtsw005:Ethernet448 - z01-ctsw01:Ethernet3/17/1") for r in shrink.refusals)
    assert any(r.startswith("session z01-rtsw005 ") for r in shrink.refusals)
    # an existing switch renumbered or with another ASN: its sessions would reset
    node = new.nodes["z01-rtsw001"]
    port = node.interfaces[-1]
    moved = port.model_copy(update={"addresses": ("10.9.9.9/31",)})
    changed = new.model_copy(update={"nodes": {**new.nodes, "z01-rtsw001": node.model_copy(
        update={"asn": 65000, "interfaces": (*node.interfaces[:-1], moved)})}})
    refusals = compare_plans(old, changed).refusals
    assert any(r.startswith("z01-rtsw001: its asn changes from") for r in refusals)
    assert any(r.startswith(f"z01-rtsw001: interface {port.rendered} changes") for r in refusals)
