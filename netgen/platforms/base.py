"""The renderer plugin contract: one plugin per NOS, registered by name, no if/elif in the core.

A plugin turns one device of a checked fabric into files. It builds a per-device view in Python
(every decision and every number) and hands it to its templates (syntax only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import ClassVar, Protocol

import jinja2

from netgen.checks import DesignContext
from netgen.resources import TEMPLATES
from netgen.topology.model import Device

# templates/ sits beside the package in the source tree (the layout the project asked for); a
# wheel carries a copy inside the package (netgen/resources.py)
TEMPLATE_ROOT = TEMPLATES


@dataclass(frozen=True, slots=True)
class RenderedFile:
    name: str  # file name inside the device's output directory, e.g. "config_db.json"
    content: str
    unchecked: str | None = None  # why part of this file could not be checked here (the render says so)


class RenderError(Exception):
    """A rendered file failed its own syntax or model check: a netgen bug, never written out."""


class RenderInputError(Exception):
    """The fabric file asks for something that cannot be rendered (a custom block the NOS refuses, a
    secret reference that does not resolve): input, exit 2, never a netgen bug."""


class RendererPlugin(Protocol):
    nos: ClassVar[str]

    def render_device(self, ctx: DesignContext, device: Device) -> list[RenderedFile]: ...

    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        """Problems the target NOS would reject in these files (empty = accepted)."""
        ...


PLUGINS: dict[str, RendererPlugin] = {}


def register(factory: Callable[[], RendererPlugin]) -> Callable[[], RendererPlugin]:
    plugin = factory()
    if plugin.nos in PLUGINS:
        raise ValueError(f"duplicate renderer for {plugin.nos}")
    PLUGINS[plugin.nos] = plugin
    return factory


@cache
def template_env(nos: str) -> jinja2.Environment:
    """One compiled environment per NOS. StrictUndefined: a missing view field is a bug, not ''."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_ROOT / nos),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
