"""custom_config: the escape hatch's input rules (shape, refused words, secrets) and its layering."""

from __future__ import annotations

import pytest

from netgen.intent.custom import AmbiguousLayer, CustomConfig, layered, replaced
from tests.conftest import run_cli

pytestmark = pytest.mark.render


def _block(**fields):
    return {"name": "extra", **fields}


@pytest.mark.parametrize(("block", "message"), [
    (_block(), "give at least one of eos_cli, sonic_config_db, frr"),
    (_block(eos_cli="   queue-monitor length\n"), "line 1: the block starts with a top-level line"),
    (_block(eos_cli="interface Ethernet1/1\n  description x\n"), "line 2: indentation 2 is not a multiple of 3"),
    (_block(eos_cli="router bfd\n      interval 300\n"), "line 2: indented deeper"),
    (_block(eos_cli="queue-monitor length\n\nlldp timer 10\n"), "line 2: empty line"),
    (_block(eos_cli="queue-monitor length \n"), "line 1: trailing whitespace"),
    (_block(eos_cli="queue-monitor length\nend\n"), "line 2: 'end' is not accepted"),
    (_block(eos_cli="queue-monitor length\ncommit\n"), "line 2: 'commit' is not accepted"),
    (_block(eos_cli="router bfd\n   do reload now\n"), "line 2: 'do' is not accepted"),
    (_block(eos_cli="banner motd\nhello\nEOF\n"), "line 1: 'banner' is not accepted"),
    (_block(eos_cli="! a comment\n"), "line 1: a comment is not accepted"),
    (_block(eos_cli="queue-monitor length\x1b[2K\n"), "contains characters or a form that is not allowed"),
    (_block(eos_cli="tacacs-server key 7 070C285F4D06\n"), "line 1: looks like a secret"),
    (_block(eos_cli="ntp authentication-key 1 md5 0 s3cret\n"), "line 1: looks like a secret"),
    (_block(eos_cli="snmp-server user ops ro v3 auth sha x priv aes y\n"), "line 1: looks like a secret"),
    (_block(frr="router bgp 65000\n neighbor 10.0.0.1 password hunter2\n"), "line 2: looks like a secret"),
    (_block(frr="write memory\n"), "line 1: 'write' is not accepted"),
    (_block(frr=" bgp log-neighbor-changes\n"), "line 1: the block starts with a top-level line"),
    (_block(sonic_config_db={}), "empty: give at least one table"),
    (_block(sonic_config_db={"snmp": {"LOCATION": {"Location": "x"}}}), "sonic_config_db.snmp (key): contains"),
    (_block(sonic_config_db={"SNMP": {"LOCATION": "x"}}), "SNMP|LOCATION: must map field names to values"),
    (_block(sonic_config_db={"SNMP": {"LOCATION": {"Location": 9}}}), "write numbers quoted"),
    (_block(sonic_config_db={"TACPLUS_SERVER": {"10.0.0.9": {"passkey": "x"}}}), "holds a secret"),
    (_block(sonic_config_db={"SNMP_COMMUNITY": {"public": {"community": "x"}}}), "holds a secret"),
    (_block(eos_cli="queue-monitor length\n", tiers=["leaf"]), "Input should be 'rtsw', 'ctsw' or 'atsw'"),
    (_block(eos_cli="queue-monitor length\n", devices=["z01-rtsw001;reload"]),
     "contains characters or a form that is not allowed"),
])
def test_bad_blocks_are_refused_naming_the_field(small_data, write_fabric, block, message):
    small_data["custom_config"] = [block]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "custom_config" in result.stderr and message in " ".join(result.stderr.split()), result.stderr
    assert "Traceback" not in result.stderr


def test_two_blocks_of_one_name_and_layer_on_one_switch_are_refused(small_data, write_fabric):
    small_data["custom_config"] = [_block(tiers=["rtsw"], eos_cli="queue-monitor length\n"),
                                   _block(tiers=["rtsw", "ctsw"], frr="log syslog debugging\n")]
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 1, result.stdout
    assert "two custom_config blocks named 'extra' of the same layer (tier) apply to" in result.stdout, result.stdout


def _blocks(*specs):
    return [CustomConfig.model_validate({"name": n, "frr": f"! {n}", **scope}) for n, scope in specs]


def test_layering_is_widest_first_then_file_order():
    blocks = _blocks(("one-device", {"devices": ["z01-rtsw001"]}), ("zone-1", {"zones": [1]}), ("everyone", {}),
                     ("rtsw-in-zone-1", {"tiers": ["rtsw"], "zones": [1]}), ("rtsw", {"tiers": ["rtsw"]}),
                     ("zone-2", {"zones": [2]}), ("ctsw", {"tiers": ["ctsw"]}))
    assert [b.name for b in layered(blocks, "rtsw", 1, "z01-rtsw001")] == [
        "everyone", "rtsw", "zone-1", "rtsw-in-zone-1", "one-device"]
    assert [b.name for b in layered(blocks, "atsw", None, "atsw01")] == ["everyone"]
    assert [b.name for b in layered(blocks, "ctsw", 2, "z02-ctsw01")] == ["everyone", "ctsw", "zone-2"]


def test_a_narrower_block_replaces_a_wider_one_of_the_same_name():
    everyone, zone, device = _blocks(("syslog", {}), ("syslog", {"zones": [2]}),
                                     ("syslog", {"devices": ["z02-rtsw001"]}))
    assert layered([device, zone, everyone], "rtsw", 2, "z02-rtsw001") == [device]
    assert replaced([device, zone, everyone], "rtsw", 2, "z02-rtsw001") == [zone, everyone]
    assert layered([device, zone, everyone], "rtsw", 2, "z02-rtsw002") == [zone]
    assert layered([device, zone, everyone], "rtsw", 1, "z01-rtsw001") == [everyone]


def test_same_name_same_layer_on_one_switch_is_ambiguous():
    a, b = _blocks(("syslog", {"tiers": ["rtsw"]}), ("syslog", {"tiers": ["rtsw", "ctsw"]}))
    with pytest.raises(AmbiguousLayer, match="apply to z01-rtsw001"):
        layered([a, b], "rtsw", 1, "z01-rtsw001")
    assert layered([a, b], "ctsw", 1, "z01-ctsw01") == [b]
