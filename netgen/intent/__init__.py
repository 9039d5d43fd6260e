"""Stage 1: the fabric intent (YAML -> validated pydantic models) and the platform catalog."""

from netgen.intent.catalog import Catalog, PlatformModel
from netgen.intent.errors import InputProblem, NetgenInputError
from netgen.intent.fabric import Fabric
from netgen.intent.loader import LoadedFabric, load_catalog, load_fabric

__all__ = [
    "Catalog",
    "Fabric",
    "InputProblem",
    "LoadedFabric",
    "NetgenInputError",
    "PlatformModel",
    "load_catalog",
    "load_fabric",
]
