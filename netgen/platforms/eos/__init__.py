"""EOS renderer: one running-config per device (templates/eos/, one template per feature)."""

from __future__ import annotations

from typing import ClassVar

from netgen.checks import DesignContext
from netgen.platforms.base import RenderedFile, register, template_env
from netgen.platforms.custom import blocks_for, merge_eos
from netgen.platforms.eos.structure import check_eos_config
from netgen.platforms.eos.view import build_view
from netgen.topology.model import Device


class EosRenderer:
    nos: ClassVar[str] = "eos"

    def render_device(self, ctx: DesignContext, device: Device) -> list[RenderedFile]:
        text = template_env("eos").get_template("device.cfg.j2").render(v=build_view(ctx, device))
        # custom_config blocks after netgen's own blocks; the whole file is then checked as one
        text = merge_eos(text, blocks_for(ctx.fabric.custom_config, device), device.name)
        return [RenderedFile(f"{device.name}.cfg", text)]

    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        return check_eos_config(files[0].content)


register(EosRenderer)
