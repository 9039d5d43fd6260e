"""Rollout batches: canaries first, failure-domain caps, every device exactly once."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.deploy.inventory import RolloutPolicy
from netgen.deploy.rollout import Batch, plan_batches, violations
from netgen.topology.model import Role
from tests.conftest import META, SMALL, topology_of

pytestmark = pytest.mark.render

SMALL_TOPO = topology_of(SMALL)
META_TOPO = topology_of(META)


def test_small_default_plan_by_hand():
    batches = plan_batches(SMALL_TOPO, list(SMALL_TOPO.devices), RolloutPolicy())
    labels = [(b.label, b.devices) for b in batches]
    assert labels[0] == ("canary rtsw", ("z01-rtsw001",))
    assert labels[1] == ("canary ctsw", ("z01-ctsw01",))
    # 4 racks per zone, 25%: one rack of each zone per batch
    assert labels[2:5] == [("rtsw 1", ("z01-rtsw002", "z02-rtsw001")), ("rtsw 2", ("z01-rtsw003", "z02-rtsw002")),
                           ("rtsw 3", ("z01-rtsw004", "z02-rtsw003"))]
    assert labels[5] == ("rtsw 4", ("z02-rtsw004",))
    # one spine per zone at a time
    assert labels[6:10] == [("ctsw 1", ("z01-ctsw02", "z02-ctsw01")), ("ctsw 2", ("z01-ctsw03", "z02-ctsw02")),
                            ("ctsw 3", ("z01-ctsw04", "z02-ctsw03")), ("ctsw 4", ("z02-ctsw04",))]
    assert labels[10:] == [("atsw 1", ("atsw01",)), ("atsw 2", ("atsw02",))]


def test_meta_batches_spread_over_zones_within_caps():
    policy = RolloutPolicy(rtsw_batch_size=16)
    batches = plan_batches(META_TOPO, list(META_TOPO.devices), policy)
    first = [META_TOPO.devices[n] for n in batches[2].devices]
    assert len(first) == 16 and {d.zone for d in first} == set(range(1, 9))  # 2 racks from each of 8 zones
    ctsw = [b for b in batches if b.label.startswith("ctsw")]
    assert all(len({META_TOPO.devices[n].zone for n in b.devices}) == len(b.devices) for b in ctsw)
    assert violations(batches, META_TOPO, policy) == []


def test_violations_catches_two_spines_of_a_zone():
    bad = [Batch(1, "ctsw", ("z01-ctsw01", "z01-ctsw02"))]
    assert violations(bad, SMALL_TOPO, RolloutPolicy()) == ["batch 1: 2 CTSWs of zone 1 (policy 1)"]
    assert violations(bad, SMALL_TOPO, RolloutPolicy(ctsw_per_zone=2)) == []


def test_violations_catches_too_much_of_a_zone_and_mixed_tiers():
    bad = [Batch(1, "x", ("z01-rtsw001", "z01-rtsw002", "z01-ctsw01"))]
    problems = violations(bad, SMALL_TOPO, RolloutPolicy())
    assert "batch 1 mixes tiers" in problems
    assert "batch 1: 2 RTSWs of zone 1 (more than 25% of its racks)" in problems


def test_a_selection_keeps_the_whole_zone_as_failure_domain():
    """--limit picks 3 racks of a 4-rack zone: still one per batch, since 25% of the zone is one rack."""
    names = ["z01-rtsw002", "z01-rtsw003", "z01-rtsw004"]
    batches = plan_batches(SMALL_TOPO, names, RolloutPolicy())
    assert [b.devices for b in batches] == [("z01-rtsw002",), ("z01-rtsw003",), ("z01-rtsw004",)]


@settings(max_examples=60, deadline=None)
@given(batch=st.integers(1, 40), share=st.floats(0.01, 1.0), spines=st.integers(1, 4), atsw=st.integers(1, 5),
       pick=st.sets(st.integers(0, 1691), min_size=1, max_size=300))
def test_any_policy_and_selection_plans_safely(batch, share, spines, atsw, pick):
    policy = RolloutPolicy(rtsw_batch_size=batch, max_zone_share=share, ctsw_per_zone=spines, atsw_per_batch=atsw)
    names = [n for i, n in enumerate(META_TOPO.devices) if i in pick]
    batches = plan_batches(META_TOPO, names, policy)
    assert violations(batches, META_TOPO, policy) == []
    flat = [n for b in batches for n in b.devices]
    assert sorted(flat) == sorted(names)  # each selected device once, nothing else
    roles = [META_TOPO.devices[b.devices[0]].role for b in batches]
    first_rtsw = next((i for i, r in enumerate(roles) if r is Role.RTSW), None)
    if first_rtsw is not None:
        assert batches[first_rtsw].label == "canary rtsw" and len(batches[first_rtsw].devices) == 1
