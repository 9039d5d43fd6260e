"""CONFIG_DB JSON patch and semantic diff."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.diff.config_db import (
    PatchError,
    apply_patch,
    json_patch,
    overlay_device_owned,
    semantic_diff,
)

pytestmark = pytest.mark.render

RUNNING = {
    "DEVICE_METADATA": {"localhost": {"hostname": "r1", "mac": "0c:00:00:00:00:01", "platform": "x86_64-arista"}},
    "PORT": {"Ethernet0": {"mtu": "9100", "autoneg": "on", "description": "old"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.1.16.1/31": {}},
    "MGMT_INTERFACE": {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}},
    "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all"}},
}
INTENDED = {
    "DEVICE_METADATA": {"localhost": {"hostname": "r1"}},
    "PORT": {"Ethernet0": {"mtu": "9100", "description": "z01-ctsw01:Ethernet3/1/1"}},
    "INTERFACE": {"Ethernet0": {}, "Ethernet0|10.1.16.3/31": {}},
    "QUEUE": {"Ethernet0|3": {"scheduler": "scheduler.roce"}},
}


def test_patch_by_hand():
    target = overlay_device_owned(INTENDED, RUNNING)
    ops = json_patch(RUNNING, target)
    assert ops == [
        {"op": "remove", "path": "/INTERFACE/Ethernet0|10.1.16.1~131"},
        {"op": "add", "path": "/INTERFACE/Ethernet0|10.1.16.3~131", "value": {}},
        {"op": "replace", "path": "/PORT/Ethernet0/description", "value": "z01-ctsw01:Ethernet3/1/1"},
        {"op": "add", "path": "/QUEUE", "value": {"Ethernet0|3": {"scheduler": "scheduler.roce"}}},
        {"op": "remove", "path": "/WRED_PROFILE"},
    ]
    assert apply_patch(RUNNING, ops) == target


def test_device_owned_keys_survive_and_a_converged_device_has_no_patch():
    target = overlay_device_owned(INTENDED, RUNNING)
    assert target["DEVICE_METADATA"]["localhost"]["mac"] == "0c:00:00:00:00:01"
    assert target["PORT"]["Ethernet0"]["autoneg"] == "on"
    assert target["MGMT_INTERFACE"] == RUNNING["MGMT_INTERFACE"]
    converged = apply_patch(RUNNING, json_patch(RUNNING, target))
    assert json_patch(converged, overlay_device_owned(INTENDED, converged)) == []


def test_semantic_diff_reads_table_key_field_old_new():
    changes = semantic_diff(RUNNING, overlay_device_owned(INTENDED, RUNNING))
    lines = [c.render() for c in changes]
    assert "~ PORT|Ethernet0.description: old -> z01-ctsw01:Ethernet3/1/1" in lines
    assert "+ QUEUE|Ethernet0|3 = {'scheduler': 'scheduler.roce'}" in lines
    assert "- INTERFACE|Ethernet0|10.1.16.1/31 (was {})" in lines
    assert "+ INTERFACE|Ethernet0|10.1.16.3/31 = {}" in lines
    assert len(lines) == 5
    assert "- WRED_PROFILE|AZURE_LOSSLESS (was {'ecn': 'ecn_all'})" in lines


def test_apply_patch_is_all_or_nothing():
    ops = [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "1500"},
           {"op": "remove", "path": "/PORT/Ethernet9"}]
    with pytest.raises(PatchError, match="does not exist"):
        apply_patch(RUNNING, ops)
    assert RUNNING["PORT"]["Ethernet0"]["mtu"] == "9100"


names = st.text(alphabet="abAB01|/~.-", min_size=1, max_size=6)
values = st.one_of(st.text(max_size=4), st.lists(st.text(max_size=3), max_size=2))
config_dbs = st.dictionaries(names, st.dictionaries(names, st.dictionaries(names, values, max_size=3), max_size=3),
                             max_size=4)


@settings(max_examples=300, deadline=None)
@given(a=config_dbs, b=config_dbs)
def test_patch_turns_any_config_into_any_other(a, b):
    ops = json_patch(a, b)
    assert apply_patch(a, ops) == b
    json.dumps(ops)  # serialisable, as `config apply-patch` reads it from a file
    assert (ops == []) == (a == b)
    changes = semantic_diff(a, b)
    # an empty table holds nothing (SONiC drops them), so adding or removing one is no semantic change
    non_empty = lambda db: {t: v for t, v in db.items() if v}  # noqa: E731
    assert (changes == []) == (non_empty(a) == non_empty(b))
    assert all(c.kind in {"add", "remove", "change"} for c in changes)
