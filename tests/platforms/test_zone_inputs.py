"""Zone inputs (netgen/platforms/zone_inputs.py) are sound: change one zone in every way the intent
allows, and every switch whose digest stayed the same (another zone's RTSWs and CTSWs, the ATSWs)
still has the render key its full view gives. And they are useful: adding a rack to one zone leaves
the other zones' digests and the ATSWs'."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from netgen.checks import DesignContext
from netgen.intent import load_fabric
from netgen.intent.fabric import Zone, ZoneCables
from netgen.platforms.base import renderers
from netgen.platforms.render import render_keys
from netgen.platforms.zone_inputs import zone_inputs
from netgen.render_cache import StablePickler, code_digest
from netgen.topology import expand
from tests.conftest import SMALL

pytestmark = pytest.mark.render


def _keyed(path: Any) -> tuple[dict[str, str | None], dict[str, str]]:
    loaded = load_fabric(path)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    keys, _ = render_keys(ctx, list(ctx.topology.devices.values()))
    return keys, zone_inputs(ctx, renderers(), code_digest(), StablePickler)


def _rewritten(path: Path, data: dict[str, Any]) -> Path:
    # the same file: the fabric records where its secret files are, so another folder is another fabric
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _set(field: str, value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        data["zones"][1][field] = value
    return change


def _cable(field: str, value: int) -> Any:
    def change(data: dict[str, Any]) -> None:
        zone = data["zones"][1]
        zone["cable_length_m"] = {**zone.get("cable_length_m", {}), field: value}
    return change


# Every field of a Zone, each changed in zone 2 of the small fabric (zone 1: SONiC racks, zone 2:
# EOS racks, both under the same ATSWs). Changes that cross zones are here on purpose: more CTSWs
# (the ATSW ports reserved per zone), another host prefix length (the fabric's prefix sets).
ZONE_CHANGES: dict[str, list[Any]] = {
    "id": [_set("id", 3), _set("id", 9)],
    "description": [_set("description", "Hall C")],
    "racks": [_set("racks", 5), _set("racks", 3), _set("racks", 1)],
    "hosts_per_rack": [_set("hosts_per_rack", 1)],
    "nics_per_host": [_set("nics_per_host", 4), _set("nics_per_host", 16)],
    "gpus_per_host": [_set("gpus_per_host", 4)],
    "nic_speed": [_set("nic_speed", "200G")],
    "rtsw_model": [_set("rtsw_model", "arista-7060x6-64pe-sonic"), _set("rtsw_model", "arista-7060dx5-64s-sonic")],
    "ctsw_model": [_set("ctsw_model", "arista-7808r3a-36p-eos")],
    "ctsw_count": [_set("ctsw_count", 3), _set("ctsw_count", 6)],
    "links_per_rtsw_ctsw": [_set("links_per_rtsw_ctsw", 2), _set("links_per_rtsw_ctsw", 1)],
    "fabric_link_speed": [_set("fabric_link_speed", "200G")],
    "cable_length_m": [_cable("host_m", 5), _cable("rtsw_ctsw_m", 300)],
    "rtsw_oversubscription": [_set("rtsw_oversubscription", "1:2")],
    "host_prefix_length": [_set("host_prefix_length", 24), _set("host_prefix_length", 27)],
}


def test_every_field_of_a_zone_is_changed_below():
    assert set(ZONE_CHANGES) == set(Zone.model_fields)
    assert {"host_m", "rtsw_ctsw_m"} == set(ZoneCables.model_fields)


def _changes() -> list[Any]:
    cases = [pytest.param(change, id=f"{field}-{n}") for field, changes in ZONE_CHANGES.items()
             for n, change in enumerate(changes)]

    def another_zone(data: dict[str, Any]) -> None:
        data["zones"].append({**copy.deepcopy(data["zones"][1]), "id": 3})

    def no_zone_2(data: dict[str, Any]) -> None:
        del data["zones"][1]

    def bigger_zone(data: dict[str, Any]) -> None:  # more CTSWs than zone 1, in a new zone
        data["zones"].append({**copy.deepcopy(data["zones"][1]), "id": 4, "ctsw_count": 8})

    return [*cases, pytest.param(another_zone, id="zone-added"), pytest.param(no_zone_2, id="zone-removed"),
            pytest.param(bigger_zone, id="bigger-zone-added")]


@pytest.mark.parametrize("change", _changes())
def test_a_switch_whose_zone_digest_is_unchanged_keeps_its_key(change, small_data, write_fabric):
    path = write_fabric(small_data)
    keys, inputs = _keyed(path)
    data = copy.deepcopy(small_data)
    change(data)
    keys_after, inputs_after = _keyed(_rewritten(path, data))
    for device in keys.keys() & keys_after.keys():
        if device in inputs and inputs.get(device) == inputs_after.get(device):
            assert keys[device] == keys_after[device], device


def test_adding_a_rack_leaves_the_other_zones_digests(small_data, write_fabric):
    path = write_fabric(small_data)
    _, inputs = _keyed(path)
    data = copy.deepcopy(small_data)
    data["zones"][1] = {**copy.deepcopy(data["zones"][1]), "racks": 5}
    _, after = _keyed(_rewritten(path, data))
    zone_1 = {name for name in inputs if name.startswith("z01-")}
    assert zone_1 and {name: after[name] for name in zone_1} == {name: inputs[name] for name in zone_1}
    assert all(after[name] != inputs[name] for name in inputs if name.startswith("z02-"))
    atsws = {name for name in inputs if name.startswith("atsw")}  # a rack more changes no CTSW uplink
    assert atsws and {name: after[name] for name in atsws} == {name: inputs[name] for name in atsws}


def test_an_atsw_digest_changes_with_its_links(small_data, write_fabric):
    path = write_fabric(small_data)
    _, inputs = _keyed(path)
    data = copy.deepcopy(small_data)
    data["aggregation"]["cable_length_m"] = 400  # fabric-wide; and every ATSW port's cable
    _, after = _keyed(_rewritten(path, data))
    assert all(after[name] != inputs[name] for name in inputs)


@pytest.mark.parametrize("part", ["own record", "a port", "a peer's record"])
def test_an_atsw_digest_covers_what_its_view_reads_of_the_topology(part):
    """An ATSW's view reads its own record, its ports and its peers' records: a change to any one
    of them changes its digest."""
    loaded = load_fabric(SMALL)
    ctx = DesignContext(loaded.fabric, loaded.catalog, expand(loaded.fabric, loaded.catalog))
    before = zone_inputs(ctx, renderers(), code_digest(), StablePickler)
    topology = ctx.topology
    if part == "own record":
        topology.devices["atsw01"] = dataclasses.replace(topology.devices["atsw01"], asn=65000)
    elif part == "a port":
        port = topology.ports["atsw01"][0]
        topology.ports["atsw01"][0] = dataclasses.replace(port, peer_port=port.peer_port + "0")
    else:
        peer = topology.ports["atsw01"][0].peer_device
        topology.devices[peer] = dataclasses.replace(topology.devices[peer], asn=65001)
    after = zone_inputs(ctx, renderers(), code_digest(), StablePickler)
    assert after["atsw01"] != before["atsw01"]
    if part == "a port":  # (an ATSW's record is also every CTSW's peer: in every digest)
        assert after["atsw02"] == before["atsw02"]
