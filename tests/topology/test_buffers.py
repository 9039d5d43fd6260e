"""PFC headroom (SONiC dynamic-model formula) and per-device buffer plans, checked by hand."""

from __future__ import annotations

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.topology import expand, pg_headroom
from tests.conftest import SMALL

pytestmark = pytest.mark.render


def test_headroom_400g_5m_tomahawk_cells():
    """By hand: peer response 905 quanta x 64 B = 57920; cable 2 x 5 m x 400e9 b/s / 1.98e8 m/s / 8
    = 2525.25 B; cells of 254 B -> worst case 4 cells per 64 B packet; 100 % small packets ->
    occupancy 4. propagation = 9100 + 2525.25 + 819 + 57920 = 70364.25;
    xoff = roundup_1k(4096 + 4 x 70364.25 = 285553) = 285696; xon = 18432; size = 304128."""
    h = pg_headroom(400, 5, 9100, 4096, 100, 254, 18432, 819)
    assert (h.xon, h.xoff, h.size) == (18432, 285696, 304128)


def test_headroom_100g_spectrum_cells_large_packets():
    """By hand: quanta 394 x 64 = 25216; cable 2 x 5 x 100e9 / 1.98e8 / 8 = 631.31; cell 96 ->
    factor ceil(192/97) = 2; 0 % small packets with a 1024 B lossless MTU -> small share
    6400 / 1024 = 6.25 % -> occupancy 1.0625; propagation = 9100 + 631.31 + 819 + 25216 = 35766.31;
    xoff = roundup_1k(1024 + 38001.7) = 39936; xon = 19456; size = 59392."""
    h = pg_headroom(100, 5, 9100, 1024, 0, 96, 19456, 819)
    assert (h.xon, h.xoff, h.size) == (19456, 39936, 59392)


def test_headroom_grows_with_cable_and_speed():
    short = pg_headroom(400, 3, 9100, 4096, 100, 254, 18432, 819)
    long = pg_headroom(400, 300, 9100, 4096, 100, 254, 18432, 819)
    slow = pg_headroom(100, 300, 9100, 4096, 100, 254, 18432, 819)
    assert short.size < long.size
    assert slow.size < long.size


def test_eight_lane_ports_double_pipeline_latency_and_add_an_mtu():
    four = pg_headroom(400, 100, 9100, 4096, 100, 254, 18432, 819, lanes=4)
    eight = pg_headroom(400, 100, 9100, 4096, 100, 254, 18432, 819, lanes=8)
    assert eight.xon == 2 * four.xon
    assert eight.xoff == four.xoff
    # size = roundup_1k(36864 + 478208 + 9100 = 524172) = 524288
    assert eight.xoff == 478208
    assert eight.size == 524288


def _ctx(path=SMALL):
    loaded = load_fabric(path)
    return DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))


def test_plan_sums_headroom_over_lossless_ports():
    ctx = _ctx()
    plan = ctx.buffers["z01-rtsw001"]
    domain = plan.worst
    assert plan.mode == "shared"
    assert domain.lossless_ports == 32  # 16 NIC ports + 16 uplinks, PFC on all backend ports
    assert domain.headroom_bytes == sum(h.size for h in plan.headroom.values())
    assert domain.static_bytes == 0
    assert domain.free == 166_115_492 - domain.headroom_bytes


def test_chassis_budget_is_per_asic(small_data, write_fabric):
    # The 7804R3 has 18 cages per Jericho2C+; CTSW downlinks fill cages 0-15 (ASIC 0), the two
    # uplinks sit at cages 142-143 (ASIC 7): two domains, each checked against its own buffer.
    ctx = _ctx()
    plan = ctx.buffers["z01-ctsw01"]
    assert [(d.index, d.ports) for d in plan.domains] == [(0, 16), (7, 2)]


def test_static_partition_splits_what_headroom_leaves(small_data, write_fabric):
    small_data["buffers"]["rtsw"] = {"mode": "static_per_port"}
    ctx = _ctx(write_fabric(small_data))
    domain = ctx.buffers["z01-rtsw001"].worst
    assert domain.per_port_static == (166_115_492 - domain.headroom_bytes) // 32
    assert domain.committed <= domain.buffer_bytes
