"""netgen's headroom against every point the switch vendor publishes (data-driven, one case per point).

The points live in the built-in catalog (asic_families.<family>.published_headroom), each with the
sonic-buildimage file it was read from; the SKU tables netgen renders live under each model's
sonic.buffers. Two promises are checked:

* the family formula reproduces every published point within 10% (it was fitted to them; in fact
  all are within 2%), so the formula is fit to fill the gaps between and beyond the tables;
* a rendered lossless profile is never below the SKU's own row for the cable: the vendor's figure
  is a floor, netgen only ever adds headroom.
"""

from __future__ import annotations

import pytest

from netgen.intent import load_catalog
from netgen.topology import formula_xoff
from netgen.topology.buffers import lossless_pg
from netgen.topology.model import Port, PortKind

pytestmark = pytest.mark.render

CATALOG = load_catalog()
VENDOR_MTU = 9100  # the vendor tables do not say; SONiC's default port MTU
TOLERANCE = 0.10

POINTS = [
    pytest.param(family, point, id=f"{family}-{point.speed}G-{point.cable_m}m-{point.xoff}")
    for family, facts in CATALOG.asic_families.items() if facts.headroom is not None
    for point in facts.published_headroom
]
SKU_ROWS = [
    pytest.param(name, row, id=f"{name}-{row.speed}G-{row.cable_m}m")
    for name, model in CATALOG.models.items() if model.sonic is not None and model.sonic.buffers is not None
    for row in model.sonic.buffers.lossless_pg
]


def test_every_family_with_a_formula_has_points_and_the_built_in_families_are_covered():
    assert {f for f, facts in CATALOG.asic_families.items() if facts.headroom} == {"tomahawk5", "jericho2c+"}
    assert len(POINTS) == 14 + 15
    assert SKU_ROWS  # the 7060X6 SONiC SKU's rows


@pytest.mark.parametrize(("family", "point"), POINTS)
def test_formula_matches_the_published_point(family, point):
    formula = CATALOG.asic_families[family].headroom
    computed = formula_xoff(formula, point.speed, point.cable_m, VENDOR_MTU)
    assert abs(computed - point.xoff) <= TOLERANCE * point.xoff, (computed, point.xoff, point.source)


def _port(speed: int, cable: int) -> Port:
    return Port(device="sw", name="Ethernet0", cage=0, lane_offset=0, lanes=4, speed_gbps=speed,
                kind=PortKind.HOST, peer_device="h", peer_port="nic1", cable_m=cable)


@pytest.mark.parametrize(("model", "row"), SKU_ROWS)
@pytest.mark.parametrize("shorter_by", [0, 1, 2])
def test_rendered_xoff_never_below_the_skus_row(model, row, shorter_by):
    # A cable at, or a little shorter than, the row's length is looked up in that row or a shorter one.
    sku = CATALOG.models[model].sonic
    formula = CATALOG.family(CATALOG.models[model]).headroom
    cable = max(0, row.cable_m - shorter_by)
    pg = lossless_pg(sku.buffers, formula, _port(row.speed, cable), VENDOR_MTU)
    assert pg.row is not None and pg.row.cable_m >= cable  # the covering row, as SONiC would pick
    assert pg.vendor_xoff == pg.row.xoff and pg.xoff >= pg.row.xoff
    if shorter_by == 0:
        assert pg.row == row and pg.xoff >= row.xoff
    assert (pg.size, pg.xon, pg.xon_offset) == (pg.row.size, pg.row.xon, pg.row.xon_offset)
