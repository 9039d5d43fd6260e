"""Issue 34 #2: the capacity guard of a drain, on inventory/small (zones 1-2 of 4 RTSWs, each with
4 x 400G to each of its zone's 4 CTSWs, 2 hosts x 8 x 400G NICs per rack; 2 ATSWs, one 400G uplink
from every CTSW to each). The figures below are worked out by hand from those numbers."""

from __future__ import annotations

import pytest

from netgen.api import check
from netgen.day2.capacity import assess
from netgen.day2.targets import DrainSet, TargetError, resolve
from netgen.intent.fabric import Maintenance
from tests.conftest import SMALL


@pytest.fixture(scope="module")
def small():
    return check(SMALL).ctx


NOTHING = DrainSet()


def _assess(ctx, *targets, before=NOTHING, bounds=None):
    after = before | resolve(ctx.topology, targets)
    return assess(ctx.topology, bounds or ctx.fabric.maintenance, before, after)


def test_one_ctsw_drained_leaves_each_rtsw_of_its_zone_three_quarters_of_its_paths(small):
    report = _assess(small, "z01-ctsw01")
    assert report.allowed
    assert [(p.device, p.before, p.after, p.gbps_after, p.host_gbps) for p in report.rtsw] == [
        (f"z01-rtsw00{n}", 16, 12, 4800, 6400) for n in range(1, 5)]  # ECMP 16 -> 12 on every RTSW of zone 1
    assert {round(p.oversubscription or 0, 3) for p in report.rtsw} == {1.333}  # 6,400 / 4,800: 4:3
    (zone,) = report.zones
    assert (zone.zone, zone.ctsw_drained, zone.spine_gbps, zone.spine_gbps_after) == (1, ("z01-ctsw01",), 25600, 19200)
    assert (zone.spine_pct, zone.atsw_gbps, zone.atsw_gbps_after) == (75.0, 3200, 2400)
    assert [(p.device, p.before, p.after) for p in report.ctsw] == [("z01-ctsw01", 2, 0)]


def test_a_second_ctsw_of_the_same_zone_is_refused_naming_the_rule(small):
    report = _assess(small, "z01-ctsw02", before=resolve(small.topology, ["z01-ctsw01"]))
    assert not report.allowed
    rules = {v.rule: v.message for v in report.violations}
    assert rules["maintenance.max_drained_ctsw_per_zone"] == (
        "zone 1: 2 CTSW(s) would be drained (z01-ctsw01, z01-ctsw02); the fabric allows 1 at once")
    assert rules["maintenance.min_zone_spine_bandwidth_pct"].startswith(
        "zone 1: 50.0% of its RTSW-CTSW bandwidth would stay in service (12,800 of 25,600 Gb/s)")
    first = report.rtsw[0]
    assert (first.device, first.before, first.after) == ("z01-rtsw001", 12, 8)


def test_a_ctsw_of_another_zone_is_allowed_and_a_forced_zone_does_not_refuse_it(small):
    forced = resolve(small.topology, ["z01-ctsw01,z01-ctsw02"])  # broken bound, forced earlier
    report = _assess(small, "z02-ctsw01", before=forced)
    assert report.allowed and [z.zone for z in report.zones] == [2]


def test_a_rack_switch_drain_leaves_the_other_racks_share_of_the_spine_as_it_was(small):
    """A drained RTSW takes its rack's demand with its uplinks: with one CTSW out (75%), draining a
    rack switch keeps the zone at 75% of the spine for the racks still in service, and is allowed."""
    report = _assess(small, "z01-rtsw002", before=resolve(small.topology, ["z01-ctsw01"]))
    assert report.allowed, report.violations
    (zone,) = report.zones
    assert (zone.spine_gbps, zone.spine_gbps_after, zone.spine_pct) == (19200, 14400, 75.0)  # 3 racks of 4


def test_undraining_is_never_refused(small):
    both = resolve(small.topology, ["z01-ctsw01,z01-ctsw02"])
    report = assess(small.topology, small.fabric.maintenance, both, resolve(small.topology, ["z01-ctsw02"]))
    assert report.allowed and report.rtsw[0].after == 12


def test_one_link_drains_one_path_of_one_rtsw(small):
    report = _assess(small, "z01-rtsw001:Ethernet448--z01-ctsw01:Ethernet3/1/1")
    assert report.allowed
    assert report.after.links == {"z01-rtsw001:Ethernet448--z01-ctsw01:Ethernet3/1/1"}
    assert [(p.device, p.before, p.after) for p in report.rtsw] == [("z01-rtsw001", 16, 15)]
    assert report.zones[0].spine_pct == pytest.approx(100 * 63 / 64)


def test_every_link_between_two_switches_by_their_names(small):
    report = _assess(small, "z01-ctsw01--z01-rtsw001")  # either end first
    assert len(report.after.links) == 4 and report.rtsw[0].after == 12


def test_an_rtsw_cut_off_while_its_hosts_are_not_drained_is_refused(small):
    bounds = Maintenance(max_drained_ctsw_per_zone=4, min_zone_spine_bandwidth_pct=0)
    targets = [f"z01-rtsw001--z01-ctsw0{n}" for n in range(1, 5)]
    report = _assess(small, *targets, bounds=bounds)
    (violation,) = report.violations
    assert violation.rule == "maintenance.min_rtsw_uplinks"
    assert violation.message.startswith("z01-rtsw001: 0 uplink(s) would stay in service (of 16)")
    drained_rack = _assess(small, "z01-rtsw001", bounds=bounds)  # the rack itself: its hosts go with it
    assert drained_rack.allowed and drained_rack.rtsw[0].drained


def test_both_atsws_are_refused(small):
    report = _assess(small, "role:atsw")
    rules = [v.rule for v in report.violations]
    assert rules.count("maintenance.min_atsw_bandwidth_pct") == 2  # zones 1 and 2: 0% of 3,200 Gb/s
    assert rules[-1] == "maintenance.max_drained_atsw" and report.atsw_drained == ("atsw01", "atsw02")


@pytest.mark.parametrize(("target", "says"), [
    ("z01-ctsw1", "unknown device 'z01-ctsw1' (did you mean z01-ctsw01"),
    ("zz*", "'zz*' matches no device"),
    ("z01-rtsw001--z02-ctsw01", "no fabric link joins z01-rtsw001 and z02-ctsw01"),
    ("z01-rtsw001:Ethernet0--z01-ctsw01", "no fabric link joins z01-rtsw001:Ethernet0 and z01-ctsw01"),
    ("z01-rtsw001--nowhere", "unknown device 'nowhere'"),
])
def test_a_target_that_names_nothing_is_an_error(small, target, says):
    with pytest.raises(TargetError, match=None) as caught:
        resolve(small.topology, [target])
    assert says in str(caught.value)
