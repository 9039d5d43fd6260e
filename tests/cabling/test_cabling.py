"""`netgen cabling`: every cable once, in walking order, its ends the ports the rendered configs
describe, lengths and media from the intent."""

from __future__ import annotations

import csv
import io
import json

import orjson
import pytest

from tests.conftest import ROOT, SMALL, run_cli

pytestmark = pytest.mark.render


def _rows(fabric, *extra: str) -> list[dict[str, str]]:
    result = run_cli("cabling", str(fabric), *extra)
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_every_cable_once_with_both_ends_as_the_rendered_configs_describe_them(tmp_path):
    rows = _rows(SMALL)
    assert len(rows) == 128 + 128 + 16  # NICs, RTSW-CTSW, CTSW-ATSW
    ends = [(r["a_device"], r["a_port"]) for r in rows] + [(r["b_device"], r["b_port"]) for r in rows]
    assert len(ends) == len(set(ends))  # no port cabled twice
    out = tmp_path / "out"
    assert run_cli("render", str(SMALL), "-o", str(out)).exit_code == 0
    checked = 0
    for row in rows:
        for device, port, peer, peer_port in ((row["a_device"], row["a_port"], row["b_device"], row["b_port"]),
                                              (row["b_device"], row["b_port"], row["a_device"], row["a_port"])):
            db = out / device / "config_db.json"
            if db.exists():
                assert orjson.loads(db.read_bytes())["PORT"][port]["description"] == f"{peer}:{peer_port}"
                checked += 1
            elif (out / device / f"{device}.cfg").exists():
                config = (out / device / f"{device}.cfg").read_text()
                assert f"interface {port}\n   description {peer}:{peer_port}\n" in config
                checked += 1
    assert checked == 128 + 2 * 128 + 2 * 16  # every switch end; host ends have no config


def test_walking_order_zone_then_rack_nics_before_uplinks_then_the_spine_row():
    rows = _rows(SMALL)
    order = [(int(r["zone"]), r["tier"], r["rack"]) for r in rows]
    assert [z for z, _, _ in order] == sorted(z for z, _, _ in order)
    for zone in (1, 2):
        tiers = [t for z, t, _ in order if z == zone]
        racks = [int(rack) for z, t, rack in order if z == zone and t != "ctsw-atsw"]
        assert racks == sorted(racks)
        assert tiers[-8:] == ["ctsw-atsw"] * 8 and "ctsw-atsw" not in tiers[:-8]
        first_rack = [t for z, t, rack in order if z == zone and rack == "1"]
        assert first_rack == ["host"] * 16 + ["rtsw-ctsw"] * 16


def test_media_and_lengths_come_from_the_intent(small_data, write_fabric):
    small_data["zones"][0]["cable_length_m"] = {"host_m": 2, "rtsw_ctsw_m": 150}
    small_data["aggregation"]["cable_length_m"] = 800
    rows = _rows(write_fabric(small_data))
    seen = {(r["zone"], r["tier"], r["media"], r["length_m"]) for r in rows}
    assert ("1", "host", "copper DAC", "2") in seen and ("1", "rtsw-ctsw", "single-mode fibre", "150") in seen
    assert ("2", "rtsw-ctsw", "single-mode fibre", "100") in seen  # zone 2 keeps the file's own lengths
    assert {r["length_m"] for r in rows if r["tier"] == "ctsw-atsw"} == {"800"}


def test_json_plan_and_bill_for_meta_24k(tmp_path):
    target = tmp_path / "cabling.json"
    result = run_cli("cabling", str(ROOT / "inventory" / "meta-24k"), "--format", "json", "-o", str(target), "--json")
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    plan = json.loads(target.read_text())
    assert summary["cables"] == len(plan["cables"]) == 24576 + 24576 + 3584
    assert sum(item["count"] for item in plan["bill"]) == summary["cables"]
    assert plan["cables"][0]["label"] == "z01-r001-h01:nic1 <> z01-rtsw001:Ethernet0"
