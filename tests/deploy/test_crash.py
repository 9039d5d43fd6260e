"""The crash tier (EOS emulator behind real SSH): a drain, an undrain, a link drain and a deploy run
as netgen processes of their own and killed by PID (SIGKILL) at each point of their journaled steps
in turn: while the guard reads, after the step is journaled and before its first command, after the
commit, after the save. The switch holds the line it was sent (the emulator's hold faults) until
the process is gone, so each point is hit every time, however busy the machine. Afterwards, read by
the test from the switch: a rerun of the same command finishes the change, `netgen recover` puts back
what was in flight, `netgen undrain` undoes a drain, running and startup byte for byte. A switch that
answers late is reported with what it was read back holding, and the rerun finishes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netgen.nos.eos.drain import drain_state, drained_peers
from tests.conftest import run_cli

pytestmark = pytest.mark.deploy

CTSW = "z01-ctsw01"
LINK_ENDS = ("z02-rtsw001", "z02-ctsw01")
WAIT_S = 600  # a netgen process on a busy two-core machine: the test waits as long as the process runs

# where a run is killed: the hold fault that stops the switch there, and the last journal line of the
# switch by then (None: nothing journaled for it yet)
POINTS = {
    "read": ({"hold_before": r"^show running-config"}, None),
    "announced": ({"hold_before": r"^configure session"}, "ing"),
    "committed": ({"hold_after": r"^commit$"}, "ing"),
    "saved": ({"hold_after": r"^copy running-config"}, "ing"),
}


def _netgen(site, *argv: str) -> tuple[int, dict]:
    result = run_cli(*argv, "--json")
    assert "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _killed(site, device: str, hold: dict, *argv: str) -> None:
    """netgen ARGV as a process of its own, killed by PID once `device` holds (its fault fired)."""
    switch = site.fleet.device(device)
    switch.held.clear()
    switch.set_fault(**hold)
    process = subprocess.Popen([sys.executable, "-m", "netgen.cli", *argv, "--json"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    deadline = time.monotonic() + WAIT_S
    while not switch.held.wait(0.2):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"{argv} ended before {device} held ({hold}): {out[-2000:]} {err[-2000:]}")
    process.kill()
    process.communicate(timeout=WAIT_S)
    # every byte the dead process sent has run on the switches (a real switch, too, runs what reached
    # it before the client died): what it left behind is all there before anything else looks
    assert site.fleet.wait_idle(WAIT_S)
    switch.clear_faults()


def _journal(state_dir: Path, folder: str) -> tuple[str, list[dict]]:
    """The one journal of `folder` (drain, deploy): its change id and records."""
    (path,) = sorted((state_dir / folder).glob("*.jsonl"))
    return path.stem, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _forget_journals(state_dir: Path) -> None:
    for path in (*state_dir.glob("drain/*.jsonl"), *state_dir.glob("deploy/*.jsonl")):
        path.unlink()


def _last(records: list[dict], device: str) -> str | None:
    states = [r["state"] for r in records if r.get("device") == device]
    return states[-1] if states else None


def _held(site, name: str) -> tuple[bool | None, bool | None]:
    device = site.fleet.device(name)
    return drain_state(device.running_config()), drain_state(device.startup_config())


def _as_before(site, name: str, original: str) -> None:
    """Running and startup config both exactly `original` (the header lines aside), nothing pending."""
    device = site.fleet.device(name)
    assert device.running_config() == original
    assert device.startup_config().splitlines()[2:] == original.splitlines()[2:]
    assert device.pending_sessions == {}, (name, [(e.kind, e.session, e.detail) for e in device.history][-30:])


@pytest.mark.parametrize("point", list(POINTS))
def test_a_drain_and_an_undrain_killed_at_each_step_are_finished_or_put_back_byte_for_byte(
        converged, state_dir, point):
    site = converged
    hold, journaled = POINTS[point]
    original = site.running(CTSW)
    fabric = str(site.fabric)

    # 1. a drain killed there, then `netgen recover`: the switch as before the drain
    _killed(site, CTSW, hold, "drain", fabric, CTSW)
    if journaled is None:  # killed while the guard read: nothing journaled, nothing changed
        assert not list(state_dir.glob("drain/*.jsonl")) and _held(site, CTSW) == (False, False)
    else:
        change, records = _journal(state_dir, "drain")
        assert _last(records, CTSW) == "draining", records
        code, report = _netgen(site, "recover", fabric, "--change-id", change)
        assert code == 0 and report["kind"] == "drain" and report["in_flight"] == [CTSW], report
        assert report["undrain"] is True and report["recovering"] is True
        _as_before(site, CTSW, original)
        code, report = _netgen(site, "recover", fabric, "--change-id", change)  # settled: nothing in flight
        assert code == 0 and report["in_flight"] == [], report
        _forget_journals(state_dir)

    # 2. killed there again, then the same drain again: it finishes (the dead holder's lock taken over)
    _killed(site, CTSW, hold, "drain", fabric, CTSW)
    code, report = _netgen(site, "drain", fabric, CTSW)
    assert code == 0 and report["switches"][0]["action"] in ("drained", "already drained"), report
    assert _held(site, CTSW) == (True, True)
    _forget_journals(state_dir)

    # 3. an undrain killed there, then `netgen recover`: drained again, as before the undrain
    _killed(site, CTSW, hold, "undrain", fabric, CTSW)
    if journaled is not None:
        change, records = _journal(state_dir, "drain")
        assert _last(records, CTSW) == "undraining", records
        code, report = _netgen(site, "recover", fabric, "--change-id", change)
        assert code == 0 and report["undrain"] is False, report
        assert _held(site, CTSW) == (True, True)
        _forget_journals(state_dir)
        _killed(site, CTSW, hold, "undrain", fabric, CTSW)

    # 4. and the undrain run again: the switch exactly as it was before any of it
    code, report = _netgen(site, "undrain", fabric, CTSW)
    assert code == 0, report
    _as_before(site, CTSW, original)


@pytest.mark.parametrize("point", ["announced", "committed", "saved"])
def test_a_link_drain_killed_at_each_step_is_put_back_at_both_ends_or_finished(converged, state_dir, point):
    site = converged
    hold, _ = POINTS[point]
    original = {n: site.running(n) for n in LINK_ENDS}
    fabric, link = str(site.fabric), "--".join(LINK_ENDS)
    _killed(site, LINK_ENDS[1], hold, "drain", fabric, link)
    change, records = _journal(state_dir, "drain")
    assert _last(records, LINK_ENDS[1]) == "sessions draining", records
    code, report = _netgen(site, "recover", fabric, "--change-id", change)
    assert code == 0 and LINK_ENDS[1] in report["in_flight"], report
    for name in LINK_ENDS:  # the whole link back, both ends, whichever end was in flight
        _as_before(site, name, original[name])
    _forget_journals(state_dir)

    _killed(site, LINK_ENDS[1], hold, "drain", fabric, link)
    change, _ = _journal(state_dir, "drain")
    code, report = _netgen(site, "recover", fabric, "--change-id", change, "--confirm")  # carried through
    assert code == 0 and report["undrain"] is False, report
    for name in LINK_ENDS:
        device = site.fleet.device(name)
        assert len(drained_peers(device.running_config())) == 8 == len(drained_peers(device.startup_config()))
    code, report = _netgen(site, "undrain", fabric, link)
    assert code == 0, report
    for name in LINK_ENDS:
        _as_before(site, name, original[name])


DEPLOY_POINTS = {  # the hold fault, the device's last journal state once killed, what recover makes of it
    "committed": ({"hold_after": r"^commit timer"}, "committing", "rolled_back"),
    "confirming": ({"hold_after": r"^configure session \S+ commit$"}, "confirming", "changed"),
    "saved": ({"hold_after": r"^copy running-config"}, "confirming", "changed"),
}


@pytest.mark.parametrize("point", list(DEPLOY_POINTS))
def test_a_deploy_killed_at_each_step_is_recovered_to_one_config_running_and_saved(converged, state_dir, point):
    site = converged
    hold, journaled, settled = DEPLOY_POINTS[point]
    original = site.running(CTSW)
    site.change_weights()
    fabric = str(site.fabric)
    _killed(site, CTSW, hold, "deploy", fabric, "--limit", CTSW, "--change-id", f"crash-{point}")
    change, records = _journal(state_dir, "deploy")
    assert change == f"crash-{point}" and _last(records, CTSW) == journaled, records
    code, report = _netgen(site, "recover", fabric, "--change-id", change)
    assert code == 0 and report["devices"][CTSW]["status"] == settled, report
    device = site.fleet.device(CTSW)
    assert device.pending_sessions == {}, (CTSW, [(e.kind, e.session, e.detail) for e in device.history][-30:])
    assert device.running_config().splitlines()[2:] == device.startup_config().splitlines()[2:]
    if settled == "rolled_back":
        _as_before(site, CTSW, original)
    else:
        assert device.running_config() != original


def test_a_switch_that_answers_late_is_reported_as_read_back_and_the_rerun_finishes(converged, state_dir):
    """The commit's answer comes after the command timeout: the run fails, and its report carries what
    a new connection read back (running drained, startup not); the same drain again finishes it."""
    site = converged
    site.fleet.device(CTSW).set_fault(hold_after=r"^commit$")
    code, report = _netgen(site, "drain", str(site.fabric), CTSW)
    (switch,) = report["switches"]
    assert code == 1 and switch["action"] == "failed", report
    assert switch["after"]["running"] == "drained" and switch["after"]["saved"] == "not drained", switch
    code, report = _netgen(site, "drain", str(site.fabric), CTSW)
    assert code == 0 and _held(site, CTSW) == (True, True), report
