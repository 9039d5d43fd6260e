"""The published JSON Schema and `netgen validate` give the same verdict on a fabric file: every
default is valid against the schema, the bundled fabrics pass both, and each case below passes both
or fails both (jsonschema here plays check-jsonschema / an editor's linter)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from netgen.intent import NetgenInputError, load_fabric
from netgen.intent.schema import fabric_schema
from tests.conftest import META, SMALL

pytestmark = pytest.mark.render

SCHEMA = fabric_schema()


def _defaults(node: Any, path: str = "") -> list[tuple[str, Any, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        if "default" in node:
            found.append((path, node["default"], {k: v for k, v in node.items() if k != "default"}))
        for key, value in node.items():
            found += _defaults(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _defaults(value, f"{path}/{index}")
    return found


def test_every_default_is_valid_against_the_schema():
    defaults = _defaults(SCHEMA)
    assert len(defaults) > 50
    for path, value, subschema in defaults:
        errors = list(jsonschema.Draft202012Validator({**subschema, "$defs": SCHEMA["$defs"]}).iter_errors(value))
        assert not errors, (path, value, errors[0].message)


@pytest.mark.parametrize("fabric", [SMALL, META])
def test_the_bundled_fabrics_pass_both(fabric):
    loaded = load_fabric(fabric)
    schema = fabric_schema(loaded.catalog.models)
    jsonschema.validate(yaml.safe_load(Path(fabric).read_text()), schema)


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    node: Any = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    return data


# (path, value): each must get the same verdict from the schema and from netgen
CASES = [
    ("zones.0.nic_speed", "400G"), ("zones.0.nic_speed", 400), ("zones.0.nic_speed", " 0400 g "),
    ("zones.0.nic_speed", 400.0), ("zones.0.nic_speed", "401G"), ("zones.0.nic_speed", 401),
    ("zones.0.nic_speed", True), ("zones.0.nic_speed", "400"), ("zones.0.nic_speed", "400Gb"),
    ("qos.ecn.min_threshold", "150KB"), ("qos.ecn.min_threshold", "1.5 MiB"), ("qos.ecn.min_threshold", 150000),
    ("qos.ecn.min_threshold", "150"), ("qos.ecn.min_threshold", "0.1234567891KB"), ("qos.ecn.min_threshold", "1kb"),
    ("zones.0.rtsw_model", "arista-7060x6-64pe-sonic"), ("zones.0.rtsw_model", "arista-7060x6-64pe-snoic"),
    ("zones.0.ctsw_model", "no-such-model"),
    ("aggregation.expected_oversubscription", "1 : 8"), ("aggregation.expected_oversubscription", "1:8.1234567"),
    ("aggregation.expected_oversubscription", "1:8:2"), ("aggregation.expected_oversubscription", 8),
]


def _netgen_accepts(data: dict[str, Any], folder: Path) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    (folder / "secrets").exists() or (folder / "secrets").symlink_to(SMALL.parent / "secrets")
    try:
        load_fabric(path)
    except NetgenInputError:
        return False
    return True


@pytest.mark.parametrize(("path", "value"), CASES, ids=[f"{p}={v!r}" for p, v in CASES])
def test_schema_and_netgen_agree(small_data, tmp_path, path, value):
    data = _set(small_data, path, value)
    by_schema = jsonschema.Draft202012Validator(SCHEMA).is_valid(data)
    assert by_schema == _netgen_accepts(data, tmp_path / "fabric"), f"schema says {by_schema}"
