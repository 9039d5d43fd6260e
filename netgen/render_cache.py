"""The render cache's keys: a device's render key, a digest of everything its files depend on (the
plugin's prepared inputs, netgen's code and templates, Jinja and Python), pickled to the same bytes
in every process.

An output directory's manifest keeps each device's key (netgen/output/manifest.py). A device whose
key matches the one DIR was written with is not rendered again: its files, verified unchanged, are
hard-linked into the new directory (copied where links cannot be made), so the output is the same
bytes a cold render writes and is still swapped in whole. The render decides what is kept, and
keys a whole fabric (netgen/platforms/render.py: fabric_key).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import io
import ipaddress
import operator
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from netgen.registry import NOS
from netgen.rendered import Prepared
from netgen.resources import PACKAGE
from netgen.templating import TEMPLATE_ROOT


@functools.cache
def code_digest() -> bytes:
    """What a render key must change with besides the device's inputs: netgen's code (a plugin's
    `render` is code), the templates, and the Jinja and Python that run them; for a NOS whose bundle
    lives outside netgen, its renderer's package and its template folder too (outside_code)."""
    digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}\0".encode())
    for root, pattern in ((PACKAGE, "*.py"), (Path(TEMPLATE_ROOT), "*"), *outside_code()):
        files = [root] if root.is_file() else root.rglob(pattern)
        for path in sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts):
            digest.update(f"{path.relative_to(root.parent if root.is_file() else root)}\0".encode()
                          + path.read_bytes() + b"\0")
    return digest.digest()


def outside_code() -> list[tuple[Path, str]]:
    """(folder or file, pattern) of what registered NOS bundles render with outside netgen's package
    and templates/: the top-level package of each renderer (the module itself when it has none),
    and each template folder. Nothing for the NOSes netgen ships."""
    found: set[tuple[Path, str]] = set()
    templates, package = Path(TEMPLATE_ROOT).resolve(), PACKAGE.resolve()
    for nos in NOS.names("renderer"):
        bundle = NOS.bundle(nos)
        folder = bundle.template_folder(Path(TEMPLATE_ROOT)).resolve()
        if not folder.is_relative_to(templates):
            found.add((folder, "*"))
        top = str(bundle.renderer).partition(":")[0].split(".")[0]
        spec = importlib.util.find_spec(top)
        if spec is None:
            continue
        where = [Path(p) for p in spec.submodule_search_locations or ()] or ([Path(spec.origin)] if spec.origin else [])
        found |= {(path.resolve(), "*.py") for path in where if not path.resolve().is_relative_to(package)}
    return sorted(found)


# How the stable pickler writes an object of each type (None: pickle's own way), worked out once per
# type. Dataclasses: class and field values read in one C call (pickle's own route for slotted
# dataclasses calls dataclasses.fields() per object, which was half the cost of a key). Addresses:
# class and integers (their own reduction formats each address as text, a third of the rest).
_Reducer = Callable[[Any], Any]
_REDUCERS: dict[type, _Reducer | None] = {}
_ADDRESSES = (ipaddress.IPv4Address, ipaddress.IPv6Address)
_INTERFACES = (ipaddress.IPv4Interface, ipaddress.IPv6Interface)
_NETWORKS = (ipaddress.IPv4Network, ipaddress.IPv6Network)


def _fields_of(cls: type) -> _Reducer:
    names = [f.name for f in dataclasses.fields(cls)]
    if not names:
        return lambda obj: (cls, ())
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (cls, (one(obj),))
    getter = operator.attrgetter(*names)
    return lambda obj: (cls, getter(obj))


def _reducer(cls: type) -> _Reducer | None:
    if cls not in _REDUCERS:
        reducer: _Reducer | None = None
        if dataclasses.is_dataclass(cls):
            reducer = _fields_of(cls)
        elif issubclass(cls, _INTERFACES):  # before addresses: an interface is an address too
            reducer = lambda obj: (cls, ((int(obj), obj.network.prefixlen),))  # noqa: E731
        elif issubclass(cls, _ADDRESSES):
            reducer = lambda obj: (cls, (int(obj),))  # noqa: E731
        elif issubclass(cls, _NETWORKS):
            reducer = lambda obj: (cls, ((int(obj.network_address), obj.prefixlen),))  # noqa: E731
        elif issubclass(cls, BaseModel):
            reducer = lambda obj: (str, (f"{type(obj).__qualname__}{obj.model_dump_json()}",))  # noqa: E731
        _REDUCERS[cls] = reducer
    return _REDUCERS[cls]


class StablePickler(pickle.Pickler):
    """Pickles the same value to the same bytes in every process: pydantic models as their JSON,
    dataclasses as their class and field values, addresses as integers. Exact sets never reach
    reducer_override (pickle writes them itself, in an order that follows the per-process string hash
    seed): prepared inputs hold sorted sequences instead, which test_render_cache checks across
    processes with different seeds."""

    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        reducer = _REDUCERS[cls] if cls in _REDUCERS else _reducer(cls)
        return NotImplemented if reducer is None else reducer(obj)


def render_key(nos: str, prepared: Prepared) -> str | None:
    """The device's render key (None: not cacheable). Equal keys mean equal files."""
    if not prepared.cacheable:
        return None
    buffer = io.BytesIO()
    StablePickler(buffer, protocol=5).dump((nos, prepared.device, prepared.inputs))
    return hashlib.sha256(code_digest() + buffer.getvalue()).hexdigest()
