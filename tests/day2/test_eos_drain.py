"""The EOS drain's lines and read-back (netgen/nos/eos/drain.py) on the small example's rendered EOS
configs: the prepend goes into each permit entry of every outbound route-map and nowhere else, a
prepend netgen did not set makes the state neither drained nor undrained and is never removed. The
deploy tier runs the lines on the device emulator (tests/deploy/test_drain_eos.py)."""

from __future__ import annotations

import difflib

import pytest

from netgen.nos.eos.drain import EosDrainScope, drain_lines, drain_state, scope_of, undrain_lines, with_drain
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render

PREPEND = "set as-path prepend 4200000001 4200000001 4200000001"


@pytest.fixture(scope="module")
def ctsw(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("eos")
    assert run_cli("render", str(SMALL), "-o", str(out), "--device", "z01-ctsw01").exit_code == 0
    return (out / "z01-ctsw01" / "z01-ctsw01.cfg").read_text()


def test_each_permit_entry_of_the_outbound_maps_and_nothing_else(ctsw):
    scope = scope_of(ctsw)
    assert scope == EosDrainScope(4200000001, (("RM-FABRIC-OUT", 10, ""), ("RM-FABRIC-OUT", 20, ""),
                                               ("RM-ZONE-01-OUT", 10, ""), ("RM-ZONE-01-OUT", 20, "")))
    drained = with_drain(ctsw, scope)
    added = [line for line in difflib.ndiff(ctsw.splitlines(), drained.splitlines()) if line[:1] in "+-"]
    assert added == [f"+    {PREPEND}"] * 4  # the inbound maps and everything else untouched
    assert drain_state(ctsw) is False and drain_state(drained) is True
    assert with_drain(drained, scope_of(drained)) == drained
    assert drain_lines(scope)[:2] == ["route-map RM-FABRIC-OUT permit 10", f"   {PREPEND}"]
    assert undrain_lines(scope_of(drained))[:2] == ["route-map RM-FABRIC-OUT permit 10", "   no set as-path prepend"]


def test_a_prepend_netgen_did_not_set_is_neither_state_and_never_removed(ctsw):
    entry = "route-map RM-FABRIC-OUT permit 10\n   match ip address prefix-list PL-FABRIC-V4\n"
    assert entry in ctsw
    theirs = ctsw.replace(entry, f"{entry}   set as-path prepend 65000\n")
    assert drain_state(theirs) is None
    assert undrain_lines(scope_of(theirs)) == []
    assert scope_of("hostname x\n") is None and drain_state("hostname x\n") is False  # no drain on it


def test_a_link_drain_is_a_copy_of_the_inbound_map_with_a_lower_preference_and_leaves_the_switch_drain_alone(ctsw):
    from netgen.nos.eos.drain import (  # noqa: PLC0415
        EosLinkSession,
        drained_peers,
        session_drain_lines,
        session_scope,
        session_undrain_lines,
        with_session_drain,
    )

    peers = ("10.1.16.1", "fd00:0:1:1000::1")  # z01-rtsw001's first cable, both families
    assert session_scope(ctsw, peers) == (4200000001, (EosLinkSession("10.1.16.1", "ipv4", "RM-ZONE-01-IN", False),
                                                       EosLinkSession("fd00:0:1:1000::1", "ipv6", "RM-ZONE-01-IN",
                                                                      False)))
    lines = session_drain_lines(ctsw, peers)
    assert lines[0] == "no route-map NG-LINK-DRAIN-RM-ZONE-01-IN"
    assert [line for line in lines if line.startswith("route-map ")] == [
        "route-map NG-LINK-DRAIN-RM-ZONE-01-IN permit 10", "route-map NG-LINK-DRAIN-RM-ZONE-01-IN permit 20"]
    assert lines.count("   set local-preference 50") == 2
    assert lines[-1] == "      neighbor fd00:0:1:1000::1 route-map NG-LINK-DRAIN-RM-ZONE-01-IN in"
    drained = with_session_drain(ctsw, peers)
    assert drained_peers(drained) == set(peers) and drained_peers(ctsw) == frozenset()
    assert drain_state(drained) is False  # the copy is none of the switch drain's maps
    switch = with_drain(drained, scope_of(drained))
    assert drain_state(switch) is True and drained_peers(switch) == set(peers)
    assert session_undrain_lines(drained, peers)[-1] == "no route-map NG-LINK-DRAIN-RM-ZONE-01-IN"
    assert session_undrain_lines(ctsw, peers) == []
