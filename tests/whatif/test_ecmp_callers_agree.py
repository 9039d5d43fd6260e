"""`netgen whatif ecmp`, `netgen report` and NG706 name the same recommended QP count, with the same
P(1.5x), for the same fabric, and that count is the smallest under 5 % by an exact method of the
tests' own (tests/whatif/occupancy.py); the Monte Carlo's trial budget is one constant (issue 31, 5)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from netgen.whatif import ecmp
from tests.conftest import META, SMALL, run_cli
from tests.whatif.occupancy import TARGET, hot_probability_by_recursion, smallest_meeting_count

pytestmark = pytest.mark.render

QP_HASHING_RTSW = {"models": {"rtsw-qp": {"extends": "arista-7060x6-64pe-eos",
                                          "capabilities": {"bth_dest_qp_hash": True}}}}
Recommendation = tuple[int | None, str | None]  # the count, and the P(1.5x) shown with it


def _qp_hashing_small(small_data: dict[str, Any], write_fabric: Any, **zone: Any) -> Path:
    """The small example with RTSWs that hash on the QP (so NG706 speaks), zones changed by `zone`."""
    small_data["catalog"] = "catalog.yaml"
    for entry in small_data["zones"]:
        entry.update(rtsw_model="rtsw-qp", **zone)
    return write_fabric(small_data, catalog=QP_HASHING_RTSW)


def _whatif(fabric: Path, *args: str) -> dict[str, Any]:
    result = run_cli("whatif", "ecmp", str(fabric), "--json", *args)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _from_whatif(doc: dict[str, Any], scenario: str = "healthy") -> dict[str, Recommendation]:
    return {s["stage"]: (s["recommended_qps"], (s["recommended"] or {}).get("p_hot_text"))
            for s in doc["stages"] if s["scenario"] == scenario}


def _report_page(fabric: Path, tmp_path: Path) -> str:
    page = tmp_path / "report.html"
    result = run_cli("report", str(fabric), "-o", str(page), "--json")
    assert result.exit_code == 0, result.output
    section = re.search(r'<section id="whatif">(.*?)</section>', page.read_text(), re.S)
    assert section is not None
    return section.group(1)


def _from_report(section: str) -> dict[str, Recommendation]:
    found = re.findall(r"<h3>(.*?): \d+ flows over \d+ links</h3>.*?under 5 %: <b[^>]*>([^<]*)</b>"
                       r"(?: \(P = ([0-9.]+)\))?", section, re.S)
    return {html.unescape(stage): (int(count) if count.isdigit() else None, p or None) for stage, count, p in found}


def _from_ng706(fabric: Path) -> dict[str, Recommendation]:
    result = run_cli("validate", str(fabric), "--json")
    out = {}
    for finding in json.loads(result.stdout)["findings"]:
        if finding["code"] == "NG706":
            said = re.search(r"(\d+) QPs keep it under 5%(?: \(P = ([0-9.]+)\))?", finding["message"])
            out[finding["subject"]] = (int(said.group(1)), said.group(2)) if said else (None, None)
    return out


def _assert_all_agree(fabric: Path, tmp_path: Path, ng706_stages: set[str]) -> None:
    doc = _whatif(fabric)
    whatif = _from_whatif(doc)
    report = _from_report(_report_page(fabric, tmp_path))
    ng706 = _from_ng706(fabric)
    shapes = {s["stage"]: (s["flows"], s["links"]) for s in doc["stages"]}
    expected = {stage: smallest_meeting_count(*shape) for stage, shape in shapes.items()}
    assert {stage: count for stage, (count, _) in whatif.items()} == expected
    assert {stage: count for stage, (count, _) in report.items()} == expected
    assert set(ng706) == ng706_stages
    assert {stage: ng706[stage][0] for stage in ng706_stages} == {stage: expected[stage] for stage in ng706_stages}
    # the same P shown by all three, and it is the exact one
    for stage, (count, p_text) in whatif.items():
        assert report[stage][1] == p_text and (stage not in ng706 or ng706[stage][1] == p_text)
        if count is not None:
            assert p_text is not None
            assert float(p_text) == pytest.approx(hot_probability_by_recursion(*shapes[stage], count), abs=5e-5)


def test_on_the_small_example_with_qp_hashing_rtsws(small_data, write_fabric, tmp_path):
    """16 NICs over 16 uplinks, 16 RTSW uplinks over 2 ATSW uplinks; hosts open 16 QPs, too few for
    the RTSW tier only."""
    fabric = _qp_hashing_small(small_data, write_fabric)
    _assert_all_agree(fabric, tmp_path, {"zones 1, 2 RTSW uplinks"})


def test_on_a_small_fabric_whose_smallest_count_is_followed_by_a_worse_one(small_data, write_fabric, tmp_path):
    """16 NICs over 15 uplinks (5 CTSWs x 3 links): P(1.5x) is not monotone in the QP count there."""
    small_data["aggregation"]["expected_oversubscription"] = "1:6"
    fabric = _qp_hashing_small(small_data, write_fabric, ctsw_count=5, links_per_rtsw_ctsw=3,
                               rtsw_oversubscription="15:16")
    smallest = smallest_meeting_count(16, 15)
    assert smallest is not None and hot_probability_by_recursion(16, 15, smallest + 1) >= TARGET
    _assert_all_agree(fabric, tmp_path, {"zones 1, 2 RTSW uplinks"})


def test_on_meta_24k(tmp_path):
    _assert_all_agree(META.parent, tmp_path, {"zones 1, 2, 3, 4, 5, 6, 7, 8 RTSW uplinks"})


def test_meta_24k_with_a_ctsw_down_gets_the_smallest_count():
    """Issue 31, 5: with z01-ctsw01 down, zone 1's RTSWs have 15 uplinks for 16 NICs."""
    doc = _whatif(META.parent, "--fail", "z01-ctsw01")
    [failed] = [s for s in doc["stages"] if s["scenario"] == "z01-ctsw01 failed"]
    assert (failed["flows"], failed["links"]) == (16, 15)
    smallest = smallest_meeting_count(16, 15)
    assert failed["recommended_qps"] == smallest
    assert failed["recommended"]["p_hot"] == pytest.approx(hot_probability_by_recursion(16, 15, smallest), abs=1e-10)


def test_one_trial_budget_and_none_for_ng706(small_data, write_fabric, tmp_path, monkeypatch):
    """The command's default and the report's are the module's one constant; NG706 draws nothing."""
    default = _whatif(SMALL)["trials"]
    section = _report_page(SMALL, tmp_path)
    assert [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:seeded draws|trials)", section)] == [default]
    assert default == getattr(ecmp, "TRIALS", None)

    fabric = _qp_hashing_small(small_data, write_fabric)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    for remembered in (ecmp._result_store, ecmp._remembered):
        remembered.cache_clear()

    def no_draw(*args: Any) -> None:
        raise AssertionError(f"NG706 drew {args}")

    monkeypatch.setattr(ecmp, "_draw", no_draw)
    try:
        assert set(_from_ng706(fabric)) == {"zones 1, 2 RTSW uplinks"}
    finally:
        for remembered in (ecmp._result_store, ecmp._remembered):
            remembered.cache_clear()
