"""EOS's renderer plugin: one running-config per device (templates/eos/, one template per feature)
from its view (view.py), checked by the shape check of structure.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netgen.context import DesignContext
from netgen.intent.custom import CustomConfig
from netgen.nos.eos import BUNDLE
from netgen.nos.eos.structure import check_eos_config
from netgen.nos.eos.view import EosView, build_view
from netgen.platforms.custom import blocks_for, merge_eos
from netgen.rendered import Prepared, RenderedFile
from netgen.templating import template_env
from netgen.topology.model import Device, Port


@dataclass(frozen=True, slots=True)
class EosInputs:
    view: EosView
    blocks: tuple[CustomConfig, ...]  # custom_config reaching the device, in layering order


class EosRenderer:
    nos: ClassVar[str] = "eos"
    # its views read only what platforms/zone_inputs.py covers (tests/platforms/test_zone_inputs.py)
    zone_local: ClassVar[bool] = True

    def prepare(self, ctx: DesignContext, device: Device) -> Prepared:
        return Prepared(device.name, EosInputs(build_view(ctx, device),
                                               tuple(blocks_for(ctx.fabric.custom_config, device))))

    def render(self, prepared: Prepared) -> list[RenderedFile]:
        inputs = prepared.inputs
        assert isinstance(inputs, EosInputs)
        text = template_env(BUNDLE.templates).get_template("device.cfg.j2").render(v=inputs.view)
        # custom_config blocks after netgen's own blocks; the whole file is then checked as one
        text = merge_eos(text, list(inputs.blocks), prepared.device)
        return [RenderedFile(f"{prepared.device}.cfg", text)]

    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        return check_eos_config(files[0].content)

    def lldp_port_id(self, ctx: DesignContext, device: Device, port: Port) -> str:
        # EOS sends the interface name (port ID subtype interfaceName): `show lldp neighbors detail`
        # on a neighbour lists it as interfaceId_v2 (ANTA's VerifyLLDPNeighbors test data)
        return port.name


RENDERER = EosRenderer()
