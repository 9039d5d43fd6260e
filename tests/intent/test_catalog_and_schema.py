"""Built-in catalog facts, user catalogs with `extends:`, and the exported JSON Schemas."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from netgen.intent import load_catalog
from netgen.intent.schema import catalog_schema, fabric_schema
from tests.conftest import META, ROOT, SMALL, run_cli

pytestmark = pytest.mark.render


def test_builtin_catalog_loads_and_lane_maps_are_sonic_facts():
    catalog = load_catalog()
    th5 = catalog.get("arista-7060x6-64pe-sonic")
    # sonic-buildimage Arista-7060X6-64PE port_config.ini: etp1 = lanes 17-24, etp2 = 1-8
    assert th5.cage_lanes(0) == [17, 18, 19, 20, 21, 22, 23, 24]
    assert th5.cage_lanes(1) == [1, 2, 3, 4, 5, 6, 7, 8]
    lanes = [lane for cage in range(th5.port_count) for lane in th5.cage_lanes(cage)]
    assert sorted(lanes) == list(range(1, 513))
    chassis = catalog.get("arista-7804r3a-36p-eos")
    assert chassis.port_count == 144 and chassis.architecture == "sand"
    assert chassis.capabilities.pfc_watchdog is False  # unconfirmed on Jericho: conservative


def test_user_catalog_extends_a_builtin(tmp_path):
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump({"models": {"my-rtsw": {
        "extends": "arista-7060x6-64pe-sonic",
        "nos_release": "custom build",
        "capabilities": {"bth_dest_qp_hash": True},
    }}}))
    catalog = load_catalog(path)
    mine, base = catalog.get("my-rtsw"), catalog.get("arista-7060x6-64pe-sonic")
    assert mine.capabilities.bth_dest_qp_hash and not base.capabilities.bth_dest_qp_hash
    # deep merge: untouched capabilities and the lane map are inherited
    assert mine.capabilities.pfc_watchdog == base.capabilities.pfc_watchdog
    assert mine.lanes == base.lanes


def _walk_properties(schema: dict[str, Any]):
    for name, definition in schema.get("$defs", {}).items():
        for field, prop in definition.get("properties", {}).items():
            yield f"{name}.{field}", prop
    for field, prop in schema.get("properties", {}).items():
        yield f"<root>.{field}", prop


@pytest.mark.parametrize("schema", [fabric_schema(), catalog_schema()], ids=["fabric", "catalog"])
def test_every_field_has_a_description(schema):
    missing = [path for path, prop in _walk_properties(schema) if not prop.get("description")]
    assert missing == []


def test_model_names_are_the_fabrics_catalog_with_schema_fabric(tmp_path):
    """meta-24k names models of its own catalog: the built-in schema rejects them, `netgen schema
    FABRIC` (the fabric's catalog too) accepts them. (Both examples against their own schema:
    test_schema_agrees.py.)"""
    data = yaml.safe_load(META.read_text())
    with pytest.raises(jsonschema.ValidationError, match="is not one of"):
        jsonschema.validate(data, fabric_schema())
    result = run_cli("schema", str(META), "-o", str(tmp_path / "meta.schema.json"))
    assert result.exit_code == 0, result.output
    jsonschema.validate(data, json.loads((tmp_path / "meta.schema.json").read_text()))
    jsonschema.validate(yaml.safe_load(SMALL.read_text()), fabric_schema())


def test_schema_rejects_unknown_keys():
    data = yaml.safe_load(SMALL.read_text())
    data["zones"][0]["ctsw_cout"] = 4
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, fabric_schema())


def test_example_catalog_satisfies_catalog_schema():
    data = yaml.safe_load((ROOT / "inventory" / "meta-24k" / "catalog.yaml").read_text())
    jsonschema.validate(data, catalog_schema())


def test_schema_command_writes_json(tmp_path):
    result = run_cli("schema")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["title"] == "netgen fabric file"
    target = tmp_path / "catalog.schema.json"
    assert run_cli("schema", "--kind", "catalog", "-o", str(target)).exit_code == 0
    assert json.loads(target.read_text())["title"] == "netgen platform catalog file"


def test_absurd_fabric_size_is_an_input_error(small_data, write_fabric):
    # 4096 racks x (16 NICs + 256 x 64 uplinks) is 67 million objects: refuse before expanding.
    small_data["zones"][0].update(racks=4096, ctsw_count=256, links_per_rtsw_ctsw=64)
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2
    assert "links and NIC attachments" in result.stderr and "at most 2,000,000" in result.stderr


def test_hostname_prefix_error_explains_the_form(small_data, write_fabric):
    small_data["hostname_prefix"] = "SNC1"
    result = run_cli("validate", str(write_fabric(small_data)))
    assert result.exit_code == 2
    assert "ending with '-', e.g. 'snc1-'" in result.stderr
