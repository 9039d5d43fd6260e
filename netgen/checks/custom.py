"""NG6xx: custom configuration blocks (intent custom_config) fit the fabric they are written for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from netgen.checks.base import DesignContext, Finding, devices_text, error, register, warning
from netgen.intent.custom import PARTS_BY_NOS, AmbiguousLayer, layered
from netgen.topology.model import Device


@register
class CustomScopeNamesExist:
    code: ClassVar[str] = "NG601"
    title: ClassVar[str] = "A custom_config scope names switches and zones that exist"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        zones = {zone.id for zone in ctx.fabric.zones}
        for index, block in enumerate(ctx.fabric.custom_config):
            unknown = [name for name in block.devices if name not in ctx.topology.devices]
            if unknown:
                yield error(self.code, f"custom_config[{index}].devices",
                            f"block {block.name!r} names switches the fabric does not have: {', '.join(unknown)}",
                            "use names as `netgen show` lists them")
            missing = [str(zone) for zone in block.zones if zone not in zones]
            if missing:
                yield error(self.code, f"custom_config[{index}].zones",
                            f"block {block.name!r} names zones the fabric does not have: {', '.join(missing)}",
                            f"zones are {', '.join(str(z) for z in sorted(zones))}")


@register
class CustomBlocksReachTheirNos:
    code: ClassVar[str] = "NG602"
    title: ClassVar[str] = "Each part of a custom_config block applies to some switch running its NOS"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        for index, block in enumerate(ctx.fabric.custom_config):
            scope = [d for d in ctx.topology.devices.values() if block.applies(d.role.value, d.zone, d.name)]
            for nos, parts in PARTS_BY_NOS.items():
                for part in parts:
                    if getattr(block, part) is not None and not any(d.nos == nos for d in scope):
                        yield warning(self.code, f"custom_config[{index}].{part}",
                                      f"block {block.name!r}: its {part} reaches no switch: none of the"
                                      f" {len(scope)} in its scope runs {nos}",
                                      f"widen the scope or drop {part}")


@register
class CustomLayersAreUnambiguous:
    code: ClassVar[str] = "NG603"
    title: ClassVar[str] = "Blocks of one name and one layer never meet on a switch"

    def run(self, ctx: DesignContext) -> Iterator[Finding]:
        blocks = list(ctx.fabric.custom_config)
        if not blocks:
            return
        clashes: dict[str, list[Device]] = {}
        messages: dict[str, str] = {}
        for device in ctx.topology.devices.values():
            try:
                layered(blocks, device.role.value, device.zone, device.name)
            except AmbiguousLayer as exc:
                clashes.setdefault(exc.name, []).append(device)
                messages.setdefault(exc.name, str(exc))
        for name, devices in clashes.items():
            yield error(self.code, "custom_config", f"{messages[name]} ({len(devices)} switch(es):"
                        f" {devices_text(devices)})",
                        "give one of them a narrower scope (a block replaces only a wider one of its name)")
