"""`netgen grow`: the rollout plan of the small example grown by one rack in each zone (with the
ATSW oversubscription the extra rack gives, 1:10), and the growths it refuses: a rack fewer (a
switch removed) and a renumbered fabric pool (every session replaced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import SMALL, run_cli
from tests.support.fabrics import edited_small, one_more_rack

pytestmark = pytest.mark.render


def _fabric(tmp_path: Path, edit) -> Path:
    return edited_small(tmp_path / "grown", edit)


def _grow(fabric: Path) -> tuple[int, dict]:
    result = run_cli("grow", str(fabric), "--from", str(SMALL), "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def testone_more_rack_per_zone_new_switches_first_then_only_the_ctsws_that_gain_its_sessions(tmp_path):
    code, plan = _grow(_fabric(tmp_path, one_more_rack))
    assert code == 0 and plan["refused"] is False, plan
    assert plan["new"] == ["z01-rtsw005", "z02-rtsw005"] and plan["removed"] == []
    ctsws = [f"z0{z}-ctsw0{c}" for z in (1, 2) for c in range(1, 5)]
    # every existing RTSW and ATSW renders as before: nothing to push to them
    assert plan["changed"] == ctsws
    assert [(p["phase"], p["devices"]) for p in plan["phases"]] == [
        ("new switches", ["z01-rtsw005", "z02-rtsw005"]), ("existing CTSWs", ctsws)]
    # each CTSW gains the new rack's 4 links, IPv4 and IPv6: 8 sessions, all to the new RTSW; none lost
    assert plan["removed_sessions"] == {}
    for ctsw in ctsws:
        gained = plan["added_sessions"][ctsw]
        assert len(gained) == 8 and {s["peer"].split(":")[0] for s in gained} == {f"{ctsw[:3]}-rtsw005"}


def test_a_rack_fewer_is_no_growth(tmp_path):
    def fewer(data: dict) -> None:
        data["zones"][1]["racks"] = 3
        data["aggregation"]["expected_oversubscription"] = "1:6"
        data["zones"][0]["racks"] = 3

    code, plan = _grow(_fabric(tmp_path, fewer))
    assert code == 1 and plan["refused"] is True
    assert plan["removed"] == ["z01-rtsw004", "z02-rtsw004"]
    assert set(plan["removed_sessions"]) == {f"z0{z}-ctsw0{c}" for z in (1, 2) for c in range(1, 5)}


def test_a_renumbered_pool_replaces_sessions_and_is_refused(tmp_path):
    def renumber(data: dict) -> None:
        data["addressing"]["p2p_ipv4"] = "10.2.0.0/16"

    code, plan = _grow(_fabric(tmp_path, renumber))
    assert code == 1 and plan["new"] == [] and plan["removed"] == []
    lost = plan["removed_sessions"]["z01-rtsw001"]
    assert lost and all(s["address"].startswith("10.1.") for s in lost if "." in s["address"])
    assert all(s["address"].startswith("10.2.") for s in plan["added_sessions"]["z01-rtsw001"] if "." in s["address"])
