"""NG6xx: scoped settings (custom_config blocks, services.overrides) fit the fabric they are written for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import Finding, devices_text, error, register, warning
from netgen.context import DesignContext
from netgen.intent.custom import AmbiguousLayer, layered, parts_by_nos
from netgen.intent.scope import Scoped
from netgen.intent.services import AmbiguousOverride, effective_services
from netgen.topology.model import Device


def _scoped(ctx: DesignContext) -> list[tuple[str, str, Scoped]]:
    """(fabric-file path, what to call it, entry) for every scoped entry of the fabric file."""
    return [*((f"custom_config[{i}]", f"block {b.name!r}", b) for i, b in enumerate(ctx.fabric.custom_config)),
            *((f"services.overrides[{i}]", "override", o) for i, o in enumerate(ctx.fabric.services.overrides))]


@register
class ScopeNamesExist:
    code: ClassVar[str] = "NG601"
    title: ClassVar[str] = "A scope (custom_config, services.overrides) names switches and zones that exist"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        zones = {zone.id for zone in ctx.fabric.zones}
        for path, what, entry in _scoped(ctx):
            unknown = [name for name in entry.devices if name not in ctx.topology.devices]
            if unknown:
                yield error(self.code, f"{path}.devices",
                            f"{what} names switches the fabric does not have: {', '.join(unknown)}",
                            "use names as `netgen show` lists them")
            missing = [str(zone) for zone in entry.zones if zone not in zones]
            if missing:
                yield error(self.code, f"{path}.zones",
                            f"{what} names zones the fabric does not have: {', '.join(missing)}",
                            f"zones are {', '.join(str(z) for z in sorted(zones))}")


@register
class CustomBlocksReachTheirNos:
    code: ClassVar[str] = "NG602"
    title: ClassVar[str] = "Each part of a custom_config block applies to some switch running its NOS"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        takers: dict[str, list[str]] = {}  # part -> the NOSes whose renderer reads it (their bundles say)
        for nos, parts in parts_by_nos().items():
            for part in parts:
                takers.setdefault(part, []).append(nos)
        for index, block in enumerate(ctx.fabric.custom_config):
            scope = [d for d in ctx.topology.devices.values() if block.applies(d.role.value, d.zone, d.name)]
            for part, taking in takers.items():
                if getattr(block, part) is not None and not any(d.nos in taking for d in scope):
                    yield warning(self.code, f"custom_config[{index}].{part}",
                                  f"block {block.name!r}: its {part} reaches no switch: none of the"
                                  f" {len(scope)} in its scope runs {' or '.join(taking)}",
                                  f"widen the scope or drop {part}")


@register
class LayersAreUnambiguous:
    code: ClassVar[str] = "NG603"
    title: ClassVar[str] = "Two entries of one layer never both decide the same thing on a switch"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        blocks = list(ctx.fabric.custom_config)
        services = ctx.fabric.services
        if not blocks and not services.overrides:
            return
        clashes: dict[str, tuple[str, str, list[Device]]] = {}  # clash -> (subject, summary, switches)
        for device in ctx.topology.devices.values():
            role, zone, name = device.role.value, device.zone, device.name
            try:
                layered(blocks, role, zone, name)
            except AmbiguousLayer as exc:
                clashes.setdefault(f"block {exc.name}", ("custom_config", exc.summary, []))[2].append(device)
            try:
                effective_services(services, role, zone, name)
            except AmbiguousOverride as exc:
                clashes.setdefault(exc.key, ("services.overrides", exc.summary, []))[2].append(device)
        for subject, summary, devices in clashes.values():
            yield error(self.code, subject, f"{summary} {len(devices)} switch(es): {devices_text(devices)}",
                        "give one of them a narrower scope (the narrower entry wins), or merge them")
