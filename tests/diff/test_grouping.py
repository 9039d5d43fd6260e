"""Grouping identical changes across devices (netgen/diff/grouping.py) and natural order."""

from __future__ import annotations

import json

import pytest

from netgen.diff.config_db import masked_patch
from netgen.diff.device_diff import compare
from netgen.diff.grouping import device_ranges, natural_key

pytestmark = pytest.mark.render


def test_natural_order_puts_ethernet44_before_ethernet448():
    names = ["Ethernet448", "Ethernet44", "Ethernet8", "rtsw10", "rtsw2"]
    assert sorted(names, key=natural_key) == ["Ethernet8", "Ethernet44", "Ethernet448", "rtsw2", "rtsw10"]


def test_device_ranges_compress_runs_of_the_same_name_and_width():
    names = ["z01-rtsw003", "z01-rtsw001", "z01-rtsw002", "z01-rtsw005", "atsw01", "atsw02", "x9", "x010", "x011"]
    assert device_ranges(names) == "atsw01..atsw02, x9, x010..x011, z01-rtsw001..z01-rtsw003, z01-rtsw005"


def _eos(name: str, lines: list[str]) -> dict[str, str]:
    return {f"{name}.cfg": "".join(f"{line}\n" for line in lines)}


def test_the_same_change_at_other_line_numbers_is_one_group_and_a_different_line_is_not():
    pad = [f"pad {n}" for n in range(20)]
    # the same context lines before the change, at other line numbers in a2
    base = {"a1": _eos("a1", ["hostname a1", *pad, "x 1"]), "a2": _eos("a2", ["hostname a2", "more", *pad, "x 1"]),
            "a3": _eos("a3", ["hostname a3", *pad, "x 1"])}
    head = {"a1": _eos("a1", ["hostname a1", *pad, "x 2"]), "a2": _eos("a2", ["hostname a2", "more", *pad, "x 2"]),
            "a3": _eos("a3", ["hostname a3", *pad, "x 3"])}
    diff = compare(base, head, "base", "head", "f.yaml")
    groups = diff.groups()
    assert [g.devices for g in groups] == [["a1", "a2"], ["a3"]]
    assert groups[0].files() == {"{device}.cfg": ["@@", "-x 1", "+x 2"]}


def test_config_db_changes_come_in_natural_port_order():
    ports = ["Ethernet448", "Ethernet44", "Ethernet8"]
    base = {"s1": {"config_db.json": json.dumps({"PORT": {p: {"mtu": "9100"} for p in ports}})}}
    head = {"s1": {"config_db.json": json.dumps({"PORT": {p: {"mtu": "9000"} for p in ports}})}}
    (device,) = compare(base, head, "b", "h", "f.yaml").devices
    # issue 33: the same field change on many keys is one line, the keys in natural order after it
    assert device.files["config_db.json"] == [
        "~ PORT|*.mtu: 9100 -> 9000  (3 keys: Ethernet8, Ethernet44, Ethernet448)"]
    base["s1"]["config_db.json"] = json.dumps({"PORT": {"Ethernet0": {"mtu": "9100"}}})
    head["s1"]["config_db.json"] = json.dumps({"PORT": {"Ethernet0": {"mtu": "9000"}}})
    (device,) = compare(base, head, "b", "h", "f.yaml").devices
    assert device.files["config_db.json"] == ["~ PORT|Ethernet0.mtu: 9100 -> 9000"]  # one key: named in place


def test_a_patch_in_a_report_masks_secrets():
    old = {"TACPLUS": {"global": {"passkey": "old-key", "timeout": "5"}}}
    new = {"TACPLUS": {"global": {"passkey": "new-key", "timeout": "5"}},
           "SNMP_COMMUNITY": {"s3cret": {"TYPE": "RO"}}, "NTP_KEY": {"1": {"value": "k", "type": "md5"}}}
    ops = masked_patch(old, new)
    assert {"op": "replace", "path": "/TACPLUS/global/passkey", "value": "***"} in ops
    assert {"op": "add", "path": "/SNMP_COMMUNITY", "value": "***"} in ops
    assert {"op": "add", "path": "/NTP_KEY", "value": {"1": {"value": "***", "type": "md5"}}} in ops
    text = json.dumps(ops)
    assert "old-key" not in text and "new-key" not in text and "s3cret" not in text
