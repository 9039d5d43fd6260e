"""Reversible secrets on the way to the switch (the TACACS+ key, SNMPv3 passphrases, the BGP session
key): only placeholders in rendered files; `netgen deploy` fills them from where the fabric file
points, the switch stores them encrypted, and no report, diff or error shows them. Against the EOS
emulator; state read from the emulator."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import SMALL
from tests.deploy.eos_site import make_site

pytestmark = pytest.mark.deploy

NAME = "z02-rtsw001"
KEY = (SMALL.parent / "secrets" / "tacacs.key").read_text().strip()
SNMP = [(SMALL.parent / "secrets" / f"snmp-{kind}.key").read_text().strip() for kind in ("auth", "priv")]
# a server the intent no longer has, and a global timeout netgen does not render (device-owned)
STALE = "tacacs-server host 192.0.2.99 vrf mgmt key 7 0A1B2C3D4E\ntacacs-server timeout 10\n"


def _tacacs(running: str) -> list[str]:
    return [line for line in running.splitlines() if line.startswith("tacacs-server ")]


def test_the_key_reaches_the_switch_encrypted_and_nowhere_else(tmp_path, monkeypatch, capsys):
    for site in make_site(tmp_path, SMALL, [NAME], False, monkeypatch, extra=STALE):
        code, report = site.deploy()
        assert code == 0 and report["counts"] == {"changed": 1}, json.dumps(report)[:800]
        running = site.running(NAME)
        hosts = _tacacs(running)
        # EOS shows a key given in clear (type 0) as type 7; the stale server is gone (netgen owns
        # `tacacs-server host` once the intent renders one), the global timeout is the device's
        # the emulator's stand-in for EOS's encryption: the first 20 hex digits of the key's SHA-256
        stand_in = hashlib.sha256(KEY.encode()).hexdigest()[:20].upper()
        assert [h.rsplit(" ", 1)[1] for h in hosts[:2]] == [stand_in, stand_in]
        assert [h.rsplit(" ", 1)[0] for h in hosts] == [
            "tacacs-server host 192.0.2.49 vrf mgmt timeout 5 key 7",
            "tacacs-server host 192.0.2.50 vrf mgmt timeout 5 key 7", "tacacs-server timeout"]
        assert "ip tacacs vrf mgmt source-interface Management1" in running.splitlines()
        assert "aaa authentication login default group tacacs+ local" in running.splitlines()
        assert KEY not in running and "netgen-secret" not in running
        assert KEY not in json.dumps(report) and "0A1B2C3D4E" not in json.dumps(report)
        # SNMPv3: EOS keeps keys localized to its engine ID (the emulator's stand-in: a fixed engine
        # ID and SHA-256 digests of "auth:" / "priv:" + the passphrase), never the passphrases
        (user,) = [line for line in running.splitlines() if line.startswith("snmp-server user ")]
        auth, priv = (hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()[:40]
                      for kind, value in zip(("auth", "priv"), SNMP, strict=True))
        assert user == (f"snmp-server user netmon netgen-ro v3 localized f5717f{'0' * 18} auth sha {auth}"
                        f" priv aes {priv}")
        assert not any(secret in running or secret in json.dumps(report) for secret in SNMP)
        assert {"snmp-server group netgen-ro v3 priv read netgen-all", "snmp-server vrf mgmt"} <= set(
            running.splitlines())
        code, again = site.deploy()
        assert code == 0 and again["counts"] == {"unchanged": 1}, json.dumps(again)[:800]  # the same key
        assert KEY not in capsys.readouterr().out


def test_a_missing_key_stops_the_deploy_before_any_switch_is_touched(tmp_path, monkeypatch):
    for site in make_site(tmp_path, SMALL, [NAME], False, monkeypatch):
        before = site.running(NAME)
        (site.fabric.parent / "secrets" / "tacacs.key").unlink()
        code, report = site.deploy()
        assert code == 2, json.dumps(report)[:800]
        assert "services.aaa.tacacs.key: file" in report["error"] and "cannot be read" in report["error"]
        assert site.running(NAME) == before and site.commits(NAME) == []


def test_a_key_the_cli_would_split_is_refused_by_field_not_by_value(tmp_path, monkeypatch):
    for site in make_site(tmp_path, SMALL, [NAME], False, monkeypatch):
        (site.fabric.parent / "secrets" / "tacacs.key").write_text("two words-here\n")
        code, report = site.deploy("--dry-run")
        assert code == 2 and "services.aaa.tacacs.key: file" in report["error"]
        assert "two words" not in json.dumps(report)


BGP_KEY = (SMALL.parent / "secrets" / "bgp.key").read_text().strip()


def test_the_bgp_session_key_reaches_the_switch_encrypted_and_nowhere_else(tmp_path, monkeypatch, capsys):
    for site in make_site(tmp_path, SMALL, [NAME], False, monkeypatch):
        code, report = site.deploy()
        assert code == 0 and report["counts"] == {"changed": 1}, json.dumps(report)[:800]
        running = site.running(NAME)
        stand_in = hashlib.sha256(BGP_KEY.encode()).hexdigest()[:20].upper()
        # one per peer group (both families), stored as type 7 (the emulator's stand-in)
        assert [line.strip() for line in running.splitlines() if " password " in line] == [
            f"neighbor UPLINK password 7 {stand_in}", f"neighbor UPLINK_V6 password 7 {stand_in}"]
        assert BGP_KEY not in running and BGP_KEY not in json.dumps(report)
        code, again = site.deploy()
        assert code == 0 and again["counts"] == {"unchanged": 1}, json.dumps(again)[:800]
        assert BGP_KEY not in capsys.readouterr().out


def test_a_missing_bgp_key_stops_the_deploy_naming_the_field(tmp_path, monkeypatch):
    for site in make_site(tmp_path, SMALL, [NAME], False, monkeypatch):
        before = site.running(NAME)
        (site.fabric.parent / "secrets" / "bgp.key").unlink()
        code, report = site.deploy()
        assert code == 2 and "bgp.password: file" in report["error"], json.dumps(report)[:800]
        assert site.running(NAME) == before and site.commits(NAME) == []


def test_the_atsws_radius_key_reaches_them_encrypted(tmp_path, monkeypatch):
    """The small example's ATSWs log in with RADIUS (a tier override of services.aaa): its key is
    filled by the deploy from the override's own reference."""
    key = (SMALL.parent / "secrets" / "radius.key").read_text().strip()
    for site in make_site(tmp_path, SMALL, ["atsw01"], False, monkeypatch,
                          extra="tacacs-server host 192.0.2.49 vrf mgmt key 7 0A1B2C3D4E\n"):
        assert "<netgen-secret/services.overrides[3].aaa.radius.key>" in (
            tmp_path / "rendered" / "atsw01" / "atsw01.cfg").read_text()
        code, report = site.deploy()
        assert code == 0 and report["counts"] == {"changed": 1}, json.dumps(report)[:800]
        running = site.running("atsw01").splitlines()
        stand_in = hashlib.sha256(key.encode()).hexdigest()[:20].upper()
        assert [line for line in running if line.startswith("radius-server ")] == [
            f"radius-server host 192.0.2.{n} vrf mgmt timeout 5 retransmit 3 key 7 {stand_in}" for n in (81, 82)]
        assert "ip radius vrf mgmt source-interface Management0" in running
        assert "aaa authentication login default group radius local" in running
        # a TACACS+ server the switch had is device-owned here: the intent renders no tacacs-server host
        assert "tacacs-server host 192.0.2.49 vrf mgmt key 7 0A1B2C3D4E" in running
        assert key not in "\n".join(running) and key not in json.dumps(report)
        code, again = site.deploy()
        assert code == 0 and again["counts"] == {"unchanged": 1}, json.dumps(again)[:800]
