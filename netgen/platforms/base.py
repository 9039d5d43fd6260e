"""The renderer plugin contract: one plugin per NOS, the `renderer` part of its bundle
(netgen/registry.py), looked up by the device's NOS: no if/elif in the core.

A plugin turns one device of a checked fabric into files. It builds a per-device view in Python
(every decision and every number) and hands it to its templates (syntax only).
"""

from __future__ import annotations

from typing import ClassVar, Protocol, cast

from netgen.context import DesignContext
from netgen.registry import NOS
from netgen.rendered import Prepared, RenderedFile
from netgen.topology.model import Device, Port


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


_PLUGIN_METHODS = ("prepare", "render", "check_device", "lldp_port_id")


def renderer(nos: str) -> RendererPlugin:
    """The renderer plugin of `nos` (its bundle's `renderer` part, imported on first use);
    NosRegistryError for a NOS not registered or a part that is no renderer plugin of it."""
    plugin = NOS.part(nos, "renderer")
    if getattr(plugin, "nos", None) != nos or not all(callable(getattr(plugin, m, None)) for m in _PLUGIN_METHODS):
        raise NOS.wrong_part(nos, "renderer", f"a renderer plugin whose nos is {nos!r} ({', '.join(_PLUGIN_METHODS)})")
    return cast(RendererPlugin, plugin)


def renderers() -> dict[str, RendererPlugin]:
    """The renderer plugin of every registered NOS, by NOS (the render's dispatch table)."""
    return {nos: renderer(nos) for nos in NOS.names("renderer")}
