"""The renderer plugin contract: one plugin per NOS, registered by name, no if/elif in the core.

A plugin turns one device of a checked fabric into files. It builds a per-device view in Python
(every decision and every number) and hands it to its templates (syntax only).
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar, Protocol

import jinja2
import jinja2.bccache

from netgen.context import DesignContext
from netgen.resources import TEMPLATES, user_cache_dir, user_owned_dir
from netgen.topology.model import Device, Port

# templates/ sits beside the package in the source tree (the layout the project asked for); a
# wheel carries a copy inside the package (netgen/resources.py)
TEMPLATE_ROOT = TEMPLATES


@dataclass(frozen=True, slots=True)
class RenderedFile:
    name: str  # file name inside the device's output directory, e.g. "config_db.json"
    content: str
    unchecked: str | None = None  # why part of this file could not be checked here (the render says so)


@dataclass(frozen=True, slots=True)
class Prepared:
    """One device's render inputs. `cacheable`: False when the render also runs a check outside
    netgen whose verdict may change with the machine (FRR's parser for custom FRR lines)."""

    device: str
    inputs: object  # picklable and a plain value: frozen dataclasses, tuples, lists, dicts, pydantic models
    cacheable: bool = True


class RenderError(Exception):
    """A rendered file failed its own syntax or model check: a netgen bug, never written out."""


class RenderInputError(Exception):
    """The fabric file asks for something that cannot be rendered (a custom block the NOS refuses, a
    secret reference that does not resolve): input, exit 2, never a netgen bug."""


class RendererPlugin(Protocol):
    """`prepare` gathers everything a device's files depend on (its view, the custom blocks that
    reach it, the model flags the checks read) into one picklable value; `render` turns that value,
    and nothing else, into files. The render cache keys a device on its prepared value, so a plugin
    whose `render` read anything more would be served stale files.

    Optional: `zone_local = True` says `prepare` reads only what zone_inputs.py covers (the
    fabric-wide sections and what crosses zones; a zone switch's zone, an ATSW's own record, ports
    and peers), so a switch whose inputs are unchanged keeps its key without its view being built;
    absent means every view is built."""

    nos: ClassVar[str]

    def prepare(self, ctx: DesignContext, device: Device) -> Prepared: ...

    def render(self, prepared: Prepared) -> list[RenderedFile]: ...

    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        """Problems the target NOS would reject in these files (empty = accepted)."""
        ...

    def lldp_port_id(self, ctx: DesignContext, device: Device, port: Port) -> str:
        """The LLDP port ID this NOS sends out of `port`, as its neighbours hear it (the cabling
        checks compare what a neighbour hears with this)."""
        ...


def render_device(plugin: RendererPlugin, ctx: DesignContext, device: Device) -> list[RenderedFile]:
    return plugin.render(plugin.prepare(ctx, device))


PLUGINS: dict[str, RendererPlugin] = {}


def register(factory: Callable[[], RendererPlugin]) -> Callable[[], RendererPlugin]:
    plugin = factory()
    if plugin.nos in PLUGINS:
        raise ValueError(f"duplicate renderer for {plugin.nos}")
    PLUGINS[plugin.nos] = plugin
    return factory


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between runs. Jinja compiles netgen's templates into Python code
    once per process, which for EOS's 30 files is a cost worth saving: in each render worker, and in a
    warm re-render. Jinja checks each entry against its template's source (SHA-1) and its own
    version; the folder's name adds what else the code depends on (this module, which sets the
    environment's options, and the Python release). A folder that is not the user's own and private
    is not used (Jinja's own rule for its default folder), and a failed write is only a miss."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)

    @staticmethod
    def open() -> _CompiledTemplates | None:
        folder = user_cache_dir()
        if folder is None:
            return None
        try:
            digest = hashlib.sha256(f"{sys.version}\0{jinja2.__version__}\0".encode() + Path(__file__).read_bytes())
        except OSError:
            return None
        path = user_owned_dir(folder / f"templates-{digest.hexdigest()[:24]}", private=True)
        return None if path is None else _CompiledTemplates(str(path))


@cache
def template_env(nos: str) -> jinja2.Environment:
    """One compiled environment per NOS. StrictUndefined: a missing view field is a bug, not ''."""
    return jinja2.Environment(
        bytecode_cache=_CompiledTemplates.open(),
        loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / nos),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
