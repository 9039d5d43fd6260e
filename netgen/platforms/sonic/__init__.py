"""SONiC renderer: config_db.json (templates/sonic/config_db/*.j2, one per feature) and frr.conf."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from netgen.checks import DesignContext
from netgen.platforms.base import RenderedFile, RenderError, register, template_env
from netgen.platforms.sonic.schema import check_config_db
from netgen.platforms.sonic.view import SonicView, build_view
from netgen.topology.model import Device

# One template per feature; each renders a JSON object of whole tables.
CONFIG_DB_PARTS = ("device_metadata", "ports", "interfaces", "qos_maps", "scheduling", "buffers", "pfcwd", "hash")


def render_config_db(view: SonicView) -> dict[str, Any]:
    env = template_env("sonic")
    tables: dict[str, Any] = {}
    for part in CONFIG_DB_PARTS:
        text = env.get_template(f"config_db/{part}.j2").render(v=view)
        try:
            fragment = json.loads(text)
        except json.JSONDecodeError as exc:  # a template bug: never write broken JSON
            raise RenderError(f"{view.hostname}: config_db/{part}.j2 produced invalid JSON: {exc}") from None
        overlap = tables.keys() & fragment.keys()
        if overlap:
            raise RenderError(f"{view.hostname}: config_db/{part}.j2 repeats tables {sorted(overlap)}")
        tables.update(fragment)
    return tables


class SonicRenderer:
    nos: ClassVar[str] = "sonic"

    def render_device(self, ctx: DesignContext, device: Device) -> list[RenderedFile]:
        view = build_view(ctx, device)
        config_db = render_config_db(view)
        frr = template_env("sonic").get_template("frr.conf.j2").render(v=view)
        return [
            RenderedFile("config_db.json", json.dumps(config_db, indent=2, sort_keys=True) + "\n"),
            RenderedFile("frr.conf", frr),
        ]


    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        """config_db.json against netgen's typed model of SONiC's YANG (schema.py); the RDMA hash
        extension is accepted only where the model's release declares it."""
        config_db = next(f for f in files if f.name == "config_db.json")
        rdma = ctx.model(device).capabilities.bth_dest_qp_hash
        return check_config_db(json.loads(config_db.content), rdma_hash=rdma)


register(SonicRenderer)
