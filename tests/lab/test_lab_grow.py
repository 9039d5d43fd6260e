"""`netgen lab grow`: zone 1 of the small example running in the lab (4 racks, 2 CTSWs: 6 FRR
routers) grows by the rack the intent adds (tests/day2/test_grow.py's fabric, one more rack per zone),
then by a CTSW of the slice, and every session it had stays up throughout. The test reads that from
FRR itself, beside netgen's report: each session's established and dropped connection counts
on both ends, before and after. Growing back to the smaller fabric is refused, nothing touched."""

from __future__ import annotations

import json

import pytest

from netgen.lab.netns import NetnsBackend
from tests.conftest import SMALL
from tests.lab.conftest import HostSnapshot, assert_nothing_left, cli_json, lab_name, needs_lab
from tests.support.fabrics import edited_small, one_more_rack

pytestmark = [pytest.mark.lab, needs_lab]
CTSW_PORTS = ["Ethernet3/17/1", "Ethernet3/18/1", "Ethernet3/19/1", "Ethernet3/20/1"]  # the fifth rack's


def _sessions(lab: str) -> dict[tuple[str, str], tuple[str, int, int]]:
    """(router, peer) -> (state, connections established, connections dropped), read from each
    router's FRR (its uptime epoch is computed at each read and may move by a second)."""
    backend = NetnsBackend(lab)
    seen = {}
    for node in backend.plan().routers():
        out = backend.exec(node.name, ["vtysh", "-c", "show bgp summary json"])
        assert out.ok, out.stderr
        for family in json.loads(out.stdout).values():
            for peer, info in family.get("peers", {}).items():
                seen[node.name, peer] = (info["state"], info["connectionsEstablished"],
                                         info["connectionsDropped"])
    return seen


def _up(seen: dict[tuple[str, str], tuple[str, int, int]]) -> dict[tuple[str, str], tuple[str, int, int]]:
    return {key: value for key, value in seen.items() if value[0] == "Established"}


def test_a_rack_then_a_ctsw_join_a_running_lab_and_no_session_resets(tmp_path):
    before = HostSnapshot.take()
    name = lab_name("g")
    grown = edited_small(tmp_path / "grown", one_more_rack)
    code, report = cli_json("lab", "up", str(SMALL), "--name", name, "--zone", "1", "--ctsw", "2")
    try:
        assert code == 0 and report["sessions_established"] == 64, report
        first = _up(_sessions(name))
        # the state keeps each router's FRR config with the session key filled in: owner-only
        assert NetnsBackend(name).state_path.stat().st_mode & 0o777 == 0o600
        assert len(first) == 2 * 64  # both ends of every session

        # the intent's fifth rack: the new RTSW and its host first, then the two CTSWs reloaded
        code, report = cli_json("lab", "grow", str(grown), "--name", name)
        assert code == 0 and report["ok"] is True, json.dumps(report)  # whole: a dict is cut short
        assert report["new_nodes"] == ["z01-rtsw005", "z01-r005-h01"]
        assert report["new_ports"] == {"z01-ctsw01": CTSW_PORTS, "z01-ctsw02": CTSW_PORTS}
        assert report["reloaded"] == ["z01-ctsw01", "z01-ctsw02"]
        assert report["existing_sessions"] == {"kept_up": 64, "reset": [], "not_up_before": []}
        assert report["sessions_established"] == report["sessions_expected"] == 80 and report["converged"]
        second = _up(_sessions(name))
        assert {key: second.get(key) for key in first} == first  # no connection made or dropped since, on both ends
        new = set(second) - set(first)
        assert len(new) == 2 * 16 and {node for node, _ in new} == {"z01-ctsw01", "z01-ctsw02", "z01-rtsw005"}

        # a wider slice of the same fabric: a third CTSW; every RTSW gains 4 ports, none reloads
        code, report = cli_json("lab", "grow", str(grown), "--name", name, "--ctsw", "3")
        assert code == 0 and report["ok"] is True, json.dumps(report)  # whole: a dict is cut short
        assert report["new_nodes"] == ["z01-ctsw03"] and report["reloaded"] == []
        assert sorted(report["new_ports"]) == [f"z01-rtsw00{r}" for r in range(1, 6)]
        assert report["existing_sessions"]["kept_up"] == 80 and report["sessions_established"] == 120
        third = _up(_sessions(name))
        assert {key: third.get(key) for key in second} == second
        # the kernel of an old RTSW forwards to the new rack over 12 paths (3 CTSWs x 4 links)
        backend = NetnsBackend(name)
        subnet = next(p for p in backend.plan().nodes["z01-rtsw005"].announces if p.startswith("10.128."))
        route = json.loads(backend.exec("z01-rtsw001", ["ip", "-j", "route", "show", subnet]).stdout)
        assert len(route) == 1 and len(route[0]["nexthops"]) == 12

        # back to the fabric without the fifth rack: refused, nothing touched
        namespaces = NetnsBackend(name).state()["namespaces"]
        code, report = cli_json("lab", "grow", str(SMALL), "--name", name)
        assert code == 1 and report["refused"] is True
        assert "node z01-rtsw005 would go" in report["refusals"]
        assert NetnsBackend(name).state()["namespaces"] == namespaces
        assert _up(_sessions(name)) == third
    finally:
        code, down = cli_json("lab", "down", "--name", name)
    assert code == 0 and down["namespaces_removed"] == 5 + 3 + 5
    assert_nothing_left(before, name)
