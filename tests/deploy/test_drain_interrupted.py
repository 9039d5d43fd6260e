"""Day-2 when switches do not answer or a run dies half-way (EOS emulator behind real SSH): the
capacity guard refuses what it cannot read; a drain or an undrain whose save was refused, or whose
answer was lost after the commit, is reported with what the switch was read back holding, and the
same command run again finishes it; the undrain then gives back running and startup byte for byte."""

from __future__ import annotations

import json

import pytest

from netgen.nos.eos.drain import drain_state, drained_peers
from tests.conftest import run_cli

pytestmark = pytest.mark.deploy

CTSW = "z01-ctsw01"


def _run(site, verb: str, *args: str) -> tuple[int, dict]:
    result = run_cli(verb, str(site.fabric), *args, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def _held(site, name: str) -> tuple[bool | None, bool | None]:
    device = site.fleet.device(name)
    return drain_state(device.running_config()), drain_state(device.startup_config())


def test_the_guard_refuses_when_it_cannot_read_the_rest_of_the_zone_s_spine(converged, state_dir):
    """Every CTSW of zone 1 (the target too) and every ATSW unreachable: they count as drained after
    the change, so max_drained_ctsw_per_zone breaks: refused, dry run and real run, nothing touched.
    Before: counted as drained before the change as well, the change was "no worse" and allowed."""
    site = converged
    dark = [n for n in site.names if n.startswith("z01-ctsw") or "atsw" in n]
    for name in dark:
        site.fleet.device(name).set_fault(unreachable=True)
    for extra in (("--dry-run",), ()):
        code, report = _run(site, "drain", CTSW, *extra)
        assert code == 1 and report["refused"] is True, report
        assert set(report["unreadable"]) == set(dark)
        rules = {v["rule"] for v in report["capacity"]["violations"]}
        assert "maintenance.max_drained_ctsw_per_zone" in rules and "maintenance.max_drained_atsw" in rules
        assert report["switches"] == []
    site.fleet.device(CTSW).clear_faults()
    assert site.commits(CTSW) == [] and _held(site, CTSW) == (False, False)


@pytest.mark.parametrize("verb", ["drain", "undrain"])
def test_a_refused_save_is_reported_as_read_back_and_a_rerun_finishes_it(converged, state_dir, verb):
    site = converged
    original = site.running(CTSW)
    if verb == "undrain":
        assert _run(site, "drain", CTSW)[0] == 0
    site.fleet.device(CTSW).set_fault(save_error=True)
    code, report = _run(site, verb, CTSW)
    (switch,) = report["switches"]
    assert code == 1 and switch["action"] == "failed", report
    # the failed report says what the switch holds: the change runs, the save is missing
    want_running = "drained" if verb == "drain" else "not drained"
    assert switch["after"]["running"] == want_running and switch["after"]["saved"] != want_running, switch
    assert _held(site, CTSW) == ((True, False) if verb == "drain" else (False, True))
    site.fleet.device(CTSW).clear_faults()
    code, report = _run(site, verb, CTSW)  # the same command again finishes it
    assert code == 0 and report["switches"][0]["action"] == f"{verb}ed", report
    assert _held(site, CTSW) == ((True, True) if verb == "drain" else (False, False))
    if verb == "drain":  # and the undrain restores the switch byte for byte, running and startup
        assert _run(site, "undrain", CTSW)[0] == 0
    assert site.running(CTSW) == original
    assert site.fleet.device(CTSW).startup_config().splitlines()[2:] == original.splitlines()[2:]


def test_a_drain_whose_save_never_got_there_is_finished_by_the_next_drain(converged, state_dir):
    """The connection dies between the commit and the save (the save's line never reaches the switch):
    running drained, startup not. Before: every later drain and undrain refused ("running-config
    differs from startup-config")."""
    site = converged
    original = site.running(CTSW)
    site.fleet.device(CTSW).set_fault(drop_before=r"^copy running-config")
    code, report = _run(site, "drain", CTSW)
    assert code == 1 and report["switches"][0]["action"] == "failed"
    assert _held(site, CTSW) == (True, False)
    site.fleet.device(CTSW).clear_faults()
    code, report = _run(site, "undrain", CTSW)  # undrain from there: nothing of the drain is left
    assert code == 0 and report["switches"][0]["action"] == "undrained", report
    assert _held(site, CTSW) == (False, False) and site.running(CTSW) == original


LINK_ENDS = ("z02-rtsw001", "z02-ctsw01")


def _sessions_held(site, name: str) -> tuple[frozenset[str], frozenset[str]]:
    device = site.fleet.device(name)
    return drained_peers(device.running_config()), drained_peers(device.startup_config())


@pytest.mark.parametrize("fault", [{"save_error": True}, {"drop_before": r"^copy running-config"}])
def test_a_link_drain_committed_and_not_saved_is_finished_by_the_next_and_undone_byte_for_byte(
        converged, state_dir, fault):
    """A link drain whose save was refused or never arrived: each end runs the drained sessions and
    its startup does not. Before: every later link drain and undrain refused ("running-config differs
    from startup-config") because only a switch drain counted as netgen's own difference."""
    site = converged
    link = "--".join(LINK_ENDS)
    original = {n: site.running(n) for n in LINK_ENDS}
    end = LINK_ENDS[1]
    site.fleet.device(end).set_fault(**fault)
    code, report = _run(site, "drain", link)
    assert code == 1, report
    failed = {s["device"]: s for s in report["switches"]}[end]
    assert failed["action"] == "failed" and failed["after"] is not None, failed  # what it was read back holding
    running, saved = _sessions_held(site, end)
    assert len(running) == 8 and saved == frozenset()
    site.fleet.device(end).clear_faults()
    code, report = _run(site, "drain", link)  # the same command finishes it: only the save was missing
    assert code == 0, report
    assert {s["device"]: s["action"] for s in report["switches"]}[end] == "sessions drained"
    assert _sessions_held(site, end) == (running, running)

    site.fleet.device(end).set_fault(**fault)  # and an undrain that stops at the same point
    assert _run(site, "undrain", link)[0] == 1
    assert _sessions_held(site, end) == (frozenset(), running)
    site.fleet.device(end).clear_faults()
    code, report = _run(site, "undrain", link)
    assert code == 0, report
    for name in LINK_ENDS:
        assert site.running(name) == original[name]
        assert site.fleet.device(name).startup_config().splitlines()[2:] == original[name].splitlines()[2:]
