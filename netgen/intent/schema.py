"""JSON Schema export for editors (yaml-language-server) and CI linters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric
from netgen.intent.loader import load_catalog
from netgen.registry import NOS

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


# Fields naming a catalog model: an enum, so an editor completes them and a linter catches a typo.
MODEL_FIELDS = (("Zone", "rtsw_model"), ("Zone", "ctsw_model"), ("Aggregation", "atsw_model"))


def fabric_schema(models: Iterable[str] | None = None) -> dict[str, Any]:
    """`models`: the model names a fabric may use (default: the built-in catalog's; `netgen schema
    FABRIC` adds the fabric's own catalog)."""
    schema = Fabric.model_json_schema(mode="validation")
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "netgen fabric file"
    names = sorted(models if models is not None else load_catalog().models)
    for definition, field in MODEL_FIELDS:
        schema["$defs"][definition]["properties"][field]["enum"] = names
    return schema


def catalog_schema() -> dict[str, Any]:
    """A user catalog file. Its entries may `extends:` another model and then override only some
    fields, so no field of a model entry is required here; netgen checks the merged entry."""
    schema = Catalog.model_json_schema(mode="validation")
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "netgen platform catalog file"
    platform = schema["$defs"]["PlatformModel"]
    platform["properties"]["nos"]["enum"] = NOS.names()  # the registered NOSes (netgen/registry.py)
    platform["properties"]["extends"] = {
        "type": "string",
        "description": "Start from this model (built-in or earlier in this file) and override fields.",
    }
    for definition in schema["$defs"].values():  # the root still requires `models`
        definition.pop("required", None)
    return schema
