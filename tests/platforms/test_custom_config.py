"""custom_config at render time: where each NOS gets a block's lines, the layering on real devices of
the small example, and what a block may not do (change netgen's output, collide with another block,
break the NOS's own checks). Expected lines are the example fabric file's blocks, read by hand."""

from __future__ import annotations

import json
import shutil

import pytest

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.platforms.render import render_devices
from netgen.topology import expand
from tests.conftest import SMALL, run_cli

pytestmark = pytest.mark.render


def _render(path, *names):
    loaded = load_fabric(path)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    rendered, _ = render_devices(ctx, [ctx.topology.devices[n] for n in names])
    return {n: {f.name: f.content for f in files} for n, files in rendered.items()}


def test_eos_gets_its_blocks_before_end_marked_with_their_names():
    cfg = _render(SMALL, "z02-rtsw001", "z02-rtsw002", "z01-ctsw01")
    device = cfg["z02-rtsw001"]["z02-rtsw001.cfg"]
    # every switch: lanz; zone 2: errdisable-recovery 300, replaced on z02-rtsw001 by its own (600)
    assert device.endswith("   network fd00::ff:2000:0:0:1/128\n!\n! custom_config lanz\nqueue-monitor length\n"
                           "!\n! custom_config errdisable-recovery\nerrdisable recovery interval 600\n!\nend\n")
    assert "errdisable recovery interval 300" not in device
    neighbour = cfg["z02-rtsw002"]["z02-rtsw002.cfg"]
    assert neighbour.endswith("! custom_config errdisable-recovery\nerrdisable recovery interval 300\n!\nend\n")
    spine = cfg["z01-ctsw01"]["z01-ctsw01.cfg"]
    assert spine.endswith("!\n! custom_config lanz\nqueue-monitor length\n!\nend\n")  # zone 1: no errdisable block


def test_sonic_gets_config_db_rows_and_frr_lines_with_their_provenance():
    files = _render(SMALL, "z01-rtsw001", "z01-rtsw002")
    config_db = json.loads(files["z01-rtsw001"]["config_db.json"])
    assert config_db["SNMP"] == {"LOCATION": {"Location": "hall-1 row-07"}}  # the device's own block
    assert json.loads(files["z01-rtsw002"]["config_db.json"])["SNMP"] == {"LOCATION": {"Location": "hall-1"}}
    assert json.loads(files["z01-rtsw001"]["custom-config.json"]) == {
        "config_db": {"SNMP|LOCATION.Location": "snmp-location"}, "frr": ["frr-log-precision"]}
    assert files["z01-rtsw001"]["frr.conf"].endswith(
        "! custom_config frr-log-precision\nlog timestamp precision 3\n!\n")
    assert "queue-monitor" not in files["z01-rtsw001"]["frr.conf"] + files["z01-rtsw001"]["config_db.json"]


def test_show_device_lists_the_layering_and_sources():
    result = run_cli("show", str(SMALL), "--device", "z02-rtsw001", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["device"] == "z02-rtsw001"
    blocks = [(b["name"], b["layer"], b["source"], b["replaced_by"]) for b in data["custom_config"]]
    assert blocks == [("errdisable-recovery", "zone", "custom_config[3]", "custom_config[4]"),
                      ("lanz", "all", "custom_config[0]", None),
                      ("errdisable-recovery", "device", "custom_config[4]", None)]
    settings = {s["name"]: (s["value"], s["source"]) for s in data["settings"]}
    assert settings["management_ipv4"] == ("192.168.2.1/20", "services.management.prefix (plan by position)")
    assert settings["tier"] == ("rtsw", "zones[1]")
    assert settings["ntp"] == ('servers=["192.0.2.127"]', "services.overrides[1].ntp")  # replaces zone 2's
    assert settings["sflow"][1] == "services.sflow"
    # fabric-wide sections: secrets shown by their reference, never read
    assert settings["aaa"][1] == "services.aaa" and settings["aaa"][0].startswith(
        "login tacacs, local; TACACS+ 192.0.2.49, 192.0.2.50 (timeout 5 s, key: file ")
    assert settings["snmp"] == ("SNMPv3 read-only (SHA, AES-128): netmon", "services.snmp")


def _with_block(small_data, write_fabric, **block):
    small_data["custom_config"] = [{"name": "mine", **block}]
    return write_fabric(small_data)


@pytest.mark.parametrize(("block", "message"), [
    ({"tiers": ["ctsw"], "eos_cli": "router bfd\n   interval 900 min-rx 900 multiplier 3\n"},
     "custom_config 'mine' on z01-ctsw01: 'router bfd' is a line netgen renders"),
    ({"devices": ["z01-rtsw001"], "sonic_config_db": {"PORT": {"Ethernet0": {"mtu": "1500"}}}},
     "custom_config 'mine' on z01-rtsw001: PORT|Ethernet0.mtu is rendered by netgen"),
    ({"devices": ["z01-rtsw001"], "sonic_config_db": {"VXLAN_TUNNEL": {"vtep": {"src_ip": "10.0.0.1"}}}},
     "VXLAN_TUNNEL: unknown table"),
    ({"devices": ["z01-rtsw001"], "sonic_config_db": {"SNMP": {"SYSNAME": {"Location": "x"}}}},
     "SNMP|SYSNAME"),
    ({"devices": ["z01-rtsw001"], "sonic_config_db": {"NTP_SERVER": {"10.9.9.9": {"association_type": "peer"}}}},
     "association_type"),
])
def test_a_block_the_nos_or_netgen_refuses_is_exit_2_naming_it(small_data, write_fabric, block, message):
    result = run_cli("render", str(_with_block(small_data, write_fabric, **block)), "--check", "--json")
    assert result.exit_code == 2, result.stdout + result.stderr
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and payload["written"] is False
    assert "custom_config 'mine'" in payload["error"] and message in payload["error"], payload["error"]


def test_two_blocks_may_not_set_the_same_line(small_data, write_fabric):
    small_data["custom_config"] = [{"name": "a", "eos_cli": "queue-monitor length\n"},
                                   {"name": "b", "zones": [2], "eos_cli": "queue-monitor length\n"}]
    result = run_cli("render", str(write_fabric(small_data)), "--check")
    assert result.exit_code == 2
    assert "'queue-monitor length' is also in custom_config 'a'" in " ".join(result.stderr.split())


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR is not installed; .ci/run installs it")
def test_an_frr_block_frr_rejects_is_exit_2(small_data, write_fabric):
    path = _with_block(small_data, write_fabric, tiers=["rtsw"],
                       frr="router bgp 65000\n neighbor 10.9.9.9 remote-as x\n")
    result = run_cli("render", str(path), "--check")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "custom_config 'mine' on z01-rtsw00" in result.stderr and "FRR rejects" in result.stderr, result.stderr


def test_without_frr_installed_the_render_says_what_it_did_not_check(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    result = run_cli("render", str(SMALL), "--check", "--json")
    assert result.exit_code == 0, result.stderr
    unchecked = json.loads(result.stdout)["unchecked"]
    assert len(unchecked) == 4 and all("frr.conf: custom_config FRR lines not checked" in u for u in unchecked)


def test_show_device_text_and_an_unknown_device():
    result = run_cli("show", str(SMALL), "--device", "atsw01")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "atsw01: effective settings" in text and "services.overrides[2].sflow" in text
    assert "lanz" in text and "custom_config[0]" in text
    unknown = run_cli("show", str(SMALL), "--device", "atsw1")
    assert unknown.exit_code == 2 and "did you mean atsw01" in " ".join(unknown.output.split())
