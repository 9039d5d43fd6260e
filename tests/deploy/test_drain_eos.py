"""`netgen drain` / `netgen undrain` on EOS switches (the device emulator behind real SSH, as the
other deploy tests): the capacity guard reads every CTSW of the zone and every ATSW from the
switches, refuses a second CTSW of a zone, goes on with --force and journals why; each drain is
read back from the switch (running and startup config), is repeat-safe, and the undrain gives back
exactly the config the switch ran before. Each command is its own process and SSH session: a state
read back by the next command survived a reconnect."""

from __future__ import annotations

import json

import pytest

from netgen.deploy.driver import DRAINED, NOT_DRAINED
from netgen.nos.eos.drain import drain_state, drained_peers
from tests.conftest import run_cli, topology_of

pytestmark = pytest.mark.deploy

CTSW, SECOND = "z01-ctsw01", "z01-ctsw02"
PREPEND = "set as-path prepend 4200000001 4200000001 4200000001"


def _run(site, verb: str, *args: str) -> tuple[int, dict]:
    result = run_cli(verb, str(site.fabric), *args, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_drain_is_read_back_repeat_safe_guarded_and_undone_exactly(converged, state_dir):
    site = converged
    device = site.fleet.device(CTSW)
    original = {n: site.running(n) for n in site.names}

    code, report = _run(site, "drain", CTSW, "--why", "optics swap on Ethernet3/1")
    assert code == 0, report
    (switch,) = report["switches"]
    assert (switch["device"], switch["action"]) == (CTSW, "drained")
    assert switch["after"]["running"] == switch["after"]["saved"] == DRAINED
    # read back by the test from the switch itself: every permit entry of its outbound maps, running and saved
    assert drain_state(device.running_config()) is True and drain_state(device.startup_config()) is True
    assert device.running_config().count(PREPEND) == 4
    # the guard read the zone's four CTSWs and the fabric's ATSWs, all undrained before
    read = report["read"]
    assert {n for n in read if "ctsw" in n} == {f"z01-ctsw0{i}" for i in range(1, 5)}
    assert any("atsw" in n for n in read) and all(r["state"] == NOT_DRAINED for r in read.values())
    assert report["capacity"]["allowed"] is True
    (zone,) = report["capacity"]["zones"]
    assert (zone["zone"], zone["ctsw_drained"], zone["spine_pct"]) == (1, [CTSW], 75.0)
    journal = [json.loads(line) for line in (state_dir / "drain" / f"{report['change_id']}.jsonl").read_text()
               .splitlines()]
    assert journal[0]["why"] == "optics swap on Ethernet3/1" and [r["state"] for r in journal[1:]] == [
        "draining", "drained", "done"]

    # repeat-safe: a second drain reads it back drained and changes nothing
    commits = site.commits(CTSW)
    code, report = _run(site, "drain", CTSW)
    assert code == 0 and report["switches"][0]["action"] == "already drained"
    assert site.commits(CTSW) == commits

    # a second CTSW of the zone breaks maintenance.max_drained_ctsw_per_zone (1): refused, untouched
    code, report = _run(site, "drain", SECOND)
    assert code == 1 and report["refused"] is True and report["switches"] == []
    # ... and leaves 50% of the zone's spine bandwidth, below min_zone_spine_bandwidth_pct (75)
    assert [v["rule"] for v in report["capacity"]["violations"]] == [
        "maintenance.max_drained_ctsw_per_zone", "maintenance.min_zone_spine_bandwidth_pct"]
    assert site.running(SECOND) == original[SECOND] and site.commits(SECOND) == []
    assert report["read"][CTSW]["state"] == DRAINED  # what the guard saw: read from the switch

    # forced with a reason: drained, and the reason is in the journal
    code, report = _run(site, "drain", SECOND, "--force", "both line cards of the pair are swapped tonight")
    assert code == 0 and report["switches"][0]["action"] == "drained"
    first = json.loads((state_dir / "drain" / f"{report['change_id']}.jsonl").read_text().splitlines()[0])
    assert first["forced"] == "both line cards of the pair are swapped tonight"
    assert len(first["violations"]) == 2

    # undrain both: exactly the config each ran before, saved
    code, report = _run(site, "undrain", f"{CTSW},{SECOND}")
    assert code == 0, report
    assert {s["device"]: s["action"] for s in report["switches"]} == {CTSW: "undrained", SECOND: "undrained"}
    for name in (CTSW, SECOND):
        assert site.running(name) == original[name]
        assert drain_state(site.fleet.device(name).startup_config()) is False
    code, report = _run(site, "undrain", CTSW)
    assert code == 0 and report["switches"][0]["action"] == "already undrained"


def test_dry_run_reads_and_judges_only(converged):
    code, report = _run(converged, "drain", "role:ctsw", "--dry-run")
    assert code == 1 and report["refused"] is True and report["switches"] == []
    rules = {v["rule"] for v in report["capacity"]["violations"]}
    assert "maintenance.max_drained_ctsw_per_zone" in rules
    assert all(converged.commits(n) == [] for n in converged.names)


def test_a_link_drains_its_sessions_at_both_ends_and_nothing_else(converged, state_dir):
    """The four cables between z02-rtsw001 and z02-ctsw01: each end's 8 sessions over them (4 cables,
    IPv4 and IPv6) send through the drain's copy of their group's outbound map, read back by the test
    from running and startup config; no other session, no other switch; repeat-safe; the undrain gives
    back each end's config exactly."""
    site = converged
    ends = ("z02-rtsw001", "z02-ctsw01")
    link = "--".join(ends)
    code, report = _run(site, "drain", link, "--dry-run")
    assert code == 0 and report["capacity"]["allowed"] is True, report
    (rtsw,) = report["capacity"]["rtsw"]  # 16 -> 12 paths
    assert (rtsw["device"], rtsw["paths_before"], rtsw["paths_after"]) == ("z02-rtsw001", 16, 12)
    original = {n: site.running(n) for n in site.names}

    code, report = _run(site, "drain", link, "--why", "CRC errors on one of the four")
    assert code == 0, report
    switches = {s["device"]: s for s in report["switches"]}
    assert set(switches) == set(ends) and all(s["action"] == "sessions drained" for s in switches.values())
    topo = topology_of(site.fabric)
    for name in ends:
        device = site.fleet.device(name)
        other = ends[1] if name == ends[0] else ends[0]
        peers = {str(end.ipv4.ip) for link_ in topo.links for end in (link_.lower, link_.upper)
                 if {link_.lower.device, link_.upper.device} == set(ends) and end.device == other}
        peers |= {str(end.ipv6.ip) for link_ in topo.links for end in (link_.lower, link_.upper)
                  if {link_.lower.device, link_.upper.device} == set(ends) and end.device == other}
        assert len(peers) == 8 and set(switches[name]["sessions"]) == peers
        # read back by the test, running and saved: exactly those sessions, and no switch drain
        assert drained_peers(device.running_config()) == peers == drained_peers(device.startup_config())
        assert drain_state(device.running_config()) is False
    assert all(site.commits(n) == [] for n in site.names if n not in ends)
    journal = [json.loads(line)["state"] for line in (state_dir / "drain" / f"{report['change_id']}.jsonl")
               .read_text().splitlines()]
    assert journal.count("sessions drained") == 2 and "drained" not in journal  # never a switch's drain

    # repeat-safe, and the guard now sees the four links out: a drain of the CTSW reads them
    commits = {n: site.commits(n) for n in ends}
    code, report = _run(site, "drain", link)
    assert code == 0 and {s["action"] for s in report["switches"]} == {"sessions already drained"}
    assert {n: site.commits(n) for n in ends} == commits
    code, report = _run(site, "drain", ends[1], "--dry-run")
    assert len(report["read"][ends[1]]["drained_sessions"]["running"]) == 8, report["read"][ends[1]]

    code, report = _run(site, "undrain", link)
    assert code == 0 and {s["action"] for s in report["switches"]} == {"sessions undrained"}, report
    for name in ends:
        assert site.running(name) == original[name]
        assert drained_peers(site.fleet.device(name).startup_config()) == frozenset()


def test_unknown_targets_and_a_blank_force_are_exit_2(converged):
    code, report = _run(converged, "drain", "z01-ctsw99")
    assert code == 2 and "z01-ctsw99" in report["error"]
    code, report = _run(converged, "drain", "z01-ctsw02", "--force", "  ")
    assert code == 2 and "--force needs a reason" in report["error"]
