"""PFC headroom and per-device buffer plans in the vendor's buffer model, checked by hand.

Vendor numbers used below (sonic-buildimage @086b03bd, device/arista/):
  x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/buffers_defaults_t1.j2: ingress_lossless_pool
    size 166115492, xoff 29423360; egress_lossless_pool 166115492; egress_lossy_profile size 1778.
  ...the same SKU's pg_profile_lookup.ini: 400000 5m/40m/150m -> size 18796, xon 0, xoff 612140,
    xon_offset 3556.
  x86_64-arista_7800r3a_36d2_lc/Arista-7800R3A-36D2-C72/0/pg_profile_lookup.ini: 400000 300m ->
    xoff 315392, 1000m -> 778240; pool of type both 6441610000 with xoff 396096307.
"""

from __future__ import annotations

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_catalog, load_fabric
from netgen.intent.catalog import HeadroomFormula
from netgen.topology import expand, formula_xoff
from netgen.topology.buffers import FROM_REFERENCE, FROM_SKU, UNPUBLISHED
from tests.conftest import SMALL

pytestmark = pytest.mark.render

CATALOG = load_catalog()
TH5 = CATALOG.asic_families["tomahawk5"].headroom
J2C = CATALOG.asic_families["jericho2c+"].headroom


def test_formula_tomahawk5_400g_300m_by_hand():
    """rate 50e9 B/s x (2 x 300 m / 1.98e8 m/s = 3.0303 us + 2.166 us) = 259815 B; + 2 x 9100 =
    278015 B; x 3.006 = 835713.5; + 3771 = 839484.5 -> 3306 cells of 254 B = 839724 (the vendor
    publishes 839216 for 300 m: 0.06% apart)."""
    assert formula_xoff(TH5, 400, 300, 9100) == 839724


def test_formula_jericho2cplus_400g_500m_by_hand():
    """50e9 x (1000 / 1.98e8 = 5.0505 us + 1.117 us) = 308376 B; + 18200 = 326576; x 1.316 =
    429773; + 18180 = 447953 -> 438 x 1024 = 448512: between the vendor's 300 m (315392) and
    1000 m (778240) rows."""
    assert formula_xoff(J2C, 400, 500, 9100) == 448512


def test_formula_grows_with_cable_speed_and_mtu():
    assert formula_xoff(TH5, 400, 3, 9100) < formula_xoff(TH5, 400, 100, 9100)
    assert formula_xoff(TH5, 200, 100, 9100) < formula_xoff(TH5, 400, 100, 9100)
    assert formula_xoff(TH5, 400, 100, 4200) < formula_xoff(TH5, 400, 100, 9100)


def test_formula_rounds_up_to_whole_units():
    unit = HeadroomFormula(fixed_bytes=1, cell_occupancy=1.0, response_ns=0, round_to_bytes=1000)
    # 1 + 1 x (2 x 0 + 0) = 1 byte -> one whole unit
    assert formula_xoff(unit, 400, 0, 0) == 1000


def _ctx(path=SMALL):
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def test_sonic_leaf_uses_the_skus_profile_and_never_less_xoff():
    plan = _ctx().buffers["z01-rtsw001"]
    assert plan.source == FROM_SKU and plan.mode == "shared"
    host, uplink = plan.lossless["Ethernet0"], plan.lossless["Ethernet448"]
    # 3 m host DAC -> the 5m row; 100 m fibre -> the 150m row: both 612140, above the formula's
    # 388620 and 535940, so the vendor's figure is what the switch gets.
    assert (host.row.cable_m, host.vendor_xoff, host.xoff, host.computed_xoff) == (5, 612140, 612140, 388620)
    assert (uplink.row.cable_m, uplink.xoff, uplink.computed_xoff) == (150, 612140, 535940)
    assert (host.size, host.xon, host.xon_offset) == (18796, 0, 3556)
    assert plan.dynamic_th == 0  # the small fabric sets 0, the vendor's value


