"""`netgen replace` for an EOS CTSW (the device emulator behind real SSH): the day-0 startup-config
is the rendered config with the drain and no secret; a replacement booted from it joins only when
its deploy (secrets filled, drain kept), every planned BGP session and every switch-to-switch LLDP
neighbour read back as planned, and is undrained last; a miscabled replacement is refused at the
deploy's pre-check and stays drained."""

from __future__ import annotations

import json

import pytest

from netgen.nos.eos.drain import drain_state
from tests.conftest import SMALL, run_cli
from tests.deploy.eos_site import make_site

pytestmark = pytest.mark.deploy

CTSW = "z01-ctsw01"
TACACS_KEY = (SMALL.parent / "secrets" / "tacacs.key").read_text().strip()


@pytest.fixture
def day0(tmp_path) -> str:
    folder = tmp_path / "ztp"
    result = run_cli("replace", str(SMALL), CTSW, "--day0", str(folder), "--url", "http://ztp.test:8080/netgen",
                     "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0, report
    assert report["day0"]["dhcp_option_67"] == f"http://ztp.test:8080/netgen/{CTSW}/startup-config"
    assert sorted(p.name for p in (folder / CTSW).iterdir()) == ["startup-config"]
    return (folder / CTSW / "startup-config").read_text()


def test_the_day0_config_boots_drained_and_holds_no_secret(day0):
    assert drain_state(day0) is True
    assert TACACS_KEY not in day0 and "<netgen-secret/" in day0


def _join(site, *args: str) -> tuple[int, dict]:
    result = run_cli("replace", str(site.fabric), CTSW, "--join", "--wait", "5", *args, "--json")
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_replacement_joins_once_cabled_and_peered_and_is_undrained_last(day0, tmp_path, monkeypatch):
    sites = make_site(tmp_path, SMALL, None, True, monkeypatch, booted={CTSW: day0})
    site = next(sites)
    try:
        device = site.fleet.device(CTSW)
        assert drain_state(device.running_config()) is True
        code, report = _join(site)
        assert code == 0, report
        assert report["deploy"]["status"] == "changed"  # the secrets, filled on the way; the drain kept
        assert {c["check"]: c["outcome"] for c in report["checks"]} == {"bgp-established": "pass",
                                                                         "lldp-neighbors": "pass"}
        assert report["undrain"]["switches"][0]["action"] == "undrained"
        running = device.running_config()
        assert drain_state(running) is False and drain_state(device.startup_config()) is False
        assert "<netgen-secret/" not in running
        assert site.commits("z01-ctsw02") == []  # nothing else was touched
    finally:
        sites.close()


def test_a_miscabled_replacement_is_refused_and_stays_drained(day0, tmp_path, monkeypatch):
    sites = make_site(tmp_path, SMALL, None, True, monkeypatch, booted={CTSW: day0})
    site = next(sites)
    try:
        device = site.fleet.device(CTSW)
        heard = {local: (system, port) for local, system, port in site.fleet.device(CTSW).spec.cables}
        a, b = sorted(p for p, (system, _) in heard.items() if "rtsw" in system)[:2]
        if heard[a][0] == heard[b][0]:  # two uplinks to different RTSWs
            b = next(p for p in sorted(heard) if "rtsw" in heard[p][0] and heard[p][0] != heard[a][0])
        device.recable(a, *heard[b])
        device.recable(b, *heard[a])
        code, report = _join(site)
        assert code == 1 and report["joined"] is False and report["undrain"] is None
        assert report["deploy"]["status"] == "failed"
        lldp = next(c for c in report["deploy"]["checks"] if c["check"] == "lldp-neighbors")
        assert lldp["outcome"] == "fail" and a in lldp["detail"], lldp
        assert drain_state(device.running_config()) is True and site.commits(CTSW) == []
    finally:
        sites.close()
