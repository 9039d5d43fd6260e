"""SONiC's renderer plugin: config_db.json (built as data, one function per feature: config_db.py,
serialized once) and frr.conf (templates/sonic/frr.conf.j2), each device's from its view (view.py);
config_db.json checked against netgen's typed model of SONiC's YANG (schema.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from netgen.context import DesignContext
from netgen.intent.custom import CustomConfig
from netgen.nos.sonic import BUNDLE
from netgen.nos.sonic.config_db import config_db as build_config_db
from netgen.nos.sonic.config_db import serialized
from netgen.nos.sonic.view import SonicView, build_view, port_alias
from netgen.platforms.custom import (
    PROVENANCE_FILE,
    CustomConfigError,
    blocks_for,
    frr_problems,
    merge_config_db,
    merge_frr,
)
from netgen.rendered import Prepared, RenderedFile
from netgen.templating import template_env
from netgen.topology.model import Device, Port


@dataclass(frozen=True, slots=True)
class SonicInputs:
    view: SonicView
    blocks: tuple[CustomConfig, ...]  # custom_config with SONiC parts reaching the device, in layering order
    rdma_hash: bool  # the model's release takes the RDMA hash fields (what the YANG check accepts)


class SonicRenderer:
    nos: ClassVar[str] = "sonic"
    # its views read only what platforms/zone_inputs.py covers (tests/platforms/test_zone_inputs.py)
    zone_local: ClassVar[bool] = True

    def prepare(self, ctx: DesignContext, device: Device) -> Prepared:
        blocks = tuple(b for b in blocks_for(ctx.fabric.custom_config, device) if b.sonic_config_db or b.frr)
        inputs = SonicInputs(build_view(ctx, device), blocks, ctx.model(device).capabilities.bth_dest_qp_hash)
        # custom FRR lines are judged by the FRR installed here (vtysh --dryrun): never served from a cache
        return Prepared(device.name, inputs, cacheable=not any(b.frr for b in blocks))

    def render(self, prepared: Prepared) -> list[RenderedFile]:
        inputs = prepared.inputs
        assert isinstance(inputs, SonicInputs)
        view = inputs.view
        config_db = build_config_db(view)
        frr = template_env(BUNDLE.templates).get_template("frr.conf.j2").render(v=view)
        if not inputs.blocks:
            return [
                RenderedFile("config_db.json", serialized(config_db)),
                RenderedFile("frr.conf", frr),
            ]
        return self._with_custom(prepared.device, inputs.rdma_hash, config_db, frr, list(inputs.blocks))

    def _with_custom(self, device_name: str, rdma: bool, config_db: dict[str, Any], frr: str,
                     blocks: list[CustomConfig]) -> list[RenderedFile]:
        """netgen's files plus the custom blocks, each addition checked here so that a problem is
        reported as the block's (exit 2), not as a netgen bug; custom-config.json names the source
        of every added CONFIG_DB field and FRR block, for diffs and reviewers."""
        from netgen.nos.sonic.schema import check_config_db  # noqa: PLC0415  (see check_device)

        merged = merge_config_db(config_db, blocks, device_name)
        label = "/".join(b.name for b in blocks if b.sonic_config_db)
        if merged.provenance:
            before = set(check_config_db(config_db, rdma_hash=rdma))
            added = [p for p in check_config_db(merged.config, rdma_hash=rdma) if p not in before]
            if added:
                raise CustomConfigError(label, device_name, "SONiC's YANG models reject config_db.json with the"
                                        " block's rows: " + "; ".join(added[:5]))
        frr_blocks = [b for b in blocks if b.frr is not None]
        frr_text = merge_frr(frr, frr_blocks)
        unchecked = None
        if frr_blocks:
            verdict = frr_problems(frr_text)
            if verdict is None:
                unchecked = (f"{device_name}/frr.conf: custom_config FRR lines not checked (FRR's vtysh is not"
                             " installed here; apt-get install frr)")
            elif verdict:
                raise CustomConfigError("/".join(b.name for b in frr_blocks), device_name,
                                        "FRR rejects frr.conf with the block's lines (vtysh --dryrun): "
                                        + "; ".join(verdict))
        provenance = {"config_db": merged.provenance, "frr": [b.name for b in frr_blocks]}
        return [
            RenderedFile("config_db.json", serialized(merged.config)),
            RenderedFile("frr.conf", frr_text, unchecked),
            RenderedFile(PROVENANCE_FILE, json.dumps(provenance, indent=2, sort_keys=True) + "\n"),
        ]


    def check_device(self, ctx: DesignContext, device: Device, files: list[RenderedFile]) -> list[str]:
        """config_db.json against netgen's typed model of SONiC's YANG (schema.py); the RDMA hash
        extension is accepted only where the model's release declares it."""
        # imported where a SONiC file is checked: building its 60 pydantic models is a cost a
        # warm re-render that renders no SONiC switch (or one, in one worker) need not spend
        from netgen.nos.sonic.schema import check_config_db  # noqa: PLC0415

        config_db = next(f for f in files if f.name == "config_db.json")
        rdma = ctx.model(device).capabilities.bth_dest_qp_hash
        return check_config_db(orjson.loads(config_db.content), rdma_hash=rdma)

    def lldp_port_id(self, ctx: DesignContext, device: Device, port: Port) -> str:
        # SONiC's lldpmgrd runs `lldpcli configure ports <name> lldp portidsubtype local <alias>`
        # for every port that is up (sonic-buildimage dockers/docker-lldp/lldpmgrd): neighbours hear
        # the PORT alias config_db.json carries, not the port name
        return port_alias(ctx.model(device), port)


RENDERER = SonicRenderer()