def test_sonic_leaf_budget_as_the_vendor_counts_it():
    domain = _ctx().buffers["z01-rtsw001"].worst
    assert (domain.lossless_ports, domain.pool_bytes, domain.headroom_pool_bytes) == (32, 166115492, 29423360)
    assert domain.reserved_bytes == 32 * 18796  # lossless PG reserve; ingress lossy reserves 0
    assert domain.egress_reserved_bytes == 32 * 7 * 1778  # 7 lossy queues per port, lossless reserves 0
    assert domain.xoff_bytes == 32 * 612140 == 19588480  # fits the 29423360 shared headroom pool
    assert domain.headroom_oversubscription < 1 and domain.pgs_covered == 32
    assert domain.ingress_committed == 166115492 + 601472 <= domain.buffer_bytes == 173268640


def test_cable_beyond_the_sku_table_gets_the_formula(small_data, write_fabric):
    small_data["zones"][0]["cable_length_m"]["rtsw_ctsw_m"] = 300
    plan = _ctx(write_fabric(small_data)).buffers["z01-rtsw001"]
    uplink = plan.lossless["Ethernet448"]
    assert uplink.vendor_xoff is None and uplink.row.cable_m == 150  # the longest row's profile
    assert uplink.xoff == uplink.computed_xoff == 839724


def test_eos_devices_are_counted_with_the_vendor_reference():
    ctx = _ctx()
    spine = ctx.buffers["z01-ctsw01"]
    assert spine.source == FROM_REFERENCE and spine.vendor.ingress_pool.type == "both"
    # 100 m downlinks take the 300m row, 500 m uplinks the 1000m row (SONiC looks cables up in buckets)
    assert spine.lossless["Ethernet3/1/1"].xoff == 315392
    assert spine.lossless["Ethernet6/35/1"].xoff == 778240
    assert spine.lossless["Ethernet6/35/1"].computed_xoff == 448512
    assert spine.dynamic_th == -5  # not set by the small fabric: the vendor's 400G value


def test_chassis_budget_is_per_asic():
    # The 7804R3 has 18 cages per Jericho2C+; CTSW downlinks fill cages 0-15 (ASIC 0), the two
    # uplinks sit at cages 142-143 (ASIC 7): two domains, each checked against its own buffer.
    plan = _ctx().buffers["z01-ctsw01"]
    assert [(d.index, d.ports, d.xoff_bytes) for d in plan.domains] == [(0, 16, 16 * 315392), (7, 2, 2 * 778240)]


def test_static_partition_splits_the_shared_pool(small_data, write_fabric):
    small_data["buffers"]["rtsw"] = {"mode": "static_per_port"}
    domain = _ctx(write_fabric(small_data)).buffers["z01-rtsw001"].worst
    # shared = pool - shared headroom pool - reserved = 166115492 - 29423360 - 601472 = 136090660
    assert domain.per_port_static == 136090660 // 32
    assert domain.static_bytes <= domain.shared_bytes - domain.reserved_bytes


def test_sku_without_buffer_tables_is_unpublished(small_data, write_fabric):
    for zone in small_data["zones"]:
        zone["ctsw_model"] = "arista-7060dx5-64s-sonic"
    plan = _ctx(write_fabric(small_data)).buffers["z01-ctsw01"]
    assert plan.source == UNPUBLISHED and plan.vendor is None and plan.lossless == {}


def test_devices_of_one_layout_share_a_plan_equal_to_their_own(small_data, write_fabric):
    """plan_buffers plans each port layout once; every device's plan is the one planning it alone
    gives, under its own name. Zone 1's racks get a longer uplink cable, so the RTSWs fall into
    layouts that must not be mixed up."""
    from netgen.topology.buffers import plan_buffers, plan_device  # noqa: PLC0415

    small_data["zones"][0]["cable_length_m"] = {"host_m": 3, "rtsw_ctsw_m": 400}
    loaded = load_fabric(write_fabric(small_data))
    topology = expand(loaded.fabric, loaded.catalog)
    plans = plan_buffers(loaded.fabric, loaded.catalog, topology)
    assert list(plans) == list(topology.devices)
    for name, device in topology.devices.items():
        alone = plan_device(loaded.fabric, loaded.catalog, loaded.catalog.get(device.model), device,
                            topology.ports[name])
        assert plans[name] == alone
    uplink = {name: {pg.cable_m for pg in plans[name].lossless.values()} for name in ("z01-rtsw001", "z02-rtsw001")}
    assert uplink == {"z01-rtsw001": {3, 400}, "z02-rtsw001": {3, 100}}
