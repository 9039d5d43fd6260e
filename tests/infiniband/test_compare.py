"""`netgen compare` (issue 35, item 4): the small example's figures worked by hand.

RoCE: 8 RTSWs (16 ports used: 16 NICs... 16 host ports + 16 uplinks = 32 each), 8 CTSWs (16 down + 2 up),
2 ATSWs (8 each); 128 DAC host cables of 3 m, 128 RTSW-CTSW fibres of 100 m, 16 CTSW-ATSW fibres of 500 m,
so 2 x 144 = 288 fibre ends. A zone's bisection: 4 racks x 6.4 Tb/s of NICs (as much up) / 2 = 12.8 Tb/s;
out of a zone 4 CTSWs x 2 x 400G = 3.2 Tb/s; the fabric's two zones split in halves: 3.2 Tb/s.

InfiniBand (test_ib_plan.py): 16 leaves of 16 used ports, 4 spines of 36, 2 cores of 8; every cable fibre
(272: 2 x 272 = 544 ends); one spine group a zone, so a zone's bisection is its 64 HCAs x 400G / 2 =
12.8 Tb/s; out of a zone 2 spines x 4 x 400G = 3.2 Tb/s, as RoCE's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netgen.checks import load_and_check
from netgen.infiniband.compare import PriceTable, compare, comparison_lines
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


@pytest.fixture(scope="module")
def small():  # type: ignore[no-untyped-def]
    _, ctx, _ = load_and_check(SMALL)
    assert ctx.infiniband is not None
    return ctx


def test_small_example_side_by_side(small) -> None:  # type: ignore[no-untyped-def]
    result = compare(small.fabric, small.catalog, small.topology, small.infiniband)
    roce, ib = result.roce, result.infiniband
    assert (result.gpus, result.hosts) == (128, 16)
    assert {(r.tier, r.switches, r.ports_used) for r in roce.tiers} == {
        ("rtsw", 4, 128), ("ctsw", 8, 144), ("atsw", 2, 16)}
    assert [(r.tier, r.switches, r.ports_used, r.ports_each) for r in ib.tiers] == [
        ("leaf", 16, 256, 64), ("spine", 4, 144, 64), ("core", 2, 16, 64)]
    assert (roce.switches, ib.switches) == (18, 22)
    assert roce.cables == [
        {"media": "copper DAC", "speed_gbps": 400, "length_m": 3, "count": 128},
        {"media": "single-mode fibre", "speed_gbps": 400, "length_m": 100, "count": 128},
        {"media": "single-mode fibre", "speed_gbps": 400, "length_m": 500, "count": 16}]
    assert ib.cables == [
        {"media": "single-mode fibre", "speed_gbps": 400, "length_m": 100, "count": 256},
        {"media": "single-mode fibre", "speed_gbps": 400, "length_m": 500, "count": 16}]
    assert (roce.optics, ib.optics) == (288, 544)
    assert roce.zone_bisection_gbps == ib.zone_bisection_gbps == {1: 12_800, 2: 12_800}
    assert roce.zone_out_gbps == ib.zone_out_gbps == {1: 3_200, 2: 3_200}
    assert roce.fabric_bisection_gbps == ib.fabric_bisection_gbps == 3_200
    assert roce.oversubscription == {"rtsw": "1:1", "ctsw": "1:8"}
    assert ib.oversubscription == {"leaf": "1:1", "spine": "1:8"}
    assert "2 hosts (16 GPUs) lose the backend" in roce.failure["rtsw"]
    assert "8 hosts each lose one rail (8 GPUs cut off)" in ib.failure["leaf"]
    assert roce.cost is None and ib.cost is None


def test_meta_zone_bisection_is_cut_between_its_spine_groups() -> None:
    _, ctx, _ = load_and_check(SMALL.parent.parent / "meta-24k" / "fabric.yaml")
    result = compare(ctx.fabric, ctx.catalog, ctx.topology, ctx.infiniband)
    # RoCE: 192 racks x 6.4 Tb/s / 2; InfiniBand: two groups of 4 rails meet at the core, 224 x 400G each
    assert result.roce.zone_bisection_gbps[1] == 614_400
    assert result.infiniband.zone_bisection_gbps[1] == 224 * 400
    assert result.roce.zone_out_gbps[1] == result.infiniband.zone_out_gbps[1] == 179_200
    assert result.roce.fabric_bisection_gbps == result.infiniband.fabric_bisection_gbps == 4 * 179_200
    assert (result.roce.switches, result.infiniband.switches) == (1_692, 1_336)
    assert any("meet at the core (1:6.857)" in line for line in result.infiniband.routing)


def test_cost_only_from_the_users_prices(small) -> None:  # type: ignore[no-untyped-def]
    prices = PriceTable.model_validate({
        "currency": "EUR", "switches": {"nvidia-qm9700": 100, "arista-7804r3a-36p-eos": 1000},
        "cables": {"single-mode fibre": {"per_cable": 1, "per_m": 0.5}}, "optics": {"400G": 10},
        "host_adapters": {"infiniband": 2}})
    result = compare(small.fabric, small.catalog, small.topology, small.infiniband, prices)
    ib = result.infiniband.cost
    assert ib is not None and ib["complete"] and ib["currency"] == "EUR"
    # 22 x 100 + 256 x (1 + 50) + 16 x (1 + 250) + 544 x 10 + 128 x 2
    assert ib["total"] == 2200 + 256 * 51 + 16 * 251 + 5440 + 256
    roce = result.roce.cost
    assert roce is not None and not roce["complete"]
    assert roce["unpriced"] == ["cable copper DAC", "host adapter roce", "switch arista-7060x6-64pe-eos",
                                "switch arista-7060x6-64pe-sonic"]
    rows = {what: (r, i) for what, r, i in comparison_lines(result)}
    assert "incomplete: unpriced" in rows["cost"][0] and rows["cost"][1] == f"{ib['total']:,.2f} EUR"


def test_cli(tmp_path: Path) -> None:
    result = run_cli("compare", str(SMALL), "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["roce"]["switches"] == 18 and payload["infiniband"]["switches"] == 22
    text = run_cli("compare", str(SMALL))
    assert text.exit_code == 0 and "InfiniBand" in text.stdout and "12.8 Tb/s" in text.stdout
    bad = tmp_path / "prices.yaml"
    bad.write_text("currency: EUR\nswitches: {nvidia-qm9700: -5}\n")
    result = run_cli("compare", str(SMALL), "--prices", str(bad), "--json")
    assert result.exit_code == 2
    assert "switches.nvidia-qm9700" in json.dumps(json.loads(result.stdout)["input_errors"])


def test_a_report_of_an_infiniband_section_that_does_not_fit(small_data, write_fabric, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The report still comes (exit 1, NG801 among its findings), without the comparison panel."""
    small_data["infiniband"]["hosts_per_leaf"] = 40
    page = tmp_path / "report.html"
    result = run_cli("report", str(write_fabric(small_data)), "-o", str(page))
    assert result.exit_code == 1, result.output
    html = page.read_text()
    assert 'data-code="NG801"' in html and 'id="infiniband"' not in html
