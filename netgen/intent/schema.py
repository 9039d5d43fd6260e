"""JSON Schema export for editors (yaml-language-server) and CI linters."""

from __future__ import annotations

from typing import Any

from netgen.intent.catalog import Catalog
from netgen.intent.fabric import Fabric

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def fabric_schema() -> dict[str, Any]:
    schema = Fabric.model_json_schema(mode="validation")
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "netgen fabric file"
    return schema


def catalog_schema() -> dict[str, Any]:
    """A user catalog file. Its entries may `extends:` another model and then override only some
    fields, so no field of a model entry is required here; netgen checks the merged entry."""
    schema = Catalog.model_json_schema(mode="validation")
    schema["$schema"] = SCHEMA_DIALECT
    schema["title"] = "netgen platform catalog file"
    platform = schema["$defs"]["PlatformModel"]
    platform["properties"]["extends"] = {
        "type": "string",
        "description": "Start from this model (built-in or earlier in this file) and override fields.",
    }
    for definition in schema["$defs"].values():  # the root still requires `models`
        definition.pop("required", None)
    return schema
