"""The fake NOS's renderer plugin: a switch's name, ASN, loopback and cabled ports, through its one
template (templates/device.txt.j2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netgen.context import DesignContext
from netgen.rendered import Prepared, RenderedFile
from netgen.templating import template_env
from netgen.topology.model import Device, Port
from tests.support.fake_nos import BUNDLE, NAME


@dataclass(frozen=True, slots=True)
class FakeInputs:
    hostname: str
    asn: int
    loopback: str
    ports: tuple[tuple[str, str, str], ...]  # (port, peer, peer's port) of every cabled port


class FakeRenderer:
    nos: ClassVar[str] = NAME

    def prepare(self, ctx: DesignContext, device: Device) -> Prepared:
        ports = tuple((p.name, p.peer_device, p.peer_port) for p in ctx.topology.ports[device.name])
        return Prepared(device.name, FakeInputs(device.name, device.asn, str(device.loopback_ipv4), ports))

    def render(self, prepared: Prepared) -> list[RenderedFile]:
        inputs = prepared.inputs
        assert isinstance(inputs, FakeInputs)
        text = template_env(BUNDLE.templates).get_template("device.txt.j2").render(v=inputs)
        return [RenderedFile(f"{prepared.device}.txt", text)]

    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        return [] if files[0].content.startswith(f"hostname {device.name}\n") else ["no hostname line first"]

    def lldp_port_id(self, ctx: DesignContext, device: Device, port: Port) -> str:
        return port.name


RENDERER = FakeRenderer()
