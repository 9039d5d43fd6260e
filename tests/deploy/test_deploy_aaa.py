"""services.aaa on the way to the switch: the TACACS+ key is only a placeholder in rendered files;
`netgen deploy` fills it from where the fabric file points, the switch stores it encrypted, and no
report, diff or error shows it. Against the EOS emulator; state read from the emulator."""

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
